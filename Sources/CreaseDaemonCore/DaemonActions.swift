import CreaseCore

/// What `DaemonCore` decided, in order, for the shell to perform: bytes to write to
/// clients, connections to close, trace records, log lines.
///
/// One value is reused across calls (`removeAll` keeps the capacity), and every
/// write's bytes live in one shared buffer, so deciding an event allocates nothing.
/// A push fanned out to many subscribers is encoded once: each recipient's `write`
/// names the same range.
public struct DaemonActions {
    public enum Action: Equatable {
        /// Send `bytes[range]` to the client.
        case write(client: Int, range: Range<Int>)
        /// Stop reading from the client and close it once its writes are done.
        case closeAfterWrites(client: Int)
        /// A client just connected may send: start reading it.
        case startReading(client: Int)
        /// A client just connected may not: close it once its refusal is written (it was told why).
        case refuse(client: Int)
        case record(TraceEntry)
        /// A batch was published: the trace may go to the disk.
        case flushTrace
        /// Reopen the trace (`reason` for the log): for a client's `trace rotate`, then
        /// answer with the `traceReopened` input; for a signal, nobody to answer.
        /// Boxed: rare, and inline it made every action larger.
        indirect case reopenTrace(reason: String, client: Int?, id: JSONValue?)
        case log(LogLevel, String)
        /// Sample the gauges and answer with the `gauges` input at once (figures wait for it).
        case sampleGauges
        /// The stats, as one JSON object (`bytes[range]`), for the metrics file.
        case metrics(Range<Int>)
        /// Stopping: accept no more clients, take the socket's name away, tell systemd `status`.
        case stopAccepting(status: String)
        /// Stopping: close the trace (its last records on disk), then the trace mode is `.off`.
        case closeTrace
        /// Stopping: close every connection once its writes are out; after `graceMs`, close
        /// those still open; the loop then ends.
        case closeConnections(graceMs: Int)
    }

    /// What the trace sink records.
    public enum TraceEntry: Equatable {
        case event(EventRecord)
        /// The layouts of the events recorded since the last `queued` were queued to every
        /// subscriber at `tNs` (each event's record carries its latency).
        case queued(tNs: UInt64)
        /// A `load` read at `tNs`: what it put in place (the record's own `t` is the sink's to set).
        /// Boxed, as is an observation's verdict: the list is copied and emptied per event, and
        /// an inline profile, app and state made every action as large as a load.
        indirect case load(tNs: UInt64, TraceLoad)
        case batch(firstSeq: Int, lastSeq: Int)
        case mark(seq: Int, tNs: UInt64, label: String)
        /// A frame judge's verdict on the device's screen, sent by `client` at `tNs`.
        indirect case frame(seq: Int, tNs: UInt64, client: Int, verdict: FrameVerdict)
        /// An `observe` command as sent (`line` in `bytes`) and the verdict it got.
        /// `line` is the command as read, or without its `observed` when `observedAs` keeps the look as a reference.
        indirect case observation(tNs: UInt64, client: Int, line: Range<Int>, result: ConformanceResult, captured: ClosedRange<UInt64>?,
                                  observedAs: ObservedReference?)
    }

    public private(set) var list: [Action] = []
    /// The bytes that `write` and `record(.event)` name.
    public var bytes: [UInt8] = []
    /// Log lines above this level are not even formatted.
    public let logThreshold: LogLevel

    public init(logThreshold: LogLevel) {
        self.logThreshold = logThreshold
        list.reserveCapacity(256)
        bytes.reserveCapacity(64 * 1024)
    }

    public var isEmpty: Bool { list.isEmpty }

    /// The actions every round trip performs, in plain values.
    public enum Frequent {
        case write(client: Int, range: Range<Int>)
        case event(EventRecord)
        case queued(tNs: UInt64)
        case flushTrace
    }

    /// The action at `i` when it is one of the `Frequent` kinds: read in place, where taking
    /// the action out of the list copied (and later destroyed) the whole enum.
    @inlinable
    public func frequent(at i: Int) -> Frequent? {
        list.withUnsafeBufferPointer { actions in
            switch actions[i] {
            case .write(let client, let range): .write(client: client, range: range)
            case .record(.event(let record)): .event(record)
            case .record(.queued(let tNs)): .queued(tNs: tNs)
            case .flushTrace: .flushTrace
            default: nil
            }
        }
    }

    /// The action at `i` as text, what it writes or records included (a recording's, a test's).
    public func text(at i: Int) -> String {
        switch list[i] {
        case .write(let client, let range): "write \(client): " + String(decoding: bytes[range], as: UTF8.self)
        case .record(.event(let e)):
            "record event \(e.seq) t \(e.tNs) client \(e.client) digest \(Digest.hex(e.digest)): "
                + String(decoding: bytes[e.line], as: UTF8.self) + (e.layout.map { " layout " + String(decoding: bytes[$0], as: UTF8.self) } ?? "")
        case .record(.observation(let tNs, let client, let line, let result, let captured, let observedAs)):
            "record observation t \(tNs) client \(client) \(result) \(captured.map { "\($0)" } ?? "-")"
                + (observedAs.map { " as \($0.view.rawValue) of \(Digest.hex($0.layout))" } ?? "") + ": " + String(decoding: bytes[line], as: UTF8.self)
        // By name, not as Swift prints it: a recording's text does not name the module.
        case .log(let level, let message): "log \(level.name): \(message)"
        // Its bytes, not their place in the buffer (which depends on what came before, in other calls).
        case .metrics(let range): "metrics: " + String(decoding: bytes[range], as: UTF8.self)
        case let other: "\(other)"
        }
    }

    /// Empties the list. The bytes stay until they pass `bytesKept`: every action names its
    /// bytes by range, and emptying the buffer per call cost ~80 instructions per round trip.
    public mutating func removeAll() {
        list.empty()
        if bytes.count > DaemonActions.bytesKept { bytes.removeAll(keepingCapacity: bytes.capacity <= 1 << 20) }
    }

    static let bytesKept = 48 * 1024   // inside the 64 KiB reserved

    /// Sends to `client` what was appended to `bytes` since `start`; joins the
    /// previous write when it goes to the same client and ends where this begins, so
    /// a batch's replies to one client leave in one write.
    mutating func write(client: Int, from start: Int) {
        let end = bytes.count
        guard end > start else { return }
        if case .write(let last, let range)? = list.last, last == client, range.upperBound == start {
            list[list.count - 1] = .write(client: client, range: range.lowerBound..<end)
        } else {
            list.append(.write(client: client, range: start..<end))
        }
    }

    /// Sends `bytes[range]` (already encoded) to `client` too.
    mutating func write(client: Int, range: Range<Int>) {
        list.append(.write(client: client, range: range))
    }

    /// Appends a line of bytes `bytes` and returns where it is.
    mutating func keep(_ line: UnsafeRawBufferPointer) -> Range<Int> {
        let start = bytes.count
        bytes.append(contentsOf: line)
        return start..<bytes.count
    }

    mutating func append(_ action: Action) { list.append(action) }

    mutating func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= logThreshold else { return }
        list.append(.log(level, message()))
    }
}

extension Array {
    /// Empties the array and keeps its storage. `removeAll(keepingCapacity: true)` goes through
    /// `replaceSubrange` and a generic destroy, about 150 instructions however short the array;
    /// the loop's lists (actions, a batch's events and replies) mostly hold one to three
    /// elements, which `removeLast` takes for a few dozen.
    @inline(__always)
    mutating func empty() {
        if count <= 4 {
            while !isEmpty { removeLast() }
        } else {
            removeAll(keepingCapacity: true)
        }
    }
}

/// An applied event's trace record, the one form it has from the core's decision to the
/// sink (which stages it for the writer thread in the binary form of `PendingRecords`):
/// `line` is the event's line as received and `layout` its layout line (`--trace-layouts`,
/// when the event changed the layout), ranges of the bytes they travel with
/// (`DaemonActions.bytes`). `tNs` is when its line was read.
public struct EventRecord: Equatable, Sendable {
    public var seq: Int
    public var tNs: UInt64
    public var client: Int
    public var line: Range<Int>
    public var layout: Range<Int>?
    public var digest: UInt64

    public init(seq: Int, tNs: UInt64, client: Int, line: Range<Int>, layout: Range<Int>?, digest: UInt64) {
        self.seq = seq
        self.tNs = tNs
        self.client = client
        self.line = line
        self.layout = layout
        self.digest = digest
    }
}
