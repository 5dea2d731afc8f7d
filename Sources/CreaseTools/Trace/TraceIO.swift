#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation

/// A check failed (exit 1): the message is printed as is.
struct CheckFailed: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The file side of the trace commands: load, write, time.
enum TraceIO {
    /// Reads a trace; a file whose header cannot be read (unknown version, not a trace) is an input error (exit 2).
    static func load(_ path: String) throws -> TraceFile {
        let bytes = try readWhole(path)
        do { return try TraceFile(bytes: bytes) } catch {
            throw UsageError("\(path): \(error)")
        }
    }

    /// A trace for a command that only reads it (info, glitches, report, replay, …): a
    /// complete line that is no record is skipped and named on stderr, never the whole file
    /// refused. Returns the file and the lines skipped. A command that writes a trace (rebase,
    /// slice, minimize) uses `load`, which refuses, so it never drops a line.
    static func loadForReading(_ path: String) throws -> (file: TraceFile, skipped: [TraceError]) {
        var file = try load(path)
        file.skipsBadRecords = true
        let skipped = file.badRecords()
        warnSkipped(skipped, name: path)
        return (file, skipped)
    }

    /// Names the lines a reader skipped, the first ten of them.
    static func warnSkipped(_ skipped: [TraceError], name: String) {
        for e in skipped.prefix(10) { Console.err("warning: \(Console.printable(name)): \(e): this line is skipped") }
        if skipped.count > 10 { Console.err("warning: \(Console.printable(name)): \(skipped.count - 10) more lines are no record and are skipped") }
    }

    /// The file's bytes: a regular file (or `-`) of at most `InputFile.traceLimit` bytes.
    static func readWhole(_ path: String) throws -> [UInt8] {
        try Inputs.readFile(path, what: "trace", limit: InputFile.traceLimit)
    }

    /// Writes to `path`, or to stdout when it is nil or `-`. A file this command read is
    /// refused unless `replacingInput` (`trace rebase --in-place`): a trace written over by
    /// its own report could never be recorded again.
    static func write(_ bytes: [UInt8], to path: String?, replacingInput: Bool = false) throws {
        guard let path, path != "-" else {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do { try OutputFile.write(bytes, to: path, inputs: replacingInput ? [] : Inputs.read) } catch { throw UsageError(error.message) }
    }

    /// Prints a cut tail's warning on stderr.
    static func warnIfCut(_ file: TraceFile, name: String) {
        if let w = file.cutWarning { Console.err("warning: \(name): \(w)") }
    }

    static func monotonicNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func describe(_ d: Divergence) -> [String] {
        var lines = ["divergence at \(d.summary)"]
        if case .verdict(let recorded, let replayed) = d.kind {
            // What the two sides disagree on, not everything both list.
            let onlyRecorded = recorded.differences.filter { !replayed.differences.contains($0) }
            let onlyReplayed = replayed.differences.filter { !recorded.differences.contains($0) }
            if onlyRecorded.isEmpty && onlyReplayed.isEmpty {
                lines.append("both list the same \(recorded.differences.count) difference\(recorded.differences.count == 1 ? "" : "s") from the layout")
            }
            for (name, list) in [("only recorded", onlyRecorded), ("only replayed", onlyReplayed)] where !list.isEmpty {
                lines.append("\(name):")
                lines += list.prefix(LayoutDiff.defaultLimit).map { "  \($0)" }
                if list.count > LayoutDiff.defaultLimit { lines.append("  … \(list.count - LayoutDiff.defaultLimit) more") }
            }
        } else if !d.differences.isEmpty {
            lines.append("layout difference (recorded -> replayed)\(d.differences.count >= LayoutDiff.defaultLimit ? ", the first \(LayoutDiff.defaultLimit) fields" : ""):")
            lines += d.differences.map { "  \($0)" }
        } else if d.kind == .digest {
            lines.append("(the trace holds no layout for this seq; record with --trace-layouts to see the fields)")
        }
        return lines
    }
}

/// Sleeps until points on an absolute schedule, so waits never add up to drift.
struct Pacer {
    let startNs = TraceIO.monotonicNs()
    /// 0 means as fast as possible.
    let speed: Double

    func wait(untilOffsetNs offset: UInt64) {
        guard speed > 0 else { return }
        Pacer.sleep(untilMonotonicNs: startNs + UInt64(Double(offset) / speed))
    }

    static func sleep(untilMonotonicNs target: UInt64) {
        var ts = timespec(tv_sec: Int(target / 1_000_000_000), tv_nsec: Int(target % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// `max` (or absent) → 0; otherwise a positive factor.
    static func speed(_ text: String?) throws -> Double {
        guard let text, text != "max" else { return 0 }
        guard let v = Double(text), v > 0, v.isFinite else { throw UsageError("--speed takes max or a positive number, not \"\(text)\"") }
        return v
    }
}

/// A client that streams lines into a daemon's socket the way a rig does, while a
/// reader thread collects the replies (so a long stream never fills the daemon's queue for us).
final class SocketStreamer: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSCondition()
    private var replies: [JSONValue] = []
    private var closed = false
    private var outBuffer: [UInt8] = []
    /// When the last reply arrived (monotonic seconds), under `lock`.
    private var lastArrival = 0.0

    /// How long the connect, a write, or an awaited reply may take.
    let timeout: Double

    init(path: String, timeout: Double = DaemonConnection.defaultTimeout) throws {
        self.timeout = timeout
        // Unreachable is a failed run (exit 1), as for send, watch and replay --to; not bad input.
        do { fd = try UnixSocket.connect(path, timeoutSeconds: timeout) } catch { throw CheckFailed(error.description) }
        let reader = Thread { [self] in self.readReplies() }
        reader.start()
    }

    deinit { Glibc.close(fd) }

    /// Queues one line (a newline is added); sent by `flush()` or when the buffer grows.
    func send(_ line: [UInt8]) throws {
        outBuffer.append(contentsOf: line)
        outBuffer.append(0x0A)
        if outBuffer.count >= 1 << 16 { try flush() }
    }

    func flush() throws {
        var offset = 0
        while offset < outBuffer.count {
            let n = outBuffer.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { throw CheckFailed("the daemon read nothing from us for \(Clock.text(timeout))") }
                throw CheckFailed("the daemon closed the connection: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
        outBuffer.removeAll(keepingCapacity: true)
    }

    /// Sends a command and waits for the reply carrying `id`.
    func request(_ command: [UInt8], id: String) throws -> JSONValue { try request(command, id: .string(id)) }

    /// Sends a line and waits for the reply carrying `id` (a string or a number).
    func request(_ command: [UInt8], id: JSONValue) throws -> JSONValue {
        // Its reply comes after what has come so far: only those are searched, so a long
        // session of requests stays linear.
        lock.lock()
        let from = replies.count
        lock.unlock()
        try send(command)
        try flush()
        lock.lock()
        defer { lock.unlock() }
        // Replies to what was streamed before may still be coming: the deadline is for the
        // daemon to show progress (any reply), not for this one reply alone.
        lastArrival = max(lastArrival, Clock.seconds())
        while true {
            if let r = replies[from...].first(where: { $0["id"] == id }) { return r }
            if closed { throw CheckFailed("the daemon closed the connection before answering \(id)") }
            // Woken or timed out, the loop looks again: a reply may have come, or moved the deadline.
            let left = lastArrival + timeout - Clock.seconds()
            guard left > 0 else { throw CheckFailed("no answer to \(id): the daemon sent nothing for \(Clock.text(timeout))") }
            _ = lock.wait(until: Date().addingTimeInterval(left))
        }
    }

    /// Every reply so far, in order.
    func collected() -> [JSONValue] {
        lock.lock()
        defer { lock.unlock() }
        return replies
    }

    private func readReplies() {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var pending: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            // EAGAIN: SO_RCVTIMEO passed with nothing to read; `request` keeps the deadlines.
            if n < 0, errno == EINTR || errno == EAGAIN { continue }
            if n <= 0 { break }
            pending.append(contentsOf: buffer[0..<n])
            var parsed: [JSONValue] = []
            while let nl = pending.firstIndex(of: 0x0A) {
                if let v = try? JSON.parse(pending[..<nl]) { parsed.append(v) }
                pending.removeSubrange(...nl)
            }
            // A line that never ends is no answer: it neither counts as progress nor grows without bound.
            if pending.count > DaemonConnection.lineLimit { break }
            guard !parsed.isEmpty else { continue }
            lock.lock()
            replies += parsed
            lastArrival = Clock.seconds()
            lock.broadcast()
            lock.unlock()
        }
        lock.lock()
        closed = true
        lock.broadcast()
        lock.unlock()
    }

    func shutdownWrites() { Glibc.shutdown(fd, Int32(SHUT_WR)) }
}
