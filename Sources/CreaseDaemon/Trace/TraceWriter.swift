#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// The trace file writer (contract section 6). The loop thread only encodes records
/// into a queue; a writer thread writes, fsyncs and rotates, so a slow or full disk
/// never blocks the loop. When writing fails the daemon keeps serving: records are
/// counted lost, the failure is logged once, and about once a second a probe carries
/// the engine's state to the writer, which, once a write succeeds, marks the gap with
/// a `gap` record holding that state, so the rest of the file replays on from there.
/// A file that lost its name (its directory removed) fails the same way, and the probe
/// that succeeds begins a new file.
///
/// Properties marked `@exclusivity(unchecked)` are touched per event, only from the loop
/// thread, and no access to one overlaps another: the runtime's checks cost more than the
/// record's lock.
public final class TraceWriter: TraceSink {
    public let directory: String
    /// The file records go to now.
    public private(set) var path: String
    private let options: TraceWriterOptions
    private let context: TraceContext
    private let daemon: String
    private let config: JSONValue
    private let queue: TraceQueue
    private let clock: () -> UInt64
    /// The monotonic clock at `t = 0`.
    private let origin: UInt64
    private let startSeconds: Int
    private let pid: Int32
    /// The file's number in the run (0 first): it moves on when the loop rotates or the
    /// writer thread begins a file after a gap (`TraceQueue.part`).
    @exclusivity(unchecked) private var part = 0
    @exclusivity(unchecked) private var fileBytes: UInt64
    /// `fileBytes` when the current file was opened (its header): more means it holds records.
    private var openedBytes: UInt64 = 0
    private var fileStartT: UInt64 = 0
    /// The engine as the daemon last handed it (at start, load and reopen, and after a batch
    /// when a rotation is due or the trace is failing): what a rotated file's header and a
    /// gap record hold.
    private var state: Engine
    @exclusivity(unchecked) private var health = Health.writing
    /// Events recorded whose layout is not yet queued: their entries (`PendingRecords`) wait
    /// here for their latency (`eventsQueued`), from `stagedEvents.start` on. The buffer is
    /// reused, and emptied only past `stagedBytesKept`: emptying it per batch cost ~80
    /// instructions.
    private let staged = PendingRecords()
    @exclusivity(unchecked) private var stagedEvents = StagedEvents()

    /// What a batch's hand-off needs of the events staged, without reading their entries.
    private struct StagedEvents {
        /// Where the first entry opens in `staged`.
        var start = 0
        var count = 0
        var firstT: UInt64 = 0
        var lastT: UInt64 = 0
        var lastSeq = 0
    }

    enum Health {
        case writing
        case failing(epoch: Int, lastProbeT: UInt64)
        /// A probe is queued; records go after it.
        case probing(epoch: Int)

        var isWriting: Bool {
            if case .writing = self { return true }
            return false
        }
    }

    /// Creates the directory and the first file, synchronously (this is startup), and starts the writer thread.
    public init(context: TraceContext, options: TraceWriterOptions, directory: String,
                files: any TraceFileSystem = PosixTraceFileSystem(), clock: @escaping () -> UInt64 = { uv_hrtime() }) throws {
        self.context = context
        self.options = options
        self.directory = directory
        self.clock = clock
        let origin = context.originNs ?? clock()
        self.origin = origin
        startSeconds = TraceFileName.now().seconds
        pid = getpid()
        state = context.engine
        try TraceDirectoryMaker.make(directory)
        path = "\(directory)/\(TraceFileName.make(startSeconds: startSeconds, pid: pid, part: 0))"
        let daemon = "creased \(context.daemonVersion)"
        let config = (try? JSON.parse(context.configJSON)) ?? .object([])
        self.daemon = daemon
        self.config = config
        let labels = context.labels
        let pid = self.pid
        let (firstHeader, firstIndex) = TraceWriter.header(daemon: daemon, config: config, part: 0, reason: context.resumedFrom == nil ? "start" : "resume",
                                                           labels: labels, layouts: options.layouts, origin: origin, t: 0, engine: context.engine,
                                                           path: path, pid: pid, resumedFrom: context.resumedFrom)
        var first = firstHeader
        if options.layouts { TraceEncoding.appendLayout(seq: context.engine.seq, layout: context.engine.layoutJSON(), to: &first) }
        let fd: Int32
        let fileSystem = files, firstPath = path
        switch first.withUnsafeBytes({ fileSystem.create(firstPath, header: $0) }) {
        case .success(let f): fd = f
        case .failure(let e): throw e
        }
        fileBytes = UInt64(first.count)
        openedBytes = fileBytes
        queue = TraceQueue(path: path, durableSeq: context.engine.seq)
        let index = TraceIndexFile(directory: directory, log: context.log)
        index.append(firstIndex)
        let worker = TraceWriterThread(queue: queue, files: files, options: options, directory: directory, fd: fd, length: first.count,
                                       wake: context.wake, index: index, headerFor: { engine, t, reason, part, path in
                                           TraceWriter.header(daemon: daemon, config: config, part: part, reason: reason, labels: labels,
                                                              layouts: options.layouts, origin: origin, t: t, engine: engine, path: path, pid: pid)
                                       })
        startThread(name: "trace writer") { worker.run() }
    }

    /// The header line of a file beginning at `path`, and its line for the directory's index.
    static func header(daemon: String, config: JSONValue, part: Int, reason: String, labels: [Label], layouts: Bool, origin: UInt64,
                       t: UInt64, engine: Engine, path: String, pid: Int32,
                       resumedFrom: TraceHeader.ResumedFrom? = nil) -> (header: [UInt8], index: [UInt8]) {
        let now = TraceFileName.now()
        let started = TraceFileName.iso8601(seconds: now.seconds, millis: now.millis)
        var header = TraceHeader(daemon: daemon, started: started, part: part, reason: reason, labels: labels, config: config,
                                 layouts: layouts, monotonicOrigin: origin, t: t, engine: engine)
        header.resumedFrom = resumedFrom
        var bytes = header.encode()
        bytes.append(0x0A)
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let index = TraceIndexEntry(file: file, started: started, pid: Int(pid), part: part, reason: reason, seq: engine.seq, labels: labels)
        return (bytes, index.encode())
    }

    private func time(_ tNs: UInt64) -> UInt64 { tNs >= origin ? tNs - origin : 0 }

    // MARK: TraceSink

    /// Stages the event, and its layout line with `--trace-layouts`, until its layout is
    /// queued (`eventsQueued`).
    public func recordEvent(_ e: EventRecord, in bytes: UnsafeRawBufferPointer) {
        let t = time(e.tNs)
        let entry = staged.count
        staged.appendEvent(seq: e.seq, t: t, readNs: e.tNs, client: e.client, line: UnsafeRawBufferPointer(rebasing: bytes[e.line]), digest: e.digest)
        if let layout = e.layout { staged.appendLayout(seq: e.seq, layout: UnsafeRawBufferPointer(rebasing: bytes[layout]), toEntryAt: entry) }
        if stagedEvents.count == 0 { stagedEvents.firstT = t }
        stagedEvents.count += 1
        stagedEvents.lastT = t
        stagedEvents.lastSeq = e.seq
    }

    public var recordsLayouts: Bool { options.layouts }

    /// The engine after these events is copied into `state` only when something will read
    /// it: a gap record (while the trace is failing, before the records, as a probe after
    /// them holds it) or a rotation's header.
    ///
    /// The whole batch is handed over under one lock, with the trace's health settled once:
    /// the staged entries, their latencies set, go into the queue in one copy, and the writer
    /// thread encodes them. Only a queue at its limit takes them one at a time, so the
    /// records past the limit are counted lost.
    public func eventsQueued(atNs queuedNs: UInt64, state engineNow: () -> Engine) {
        let batch = stagedEvents
        guard batch.count > 0 else { return }
        var refreshed = false
        func refreshState() {
            guard !refreshed else { return }
            state = engineNow()
            refreshed = true
        }
        if !health.isWriting { refreshState() }
        let entriesSize = staged.count - batch.start
        let recordBytes = staged.settle(from: batch.start, queuedNs: queuedNs)
        var outcome = HandOff()
        let queue = self.queue
        queue.condition.lock()
        var kept = 0
        if admit(queue, t: batch.firstT, &outcome) {
            if queue.queuedBytes + entriesSize <= options.queueLimitBytes {
                queue.tail.append(staged, batch.start..<staged.count)
                queue.queuedBytes += entriesSize
                fileBytes += recordBytes
                kept = batch.count
            } else {
                kept = handOffToTheLimit(queue, from: batch.start, &outcome)
            }
            queue.tailRecords += kept
            wakeWriterIfDue(queue)
        }
        let lost = batch.count - kept
        if lost > 0 {
            queue.lostTotal += UInt64(lost)
            queue.lostSinceGood += lost
        }
        queue.encodedSeq = batch.lastSeq
        outcome.probe = probeDue(t: batch.lastT)
        queue.condition.unlock()
        if staged.count > TraceWriter.stagedBytesKept { staged.removeAll(keepingAtMost: 1 << 20) }
        stagedEvents = StagedEvents(start: staged.count)
        // The trace began failing in these records: a later probe's gap holds the state after them.
        if !health.isWriting { refreshState() }
        if outcome.calledFor { report(outcome, t: batch.lastT) }
        // Rotations wait for the events' records, so a new file's header holds the state after the last of them.
        // A file begun by a command may carry a t later than events read in the same chunk.
        let lastT = batch.lastT
        if options.rotateSeconds > 0, lastT > fileStartT, lastT - fileStartT >= options.rotateSeconds * 1_000_000_000 {
            refreshState()
            rotate(reason: "time", t: lastT)
        } else if options.rotateBytes > 0, fileBytes >= options.rotateBytes {
            refreshState()
            rotate(reason: "size", t: lastT)
        }
    }

    /// Under the lock, with the queue near its limit: hands the staged entries over one at a
    /// time while the queue is within its limit (passing it fails the trace, and `admit`
    /// then refuses the rest). Returns how many went.
    private func handOffToTheLimit(_ queue: TraceQueue, from start: Int, _ outcome: inout HandOff) -> Int {
        var kept = 0
        var at = start
        while at < staged.count {
            let entry = staged.entry(at: at)
            if queue.queuedBytes > options.queueLimitBytes, !queue.failing, !admit(queue, t: entry.t ?? 0, &outcome) { break }
            queue.tail.append(staged, at..<(at + entry.size))
            queue.queuedBytes += entry.size
            fileBytes += UInt64(entry.fileBytes)
            kept += 1
            at += entry.size
        }
        return kept
    }

    public func recordLoad(tNs: UInt64, load: TraceLoad, state: Engine) {
        self.state = state
        var record = load
        record.t = time(tNs)
        let layout = options.layouts ? state.layoutJSON() : nil
        append(t: record.t, seq: load.seq) { out in
            TraceEncoding.appendLoad(record, to: &out)
            if let layout { TraceEncoding.appendLayout(seq: load.seq, layout: layout, to: &out) }
        }
    }

    public func recordBatch(firstSeq: Int, lastSeq: Int) {
        append(t: time(clock())) { TraceEncoding.appendBatch(first: firstSeq, last: lastSeq, to: &$0) }
    }

    public func recordMark(seq: Int, tNs: UInt64, label: String) {
        let t = time(tNs)
        append(t: t, awaited: true) { TraceEncoding.appendMark(seq: seq, t: t, label: label, to: &$0) }
        flush()
    }

    public func recordFrame(seq: Int, tNs: UInt64, client: Int, verdict: FrameVerdict) {
        let t = time(tNs)
        append(t: t, awaited: true) { TraceEncoding.appendFrame(seq: seq, t: t, client: client, verdict: verdict, to: &$0) }
        flush()
    }

    public func recordObservation(tNs: UInt64, client: Int, commandLine: UnsafeRawBufferPointer, result: ConformanceResult,
                                  captured: ClosedRange<UInt64>?, observedAs: ObservedReference?) {
        let t = time(tNs)
        // On the trace's clock, as `t`, so a replay judges the capture exactly as the daemon did.
        let span = captured.map { time($0.lowerBound)...time($0.upperBound) }
        append(t: t, awaited: true) {
            TraceEncoding.appendObservation(t: t, client: client, command: commandLine, result: result, captured: span, observedAs: observedAs, to: &$0)
        }
    }

    /// How long the writer gathers records before writing them (not under --fsync always):
    /// at most this much is lost to a kill -9, beyond what was being written.
    static let gatherSeconds = 0.005

    /// Staged bytes past which the staging buffer is emptied after a batch (it is reused until then).
    static let stagedBytesKept = 32 * 1024

    /// Queued bytes past which a record wakes the writer without waiting for a flush point.
    static let eagerWakeBytes = 256 << 10

    public func flush() {
        guard options.fsync == .always else { return }
        queue.withLock { q in
            // Records counted lost here (the trace is failing) wake the writer too: it
            // publishes their seq as handled, so their replies go out.
            if q.writerWaiting, q.tailRecords > 0 || q.owesDurable { q.condition.signal() }
        }
    }

    public func reopen(reason: String, state: Engine) throws -> String {
        self.state = state
        // Normally the daemon publishes first; should events still wait, they go into the old file.
        eventsQueued(atNs: clock()) { state }
        // A file that holds no record yet is already the new file a rotation asks for: a flood
        // of rotations coalesces into it instead of queueing a header (and a file) each.
        guard fileBytes > openedBytes else { return path }
        rotate(reason: reason, t: time(clock()))
        return path
    }

    public var durableSeq: Int? {
        guard options.fsync == .always else { return nil }
        return queue.withLock { $0.durableSeq }
    }

    public var durableAwaitedRecords: Int? {
        guard options.fsync == .always else { return nil }
        return queue.withLock { $0.durableAwaitedRecords }
    }

    public var figures: TraceFigures {
        queue.withLock { q in
            TraceFigures(file: q.path, failure: q.failing ? q.failureReason : nil, fsync: options.fsync.rawValue,
                         records: Int(q.recordsWritten), bytes: Int(q.bytesWritten), lost: Int(q.lostTotal), gaps: q.gapsWritten,
                         files: part + 1,
                         removed: options.keepBytes > 0 || options.keepDays > 0 ? .init(files: q.removedFiles, bytes: Int(q.removedBytes)) : nil)
        }
    }

    public func close() {
        eventsQueued(atNs: clock()) { state }
        queue.withLock { q in
            q.closing = true
            q.condition.signal()
        }
        queue.condition.lock()
        while !queue.finished { queue.condition.wait() }
        queue.condition.unlock()
    }

    // MARK: Loop side

    /// What a hand-off found under the lock, acted on after it.
    private struct HandOff {
        /// The trace began failing: why (logged once).
        var failure: String?
        /// The trace is writing again after this many lost records (logged).
        var recovered: Int?
        /// A probe is due: it carries `state` to the writer.
        var probe = false

        /// Whether `report` has anything to do.
        var calledFor: Bool { failure != nil || recovered != nil || probe }
    }

    /// Encodes one record (not an event's: those go in batches, `eventsQueued`, for the writer
    /// thread to encode) into the queue, unless the trace is failing, in which case it is
    /// counted lost.
    private func append(t: UInt64, seq: Int? = nil, awaited: Bool = false, _ encode: (inout [UInt8]) -> Void) {
        var outcome = HandOff()
        queue.condition.lock()
        if admit(queue, t: t, &outcome) {
            let before = queue.tail.count
            let recordBytes = queue.tail.appendEncoded(encode)
            queue.tailRecords += 1
            queue.queuedBytes += queue.tail.count - before
            fileBytes += UInt64(recordBytes)
            wakeWriterIfDue(queue)
        } else {
            queue.lostTotal += 1
            queue.lostSinceGood += 1
        }
        if let seq { queue.encodedSeq = seq }
        if awaited { queue.encodedAwaitedRecords += 1 }
        outcome.probe = probeDue(t: t)
        queue.condition.unlock()
        report(outcome, t: t)
    }

    /// Under the queue's lock: settles the trace's health with what the writer thread
    /// reported (and fails it if the queue is past its limit), and says whether records go
    /// into the queue now (else they are counted lost). Once per batch of events.
    private func admit(_ q: TraceQueue, t: UInt64, _ outcome: inout HandOff) -> Bool {
        if q.part != part { part = q.part; path = q.path }
        if q.queuedBytes > options.queueLimitBytes, !q.failing {
            q.fail("the writer thread is \(q.queuedBytes) bytes behind")
        }
        switch health {
        case .writing:
            if q.failing {
                health = .failing(epoch: q.failureEpoch, lastProbeT: t)
                outcome.failure = q.failureReason
            }
        case .failing:
            break
        case .probing(let epoch):
            if !q.failing {
                health = .writing
                outcome.recovered = q.lostAtRecovery
            } else if q.failureEpoch != epoch {
                health = .failing(epoch: q.failureEpoch, lastProbeT: t)
            }
        }
        if case .failing = health { return false }
        return true
    }

    /// Whether the trace has been failing without a probe for `retryMs`: the records
    /// up to `t` are counted lost, so a probe now holds the state after them.
    private func probeDue(t: UInt64) -> Bool {
        guard case .failing(_, let lastProbeT) = health else { return false }
        return t &- lastProbeT >= options.retryMs * 1_000_000
    }

    /// Under the queue's lock, after records went in. Under --fsync always the writer is woken
    /// at flush points, where replies wait for it; otherwise by the first record it finds
    /// waiting, and then it gathers for a moment.
    private func wakeWriterIfDue(_ q: TraceQueue) {
        if q.writerWaiting, options.fsync != .always || q.tail.count >= TraceWriter.eagerWakeBytes {
            q.condition.signal()
        }
    }

    /// After the lock: the log lines and the probe a hand-off called for.
    private func report(_ outcome: HandOff, t: UInt64) {
        if let lost = outcome.recovered {
            context.log.notice("trace: writing again to \(path); \(lost) records lost, marked by a gap record")
        }
        if let reason = outcome.failure {
            context.log.error("trace: cannot write \(path): \(reason); serving on, counting lost records in stats")
        }
        if outcome.probe {
            let engine = state
            let nextPath = "\(directory)/\(TraceFileName.make(startSeconds: startSeconds, pid: pid, part: part + 1))"
            queue.withLock { q in
                q.enqueue(.resume(engine: engine, t: t, newPath: nextPath))
                health = .probing(epoch: q.failureEpoch)
            }
        }
    }

    private func rotate(reason: String, t: UInt64) {
        let engine = state
        part += 1
        let newPath = "\(directory)/\(TraceFileName.make(startSeconds: startSeconds, pid: pid, part: part))"
        var (header, index) = TraceWriter.header(daemon: daemon, config: config, part: part, reason: reason, labels: context.labels,
                                                 layouts: options.layouts, origin: origin, t: t, engine: engine, path: newPath, pid: pid)
        if options.layouts { TraceEncoding.appendLayout(seq: engine.seq, layout: engine.layoutJSON(), to: &header) }
        fileBytes = UInt64(header.count)
        openedBytes = fileBytes
        fileStartT = t
        let oldPath = path
        path = newPath
        var failedUnseen: String?
        queue.withLock { q in
            // The writer may have failed since the last hand-off settled the health (a file
            // found unlinked between batches): settle it here, or the new file would be taken
            // for a healthy one, and the records after it counted lost once the next hand-off
            // saw the old failure.
            if case .writing = health, q.failing { failedUnseen = q.failureReason }
            q.enqueue(.open(path: newPath, header: header, index: index, engine: engine, t: t))
            q.path = newPath
            q.part = part
            // A new file while failing is a probe: it marks the gap if it opens, and records go after it.
            if case .writing = health, !q.failing {} else { health = .probing(epoch: q.failureEpoch) }
        }
        if let failedUnseen {
            context.log.error("trace: cannot write \(oldPath): \(failedUnseen); serving on, counting lost records in stats")
        }
        context.log.info("trace: \(reason): new file \(newPath) at seq \(engine.seq)")
    }
}
