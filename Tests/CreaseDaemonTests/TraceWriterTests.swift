#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Foundation
import Testing
import CreaseTestSupport

/// A file system whose writes fail with ENOSPC while `full` is set: a disk that fills and
/// frees; or once, `after` writes from when it is told to (`refuseOnce`).
final class FillingFileSystem: TraceFileSystem, @unchecked Sendable {
    private let real = PosixTraceFileSystem()
    private let lock = NSLock()
    private var isFull = false
    private var writesBeforeRefusal: Int?
    private var refused = 0
    var full: Bool {
        get { lock.withLock { isFull } }
        set { lock.withLock { isFull = newValue } }
    }

    func refuseOnce(after writes: Int) { lock.withLock { writesBeforeRefusal = writes } }
    /// Writes refused so far.
    var refusals: Int { lock.withLock { refused } }

    func create(_ path: String) -> Result<Int32, TraceIOError> {
        full ? .failure(TraceIOError(code: ENOSPC, operation: "create \(path)")) : real.create(path)
    }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> TraceIOError? {
        let refuse = lock.withLock { () -> Bool in
            var refuse = isFull
            if let n = writesBeforeRefusal {
                writesBeforeRefusal = n == 0 ? nil : n - 1
                refuse = refuse || n == 0
            }
            if refuse { refused += 1 }
            return refuse
        }
        guard refuse else { return real.write(fd, bytes) }
        // A full disk takes part of a write before it refuses the rest.
        _ = real.write(fd, UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count / 2)]))
        return TraceIOError(code: ENOSPC, operation: "write")
    }
    func sync(_ fd: Int32) -> TraceIOError? { real.sync(fd) }
    func truncate(_ fd: Int32, to length: Int) -> TraceIOError? { real.truncate(fd, to: length) }
    func close(_ fd: Int32) { real.close(fd) }
}

/// A file system whose writes wait while `stalled` is set: a disk that stops answering for a while.
final class StallingFileSystem: TraceFileSystem, @unchecked Sendable {
    private let real = PosixTraceFileSystem()
    private let condition = NSCondition()
    private var isStalled = false
    private var waiting = 0
    var stalled: Bool {
        get { condition.withLock { isStalled } }
        set {
            condition.withLock {
                isStalled = newValue
                condition.broadcast()
            }
        }
    }
    /// Writes waiting for the disk now.
    var writesWaiting: Int { condition.withLock { waiting } }

    func create(_ path: String) -> Result<Int32, TraceIOError> { real.create(path) }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> TraceIOError? {
        condition.withLock {
            guard isStalled else { return }
            waiting += 1
            while isStalled { condition.wait() }
            waiting -= 1
        }
        return real.write(fd, bytes)
    }
    func sync(_ fd: Int32) -> TraceIOError? { real.sync(fd) }
    func truncate(_ fd: Int32, to length: Int) -> TraceIOError? { real.truncate(fd, to: length) }
    func close(_ fd: Int32) { real.close(fd) }
}

/// Plays the daemon's part: applies events to an engine and tells the sink, as the loop does.
final class FakeDaemon {
    var engine = Engine(profile: .builtin, app: BuiltinApps.app(named: "tabs")!)
    var now: UInt64 = 1_000_000_000
    let directory: String

    init() {
        directory = NSTemporaryDirectory() + "crease-writer-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    }

    func writer(_ options: TraceWriterOptions, files: any TraceFileSystem = PosixTraceFileSystem()) throws -> TraceWriter {
        let context = TraceContext(daemonVersion: "test", engine: engine,
                                   configJSON: Array(#"{"budgetUs":1000}"#.utf8), directory: directory,
                                   log: Logger(threshold: .error, format: LogFormat(journal: false)), wake: {})
        return try TraceWriter(context: context, options: options, directory: directory, files: files, clock: { [unowned self] in self.now })
    }

    /// One event, a batch of its own.
    func send(_ event: Event, to sink: TraceWriter) throws {
        try send(batch: [event], gapNs: 1_000_000, to: sink)
    }

    /// Events read in one go and queued together: one batch, one hand-off. They are read
    /// `gapNs` apart.
    func send(batch events: [Event], gapNs: UInt64 = 10_000, to sink: TraceWriter) throws {
        for event in events {
            let changed = try engine.apply(event)
            now += gapNs
            var w = JSONWriter()
            event.write(to: &w, ts: Int64(now))
            let layout = sink.recordsLayouts && changed ? engine.layoutJSON() : nil
            let bytes = w.bytes + (layout ?? [])
            let record = EventRecord(seq: engine.seq, tNs: now, client: 1, line: 0..<w.bytes.count,
                                     layout: layout.map { w.bytes.count..<(w.bytes.count + $0.count) }, digest: engine.digest)
            bytes.withUnsafeBytes { sink.recordEvent(record, in: $0) }
        }
        sink.eventsQueued(atNs: now + 1000) { engine }
        sink.flush()
    }

    /// Events keep coming, as they do to a daemon, one per poll from `events` (round and round),
    /// until a probe has marked the gap: how many were sent.
    func sendUntilGap(_ events: ArraySlice<Event>, to sink: TraceWriter) throws -> Int {
        var sent = 0
        try waitUntil("a probe to mark the gap") {
            if try stats(sink)["gaps"] != .number(0) { return true }
            try send(events[events.startIndex + sent % events.count], to: sink)
            sent += 1
            return false
        }
        return sent
    }

    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("creased-") }.sorted {
            // Part numbers sort numerically.
            Int($0.split(separator: "-").last!.dropLast(6))! < Int($1.split(separator: "-").last!.dropLast(6))!
        }.map { "\(directory)/\($0)" }
    }

    func stats(_ sink: TraceWriter) throws -> JSONValue {
        var w = JSONWriter()
        sink.figures.write(to: &w)
        return try JSON.parse(w.bytes)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

extension TraceWriterOptions {
    /// `--fsync always`, and a failing trace probed every 5 ms: the failure tests' writer.
    static func syncedRetryingFast() -> TraceWriterOptions {
        var options = TraceWriterOptions()
        options.fsync = .always
        options.retryMs = 5
        return options
    }
}

let hingeWalk: [Event] = (0..<120).map { .hinge(angle: Double(($0 * 7) % 181)) }

@Suite struct TraceWriterTests {
    /// A file takes its name only with its header in it: a kill between creating it and
    /// writing the header left an empty trace file that `trace check` refused.
    @Test func aTraceFileHasItsNameOnlyOnceItsHeaderIsIn() throws {
        let d = FakeDaemon()
        try FileManager.default.createDirectory(atPath: d.directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: d.directory) }
        let header = Array(#"{"kind":"header"}"#.utf8) + [0x0A]
        let path = d.directory + "/creased-test-0.jsonl"
        let fd = try header.withUnsafeBytes { try PosixTraceFileSystem().create(path, header: $0).get() }
        #expect(Array(FileManager.default.contents(atPath: path) ?? Data()) == header)
        #expect(!FileManager.default.fileExists(atPath: path + ".partial"))
        // The name stays open for appending.
        #expect(try [UInt8](repeating: 0x78, count: 3).withUnsafeBytes { PosixTraceFileSystem().write(fd, $0) } == nil)
        close(fd)
        #expect(FileManager.default.contents(atPath: path)?.count == header.count + 3)

        // A header that cannot be written leaves no file by either name.
        struct WritesRefused: TraceFileSystem {
            let real = PosixTraceFileSystem()
            func create(_ path: String) -> Result<Int32, TraceIOError> { real.create(path) }
            func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> TraceIOError? { TraceIOError(code: ENOSPC, operation: "write") }
            func sync(_ fd: Int32) -> TraceIOError? { nil }
            func truncate(_ fd: Int32, to length: Int) -> TraceIOError? { nil }
            func close(_ fd: Int32) { real.close(fd) }
        }
        let other = d.directory + "/creased-test-1.jsonl"
        let refused = header.withUnsafeBytes { WritesRefused().create(other, header: $0) }
        #expect(throws: TraceIOError.self) { try refused.get() }
        #expect(!FileManager.default.fileExists(atPath: other))
        #expect(!FileManager.default.fileExists(atPath: other + ".partial"))
        // And an existing name is never replaced.
        #expect(throws: TraceIOError.self) { try header.withUnsafeBytes { try PosixTraceFileSystem().create(path, header: $0).get() } }
        #expect(FileManager.default.contents(atPath: path)?.count == header.count + 3)
    }

    @Test func aFullDiskLosesRecordsCountsThemAndMarksTheGap() throws {
        let daemon = FakeDaemon()
        let disk = FillingFileSystem()
        let sink = try daemon.writer(.syncedRetryingFast(), files: disk)
        for e in hingeWalk[0..<40] { try daemon.send(e, to: sink) }
        try waitUntil("the first 40 records on disk") { sink.durableSeq == 40 }

        disk.full = true
        for e in hingeWalk[40..<80] { try daemon.send(e, to: sink) }
        try waitUntil("the writer to notice") { try daemon.stats(sink)["state"] == .string("failing") }
        disk.full = false
        for e in hingeWalk[80...] { try daemon.send(e, to: sink) }
        // A write that met the full disk may report its refusal only now (the writer thread
        // paused between the two, as on a loaded machine): the trace then fails again after
        // the events above, and only a later event's probe finds the disk free. Events keep
        // coming, as they do to a daemon, until a probe has marked the gap.
        let extra = try daemon.sendUntilGap(hingeWalk[...], to: sink)
        try daemon.send(.orientation(.landscapeLeft), to: sink)
        sink.close()

        let stats = try daemon.stats(sink)
        guard case .number(let lost)? = stats["lost"], case .number(let gaps)? = stats["gaps"] else { Issue.record("no counters"); return }
        #expect(lost > 0)
        #expect(gaps >= 1)
        #expect(stats["state"] == .string("writing"))
        let paths = try daemon.files()
        #expect(paths.count == 1)
        let file = try TraceFile(bytes: Array(FileManager.default.contents(atPath: paths[0])!))
        #expect(file.cut == nil, "a refused write is cut back, never left half written")
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil)
        #expect(outcome.engine.digest == daemon.engine.digest)
        #expect(outcome.eventsApplied + Int(lost) == hingeWalk.count + extra + 1)
        let text = String(decoding: file.bytes, as: UTF8.self)
        #expect(text.contains(#""gap":{"lost":"#) && text.contains("No space left on device"))
    }

    /// The writer thread writes a large batch in pieces: a piece refused after others went
    /// in loses the whole batch, and leaves none of it in the file.
    @Test func aWriteRefusedPartWayThroughALargeBatchLeavesNoneOfIt() throws {
        let daemon = FakeDaemon()
        let disk = FillingFileSystem()
        let sink = try daemon.writer(.syncedRetryingFast(), files: disk)
        try daemon.send(hingeWalk[0], to: sink)
        try waitUntil("the first record on disk") { sink.durableSeq == 1 }

        // About 150 bytes a record: 5,000 of them take three pieces or more.
        let batch = (0..<5000).map { hingeWalk[1 + $0 % (hingeWalk.count - 1)] }
        #expect(batch.count * 150 > 2 * TraceWriterThread.writeBytes)
        disk.refuseOnce(after: 1)
        try daemon.send(batch: batch, to: sink)
        try waitUntil("the batch lost") { try daemon.stats(sink)["lost"] == .number(5000) }
        #expect(disk.refusals == 1)
        let extra = try daemon.sendUntilGap(hingeWalk[...], to: sink)
        try daemon.send(.orientation(.landscapeLeft), to: sink)
        sink.close()

        let stats = try daemon.stats(sink)
        guard case .number(let lost)? = stats["lost"] else { Issue.record("no lost counter"); return }
        let bytes = Array(FileManager.default.contents(atPath: try daemon.files()[0])!)
        let file = try TraceFile(bytes: bytes)
        #expect(file.cut == nil)
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil)
        #expect(outcome.engine.digest == daemon.engine.digest)
        #expect(outcome.eventsApplied + Int(lost) == 1 + batch.count + extra + 1)
        let seqs = try bytes.split(separator: 0x0A).dropFirst().compactMap { line -> Int? in
            guard case .event(let e) = try Array(line).withUnsafeBufferPointer({ try TraceRecord.decode($0) }) else { return nil }
            return e.seq
        }
        #expect(seqs.first == 1 && !seqs.contains { (2...1 + batch.count).contains($0) }, "none of the batch's records")
    }

    /// The writer thread's buffer holds a piece of about 256 KiB: a record larger than that
    /// (a mark with a long label here; a load's manifest in practice) grows it for the while.
    @Test func aRecordLargerThanAWritePieceIsWrittenWhole() throws {
        let daemon = FakeDaemon()
        let sink = try daemon.writer(TraceWriterOptions())
        try daemon.send(hingeWalk[0], to: sink)
        let label = String(repeating: "long label ", count: TraceWriterThread.writeBytes / 10)
        sink.recordMark(seq: daemon.engine.seq, tNs: daemon.now, label: label)
        for e in hingeWalk[1..<20] { try daemon.send(e, to: sink) }
        sink.close()

        let bytes = Array(FileManager.default.contents(atPath: try daemon.files()[0])!)
        #expect(label.utf8.count > TraceWriterThread.writeBytes)
        let records = try bytes.split(separator: 0x0A).dropFirst().map { line in
            try Array(line).withUnsafeBufferPointer { try TraceRecord.decode($0) }
        }
        #expect(records.count == 21)
        #expect(records.contains { if case .mark(_, _, let l) = $0 { return l == label } else { return false } })
        let outcome = try TraceReplay.run(try TraceFile(bytes: bytes), verify: true)
        #expect(outcome.divergence == nil && outcome.eventsApplied == 20)
    }

    /// Records of one batch go to the queue under one lock, with the trace's health settled
    /// once; a queue that passes its limit part way through still fails the trace at that
    /// record: the rest of the batch is counted lost on the loop, what was queued is counted
    /// lost by the writer thread, and a later probe's gap holds the state after the last of
    /// them, so the file replays to the daemon's layout.
    @Test func aBatchThatPassesTheQueueLimitPartWayLosesTheRestAndAGapResumes() throws {
        let daemon = FakeDaemon()
        let disk = StallingFileSystem()
        var options = TraceWriterOptions.syncedRetryingFast()
        options.queueLimitBytes = 1_000   // about eight event records
        let sink = try daemon.writer(options, files: disk)
        try daemon.send(hingeWalk[0], to: sink)
        try waitUntil("the first record on disk") { sink.durableSeq == 1 }

        // The disk stops answering while the writer thread writes the second record, so the
        // thread touches nothing else until it is let go.
        disk.stalled = true
        defer { disk.stalled = false }   // never leave the writer thread waiting, whatever fails
        try daemon.send(hingeWalk[1], to: sink)
        try waitUntil("the writer thread to wait on the disk") { disk.writesWaiting == 1 }
        // Forty events read 10 us apart: too close together for a probe inside the batch.
        try daemon.send(batch: Array(hingeWalk[2...41]), to: sink)
        let failing = try daemon.stats(sink)
        guard case .number(let lostInBatch)? = failing["lost"] else { Issue.record("no lost count"); return }
        #expect(lostInBatch > 0 && lostInBatch < 40, "the limit is passed part way through the batch")
        #expect(failing["state"] == .string("failing"))
        guard case .string(let error)? = failing["error"] else { Issue.record("no error"); return }
        #expect(error.contains("bytes behind"))
        disk.stalled = false
        try waitUntil("the lost records published as handled") { sink.durableSeq == 42 }

        let extra = try daemon.sendUntilGap(hingeWalk[42..<82], to: sink)
        // One at a time, each on disk before the next, so the queue stays under its limit.
        for e in hingeWalk[82...] {
            try daemon.send(e, to: sink)
            try waitUntil("the event on disk") { sink.durableSeq == daemon.engine.seq }
        }
        sink.close()

        let stats = try daemon.stats(sink)
        guard case .number(let lost)? = stats["lost"] else { Issue.record("no lost count"); return }
        #expect(lost >= 40, "the batch's records past the limit, and those queued before it")
        #expect(stats["state"] == .string("writing"))
        let paths = try daemon.files()
        #expect(paths.count == 1)
        let file = try TraceFile(bytes: Array(FileManager.default.contents(atPath: paths[0])!))
        var cursor = file.cursor()
        var eventSeqs: [Int] = []
        var gapSeq: Int?
        while let traced = try cursor.next() {
            switch traced.record {
            case .event(let e): eventSeqs.append(e.seq)
            case .gap(let g) where gapSeq == nil: gapSeq = g.seq
            default: break
            }
        }
        // The two records before the batch are in; none of the batch's; events resume past the gap's seq.
        #expect(Array(eventSeqs.prefix(2)) == [1, 2])
        #expect(!eventSeqs.contains { (3...42).contains($0) })
        if let gapSeq {
            #expect(gapSeq >= 42)
            #expect(eventSeqs.dropFirst(2).allSatisfy { $0 > gapSeq })
        } else {
            Issue.record("no gap record")
        }
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil)
        #expect(outcome.engine.digest == daemon.engine.digest)
        #expect(outcome.eventsApplied + Int(lost) == 2 + 40 + extra + (hingeWalk.count - 82))
    }

    @Test func rotationBySizeAndOnRequestStartsFilesThatEachReplayAlone() throws {
        let daemon = FakeDaemon()
        var options = TraceWriterOptions()
        options.rotateBytes = 30_000
        options.rotateSeconds = 60
        options.layouts = true
        let sink = try daemon.writer(options)
        for e in hingeWalk[0..<60] { try daemon.send(e, to: sink) }
        let requested = try sink.reopen(reason: "SIGHUP", state: daemon.engine)
        try daemon.send(.keyboard(visible: true, height: nil), to: sink)
        daemon.now += 61_000_000_000   // a minute passes: the file has spanned its time
        for e in hingeWalk[60...] { try daemon.send(e, to: sink) }
        sink.close()

        let paths = try daemon.files()
        #expect(paths.count > 4)
        #expect(paths.contains(requested))
        var seq = 0
        var reasons: [String] = []
        var previous: [UInt8] = []
        for path in paths {
            let bytes = Array(FileManager.default.contents(atPath: path)!)
            let file = try TraceFile(bytes: bytes)
            #expect(file.header.initialSeq == seq, "\(path) starts where the one before ended")
            if file.header.reason == "size" {
                // The file before reached the size with its last event (the loop counts the
                // bytes the writer thread will write): not before, and it stopped there.
                let lines = previous.split(separator: 0x0A)
                let lastEvent = lines.lastIndex { String(decoding: $0, as: UTF8.self).contains(#""event":"#) }!
                let tail = lines[lastEvent...].reduce(0) { $0 + $1.count + 1 }
                #expect(previous.count >= Int(options.rotateBytes) && previous.count - tail < Int(options.rotateBytes), "\(path)")
            }
            previous = bytes
            reasons.append(file.header.reason)
            let outcome = try TraceReplay.run(file, verify: true)
            #expect(outcome.divergence == nil, "\(path)")
            seq = outcome.engine.seq
        }
        #expect(seq == hingeWalk.count + 1)
        #expect(reasons.first == "start" && reasons.contains("size") && reasons.contains("SIGHUP") && reasons.contains("time"))
    }

    /// The loop counts a file's bytes while the writer thread encodes them: a size rotation
    /// comes with the batch that took the file to the size, not a record earlier or later.
    @Test func aSizeRotationComesWithTheBatchThatReachedTheSize() throws {
        let daemon = FakeDaemon()
        var options = TraceWriterOptions()
        let headerBytes = try { () throws -> Int in
            let probe = FakeDaemon()
            let sink = try probe.writer(options)
            sink.close()
            return try probe.files().map { FileManager.default.contents(atPath: $0)!.count }.first!
        }()
        options.rotateBytes = UInt64(headerBytes + 1500)
        let sink = try daemon.writer(options)
        // Batches of one to three, read at varying gaps: latencies and times of every width.
        for (i, e) in hingeWalk.enumerated() {
            if i % 3 == 2 { continue }
            let batch = i % 3 == 0 ? [e] : [e, hingeWalk[i + 1]]
            try daemon.send(batch: batch, gapNs: UInt64(1 + (i * 7_919) % 50_000_000), to: sink)
        }
        sink.close()

        let paths = try daemon.files()
        #expect(paths.count > 4)
        for (path, next) in zip(paths, paths.dropFirst()) {
            let bytes = Array(FileManager.default.contents(atPath: path)!)
            #expect(try TraceFile(bytes: Array(FileManager.default.contents(atPath: next)!)).header.reason == "size")
            // Without its last batch (one or two records: see which by their t) the file was under the size.
            let lines = bytes.split(separator: 0x0A).map { Array($0) }
            let records = try lines.dropFirst().map { line in try line.withUnsafeBufferPointer { try TraceRecord.decode($0) } }
            guard case .event(let last)? = records.last else { Issue.record("\(path) ends in an event"); continue }
            var batchBytes = 0
            for (line, record) in zip(lines.dropFirst(), records).reversed() {
                guard case .event(let e) = record, e.latencyNs.map({ e.t + $0 }) == last.latencyNs.map({ last.t + $0 }) else { break }
                batchBytes += line.count + 1
            }
            #expect(bytes.count >= Int(options.rotateBytes) && bytes.count - batchBytes < Int(options.rotateBytes),
                    "\(path): \(bytes.count) bytes, \(batchBytes) in its last batch")
        }
    }

    @Test func optionsParseTheTraceFlags() throws {
        guard case .run(let o) = try DaemonOptions.parse(["--fsync", "always", "--trace-layouts", "--trace-rotate-bytes=1000", "--trace-rotate-seconds", "60"]) else {
            Issue.record("not a run"); return
        }
        #expect(o.traceWriter.fsync == .always && o.traceWriter.layouts && o.traceWriter.rotateBytes == 1000 && o.traceWriter.rotateSeconds == 60)
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--fsync", "sometimes"]) }
        #expect(TraceDirectory.resolve(explicit: nil, environment: ["STATE_DIRECTORY": "/var/lib/crease:/other"]) == "/var/lib/crease")
        #expect(TraceDirectory.resolve(explicit: nil, environment: [:]) == "./traces")
        #expect(TraceDirectory.resolve(explicit: "/x", environment: ["STATE_DIRECTORY": "/y"]) == "/x")
        #expect(TraceFileName.make(startSeconds: 1_790_000_000, pid: 42, part: 3) == "creased-20260921T141320Z-42-3.jsonl")
    }
}
