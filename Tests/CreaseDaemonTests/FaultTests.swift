#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import CreaseTestSupport
import Testing

/// Crash and disk faults against a real creased recording a trace (issue 6): kill -9
/// at random moments, a full disk, a file-size limit, and a trace directory that is
/// missing, unwritable or removed while running. Each test prints a `fault ...` line.

/// `crease ARGS`: status and stdout plus stderr.
private func crease(_ args: [String]) throws -> (status: Int32, text: String) {
    let r = try run(try creaseBinary(), args)
    return (r.status, r.out + r.err)
}

/// Whether this process may mount a tmpfs (root, or CAP_SYS_ADMIN): tried once.
let canMountTmpfs: Bool = {
    guard let dir = try? makeTempDir() else { return false }
    defer { rmdir(dir) }
    guard mount("tmpfs", dir, "tmpfs", 0, "size=64k") == 0 else { return false }
    umount2(dir, Int32(MNT_DETACH))
    return true
}()

/// The trace files in `dir`, by part number.
private func traceFiles(_ dir: String) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    return names.filter { $0.hasSuffix(".jsonl") }
        .sorted { Int($0.split(separator: "-").last!.dropLast(6)) ?? 0 < Int($1.split(separator: "-").last!.dropLast(6)) ?? 0 }
        .map { "\(dir)/\($0)" }
}

/// Seq to digest of every event record in `paths`.
private func recordedDigests(_ paths: [String]) throws -> [Int: String] {
    var out: [Int: String] = [:]
    for p in paths {
        let file = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: p))))
        var cursor = file.cursor()
        while let r = try cursor.next() {
            if case .event(let e) = r.record { out[e.seq] = Digest.hex(e.digest) }
        }
    }
    return out
}

/// What `crease trace check` (then `--fix` for a cut tail) and `crease replay --verify`
/// said of each file; fails the test unless every file ends sound and replays.
@discardableResult
private func expectSoundAndReplayable(_ paths: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> (files: Int, fixed: Int) {
    var fixed = 0
    for p in paths {
        var check = try crease(["trace", "check", p])
        if check.status == 1, check.text.contains("cut tail") {
            let fix = try crease(["trace", "check", p, "--fix"])
            #expect(fix.status == 0, "\(fix.text)", sourceLocation: sourceLocation)
            check = try crease(["trace", "check", p])
            fixed += 1
        }
        #expect(check.status == 0, "\(p): \(check.text)", sourceLocation: sourceLocation)
        let replay = try crease(["replay", "--verify", p])
        #expect(replay.status == 0, "\(p): \(replay.text)", sourceLocation: sourceLocation)
    }
    return (paths.count, fixed)
}

/// Acknowledged events: id to (seq, digest), from a peer's reply lines.
private func acks(_ lines: [String]) -> [(seq: Int, digest: String)] {
    lines.compactMap { line in
        guard let r = parseJSON(line), r["ok"] == .bool(true), r["id"]?.int != nil,
              let seq = r["seq"]?.int, let digest = r["digest"]?.str, r["changed"] != nil else { return nil }
        return (seq, digest)
    }
}

/// A scratch directory removed (and unmounted, if something was mounted on it) at the end.
private final class Scratch {
    let path: String
    private var mounts: [String] = []
    init() throws {
        ignoreSIGPIPE()
        path = try makeTempDir()
    }
    /// Mounts a tmpfs of `size` (e.g. "256k") at `path/name`, read-only if asked.
    func tmpfs(_ name: String, size: String, readOnly: Bool = false) throws -> String {
        let dir = "\(path)/\(name)"
        mkdir(dir, 0o755)
        guard mount("tmpfs", dir, "tmpfs", readOnly ? UInt(MS_RDONLY) : 0, "size=\(size)") == 0 else {
            throw HarnessError("mount tmpfs on \(dir): \(String(cString: strerror(errno)))")
        }
        mounts.append(dir)
        return dir
    }
    deinit {
        for m in mounts { umount2(m, Int32(MNT_DETACH)) }
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A stream a rig might send, `count` lines: mostly hinge ticks, device events, now
/// and then an app replacement, a mark or a trace rotation; events carry their index as id.
private func rigStream(_ rng: inout SplitMix64, count: Int) -> String {
    let sidebar = parseJSON(BuiltinApps.source(named: "sidebar")!)!
    var w = JSONWriter()
    w.value(sidebar)
    let appLine = #"{"event":"app","manifest":"# + String(decoding: w.bytes, as: UTF8.self) + #","id":APP}"#
    let orientations = ["portrait", "landscapeLeft", "landscapeRight", "portraitUpsideDown"]
    var lines: [String] = []
    for i in 0..<count {
        switch rng.below(1000) {
        case 0: lines.append(#"{"cmd":"trace","action":"rotate","id":"rotate\#(i)"}"#)
        case 1..<10: lines.append(#"{"cmd":"mark","label":"mark \#(i)"}"#)
        case 10..<20: lines.append(appLine.replacingOccurrences(of: "APP", with: "\(i)"))
        case 20..<90: lines.append(#"{"event":"orientation","value":"\#(orientations[rng.below(4)])","id":\#(i)}"#)
        case 90..<160: lines.append(#"{"event":"keyboard","visible":\#(rng.below(2) == 0),"id":\#(i)}"#)
        default: lines.append(#"{"event":"hinge","angle":\#(Double(rng.below(18001)) / 100),"id":\#(i)}"#)
        }
    }
    return lines.joined(separator: "\n") + "\n"
}

@Suite(.serialized) struct FaultTests {
    /// One recording killed with SIGKILL at a random moment after the first reply.
    /// Returns how many events were acknowledged, how many of those the trace lacks,
    /// the files and the cut tails fixed.
    private func killDuringRecording(seed: UInt64, fsync: String) throws -> (acked: Int, lost: Int, files: Int, fixed: Int) {
        var rng = SplitMix64(seed: seed)  // the kill moments and the events are the same on every run
        let scratch = try Scratch()
        let traces = "\(scratch.path)/traces"
        let d = try DaemonProcess(arguments: ["--trace-dir", traces, "--fsync", fsync, "--log-level", "warning"])
        let swarm = try Swarm(d.socketPath, count: 1)
        swarm.send(0, rigStream(&rng, count: 20_000))
        #expect(swarm.pump(timeout: 10) { swarm[0].lineCount > 0 })
        // Anywhere in the next 400 ms.
        let moment = Double(rng.below(400_000)) / 1e6
        swarm.pump(timeout: moment) { false }
        d.signal(SIGKILL)
        #expect(d.waitForExit() != nil)
        // Replies already in the socket still count as acknowledged.
        swarm.pump(timeout: 5) { swarm[0].eof }
        let acked = acks(swarm[0].lines)
        let files = traceFiles(traces)
        #expect(!files.isEmpty)
        let checked = try expectSoundAndReplayable(files)
        let recorded = try recordedDigests(files)
        let lost = acked.filter { recorded[$0.seq] != $0.digest }.count
        return (acked.count, lost, checked.files, checked.fixed)
    }

    @Test func killNineAtTwentyFourRandomMomentsWithFsyncAlways() throws {
        var total = (acked: 0, lost: 0, files: 0, fixed: 0)
        for run in 0..<24 {
            let r = try killDuringRecording(seed: 0xC0FFEE + UInt64(run), fsync: "always")
            #expect(r.lost == 0, "run \(run): \(r.lost) of \(r.acked) acknowledged events are not in the trace")
            total = (total.acked + r.acked, total.lost + r.lost, total.files + r.files, total.fixed + r.fixed)
        }
        #expect(total.acked > 1000)
        print("fault kill -9 x24 (--fsync always): \(total.files) files sound and replayed, \(total.fixed) cut tails fixed, \(total.acked) events acknowledged, \(total.lost) of them lost")
    }

    @Test func killNineAtSixRandomMomentsWithTheDefaultFsync() throws {
        // Replies do not wait for the disk here: a kill may lose the last few
        // milliseconds of acknowledged events (docs/traces.md), but every file is sound.
        var total = (acked: 0, lost: 0, files: 0, fixed: 0)
        for run in 0..<6 {
            let r = try killDuringRecording(seed: 0xBEEF + UInt64(run), fsync: "interval")
            total = (total.acked + r.acked, total.lost + r.lost, total.files + r.files, total.fixed + r.fixed)
        }
        #expect(total.acked > 500)
        print("fault kill -9 x6 (--fsync interval): \(total.files) files sound and replayed, \(total.fixed) cut tails fixed, \(total.acked) events acknowledged, \(total.lost) of them not in the trace")
    }

    /// The `trace` member of `stats`.
    private func trace(_ c: Client) throws -> JSONValue {
        try #require(try c.request(#"{"cmd":"stats"}"#, timeout: 10)["stats"]?["trace"])
    }

    /// Fills the file system of `dir` with a ballast file; returns its path.
    private func fill(_ dir: String) -> String {
        let ballast = "\(dir)/ballast"
        let f = open(ballast, O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 0x78, count: 4096)
        while write(f, block, block.count) > 0 {}
        #expect(errno == ENOSPC)
        close(f)
        return ballast
    }

    @Test(.enabled(if: canMountTmpfs, "needs to mount a tmpfs (root)"))
    func aFullDiskKeepsServingReportsTheGapAndResumes() throws {
        let scratch = try Scratch()
        let traces = try scratch.tmpfs("traces", size: "256k")
        let d = try DaemonProcess(arguments: ["--trace-dir", traces])
        let c = try Client(d.socketPath)
        var i = 0
        func event() throws -> JSONValue {
            i += 1
            return try c.request(#"{"event":"hinge","angle":\#((i * 41) % 181),"id":\#(i)}"#, timeout: 10)
        }
        for _ in 0..<20 { #expect(try event()["ok"] == .bool(true)) }
        _ = try c.request(#"{"cmd":"mark","label":"filling the disk"}"#)
        let ballast = fill(traces)
        // The daemon answers every event while its trace cannot be written.
        var whileFull = 0
        while try trace(c)["state"] != .string("failing"), whileFull < 5000 {
            for _ in 0..<50 { #expect(try event()["ok"] == .bool(true)); whileFull += 1 }
        }
        let failing = try trace(c)
        #expect(failing["state"] == .string("failing"), "\(failing)")
        #expect(failing["error"]?.str?.contains("No space left on device") == true, "\(failing)")
        for _ in 0..<100 { #expect(try event()["ok"] == .bool(true)); whileFull += 1 }
        try d.expectServing("a full disk")
        let lostWhileFull = try trace(c)["lost"]?.int ?? 0
        #expect(lostWhileFull >= 100)
        // Space returns: the next probe (once a second) writes a gap record and recording resumes.
        unlink(ballast)
        try pollUntil {
            #expect(try event()["ok"] == .bool(true))
            return try trace(c)["state"] == .string("writing")
        }
        let resumed = try trace(c)
        #expect(resumed["state"] == .string("writing"), "\(resumed)")
        #expect(resumed["gaps"] == .number(1))
        for _ in 0..<20 { #expect(try event()["ok"] == .bool(true)) }
        _ = try c.request(#"{"cmd":"mark","label":"space is back"}"#)
        d.stop()
        #expect(d.log().contains("No space left on device") && d.log().contains("writing again"), "\(d.log())")
        let files = traceFiles(traces)
        let checked = try expectSoundAndReplayable(files)
        let info = try crease(["trace", "info", files[0]])
        #expect(info.text.contains("gap"), "\(info.text)")
        // The events missing from the trace are one run, the gap, and all were counted lost.
        let recorded = try recordedDigests(files)
        let missing = (1...i).filter { recorded[$0] == nil }
        #expect(!missing.isEmpty && missing.count <= (resumed["lost"]?.int ?? 0))
        #expect(missing.last! - missing.first! + 1 == missing.count, "missing seqs \(missing)")
        print("fault full disk (256 KiB tmpfs): \(i) events all acknowledged; \(resumed["lost"]?.int ?? 0) records lost and counted, 1 gap record; \(checked.files) file sound and replayed")
    }

    @Test(.enabled(if: canMountTmpfs, "needs to mount a tmpfs (root)"))
    func aFullDiskUnderFsyncAlwaysStillAnswersEveryEvent() throws {
        let scratch = try Scratch()
        let traces = try scratch.tmpfs("traces", size: "256k")
        let d = try DaemonProcess(arguments: ["--trace-dir", traces, "--fsync", "always"])
        let c = try Client(d.socketPath)
        for i in 0..<20 { #expect(try c.request(#"{"event":"hinge","angle":\#(i * 7),"id":\#(i)}"#)["ok"] == .bool(true)) }
        let ballast = fill(traces)
        // Records counted lost (on the loop side, once the writer fails) still release their
        // events' replies: an acknowledged event is on disk or counted lost (docs/traces.md).
        var acked: [Int: String] = [:]
        func event(_ i: Int) throws {
            let r = try c.request(#"{"event":"hinge","angle":\#((i * 41) % 181),"id":\#(i)}"#, timeout: 3)
            #expect(r["ok"] == .bool(true))
            if let seq = r["seq"]?.int, let digest = r["digest"]?.str { acked[seq] = digest }
        }
        for i in 20..<400 { try event(i) }
        let failing = try trace(c)
        #expect(failing["state"] == .string("failing") && (failing["lost"]?.int ?? 0) > 0, "\(failing)")
        try d.expectServing("a full disk under --fsync always")
        // Space returns: the next probe marks the gap and replies go on waiting for the disk.
        unlink(ballast)
        var i = 400
        try pollUntil {
            try event(i); i += 1
            return try trace(c)["state"] == .string("writing")
        }
        for _ in 0..<20 { try event(i); i += 1 }
        let resumed = try trace(c)
        #expect(resumed["state"] == .string("writing") && resumed["gaps"] == .number(1), "\(resumed)")
        d.stop()
        let files = traceFiles(traces)
        try expectSoundAndReplayable(files)
        // Every acknowledged event is in the trace as acknowledged, or among those counted lost.
        let recorded = try recordedDigests(files)
        let missing = acked.keys.filter { recorded[$0] == nil }
        #expect(!missing.isEmpty && missing.count <= (resumed["lost"]?.int ?? 0), "\(missing.count) missing, \(resumed)")
        #expect(acked.allSatisfy { recorded[$0.key] == nil || recorded[$0.key] == $0.value })
        print("fault full disk under --fsync always: \(acked.count) events acknowledged; \(resumed["lost"]?.int ?? 0) records lost and counted, 1 gap record, trace sound and replayed")
    }

    @Test func aFileSizeLimitIsAFullDiskNotACrash() throws {
        // RLIMIT_FSIZE sends SIGXFSZ at the limit; creased must take the write error instead.
        let scratch = try Scratch()
        let traces = "\(scratch.path)/traces"
        let path = "\(scratch.path)/creased.sock"
        // SIGXFSZ as a service manager leaves it (a test runner may have it ignored).
        let d = try DaemonProcess(arguments: ["--default-signal=XFSZ", "prlimit", "--fsize=24576", try creasedBinary(),
                                              "--socket", path, "--trace-dir", traces],
                                  socketPath: path, executable: "/usr/bin/env")
        let c = try Client(path)
        var failing = false
        var sent = 0
        while !failing && sent < 2000 {
            for _ in 0..<20 {
                sent += 1
                let r = try c.request(#"{"event":"hinge","angle":\#((sent * 41) % 181),"id":\#(sent)}"#, timeout: 10)
                #expect(r["ok"] == .bool(true), "event \(sent): \(r)")
            }
            failing = try trace(c)["state"] == .string("failing")
        }
        #expect(failing, "\(sent) events")
        #expect(try trace(c)["error"]?.str?.contains("File too large") == true)
        try d.expectServing("a file-size limit")
        d.stop()
        let files = traceFiles(traces)
        let size = (try FileManager.default.attributesOfItem(atPath: files[0])[.size] as? Int) ?? -1
        #expect(size <= 24576)
        // A refused write is cut back to the last complete record: no cut tail, nothing to fix.
        #expect(try expectSoundAndReplayable(files).fixed == 0)
        print("fault file-size limit 24 KiB: \(sent) events acknowledged, trace stopped at \(size) bytes, sound and replayed")
    }

    @Test func aMissingTraceDirectoryIsCreated() throws {
        let scratch = try Scratch()
        let traces = "\(scratch.path)/not/yet/there"
        let d = try DaemonProcess(arguments: ["--trace-dir", traces])
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"event":"hinge","angle":90,"id":1}"#)["ok"] == .bool(true))
        #expect(try c.request(#"{"cmd":"mark","label":"m","id":2}"#)["traced"] == .bool(true))
        d.stop()
        let files = traceFiles(traces)
        #expect(files.count == 1)
        try expectSoundAndReplayable(files)
    }

    /// An unusable trace directory at start: the daemon serves without a trace (a
    /// degraded mode, docs/hardening.md), says so once in its log, and every client can tell.
    private func expectServesWithoutTrace(_ traceDir: String, _ what: String) throws {
        let d = try DaemonProcess(arguments: ["--trace-dir", traceDir])
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"event":"hinge","angle":90,"id":1}"#)["ok"] == .bool(true), "\(what)")
        #expect(try c.request(#"{"cmd":"mark","label":"m","id":2}"#)["traced"] == .bool(false), "\(what)")
        #expect(try c.request(#"{"cmd":"stats"}"#)["stats"]?["trace"] == nil, "\(what)")
        #expect(try c.request(#"{"cmd":"trace","action":"rotate","id":3}"#)["error"]?["code"] == .string("traceDisabled"), "\(what)")
        #expect(d.log().contains("cannot open the trace"), "\(what): \(d.log())")
        try d.expectServing(what)
    }

    @Test func anUnwritableTraceDirectoryAtStartIsLoggedAndServedWithout() throws {
        let scratch = try Scratch()
        let file = "\(scratch.path)/a-file"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        try expectServesWithoutTrace("\(file)/traces", "a trace directory under a regular file")
        if canMountTmpfs {
            try expectServesWithoutTrace(try scratch.tmpfs("readonly", size: "64k", readOnly: true), "a read-only file system")
        }
    }

    @Test func aTraceDirectoryRemovedWhileRunning() throws {
        let scratch = try Scratch()
        let traces = "\(scratch.path)/traces"
        let d = try DaemonProcess(arguments: ["--trace-dir", traces])
        let c = try Client(d.socketPath)
        var i = 0
        func events(_ n: Int) throws {
            for _ in 0..<n {
                i += 1
                #expect(try c.request(#"{"event":"hinge","angle":\#((i * 41) % 181),"id":\#(i)}"#)["ok"] == .bool(true))
            }
        }
        try events(10)
        try FileManager.default.removeItem(atPath: traces)
        // Events after the removal, until the writer's probe (once a second) notices.
        try pollUntil {
            try events(2)
            return try trace(c)["state"] == .string("failing")
        }
        try d.expectServing("its trace directory removed")
        let afterRemoval = try trace(c)
        // The writer notices (at most a second later) that its file has no name left: the
        // trace fails, and records are counted lost instead of written into the unlinked file.
        #expect(afterRemoval["state"] == .string("failing") && (afterRemoval["lost"]?.int ?? 0) > 0, "\(afterRemoval)")
        #expect(!FileManager.default.fileExists(atPath: traces))
        // Once the directory is back, a rotation resumes recording in a new file that replays.
        try FileManager.default.createDirectory(atPath: traces, withIntermediateDirectories: true)
        #expect(try c.request(#"{"cmd":"trace","action":"rotate","id":"r"}"#)["ok"] == .bool(true))
        try events(10)
        try pollUntil { try trace(c)["state"] == .string("writing") }
        let resumed = try trace(c)
        #expect(resumed["state"] == .string("writing") && resumed["gaps"] == .number(1), "\(resumed)")
        _ = try c.request(#"{"cmd":"mark","label":"the directory is back"}"#)
        d.stop()
        let log = d.log()
        #expect(log.components(separatedBy: "the file was removed").count == 2 && log.contains("writing again"), "\(log)")
        let files = traceFiles(traces)
        #expect(files.count == 1)
        try expectSoundAndReplayable(files)
        #expect(try recordedDigests(files).count == 10)
    }
}

/// Issue 37: `trace rotate` floods grew creased's memory for ever (60,000 rotations: 758 MiB,
/// never returned) and left retention behind. A file that holds no record yet is already
/// the new file a rotation asks for, so a flood coalesces into it.
@Suite struct RotationFloodTests {
    @Test func aFloodOfRotationsCoalescesIntoOneFileAndEveryRotationIsAnswered() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"event":"hinge","angle":90,"id":"e1"}"#)["ok"] == .bool(true))
        let rotations = 4_000
        c.send(String(repeating: #"{"cmd":"trace","action":"rotate","id":"r"}"# + "\n", count: rotations))
        var paths = Set<String>()
        for _ in 0..<rotations {
            let reply = try c.readJSON(timeout: 30)
            #expect(reply["ok"] == .bool(true), "\(reply)")
            if let p = reply["trace"]?.str { paths.insert(p) }
        }
        // The first rotation opened a new file (the first held an event); the rest were that file.
        #expect(paths.count == 1, "\(paths.count) files")
        #expect(try c.request(#"{"event":"hinge","angle":10,"id":"e2"}"#)["ok"] == .bool(true))
        let next = try c.request(#"{"cmd":"trace","action":"rotate","id":"n"}"#)
        #expect(next["trace"]?.str.map { !paths.contains($0) } == true, "a file with a record rotates again")
        d.stop()
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: "\(d.dir)/state")) ?? []).filter { $0.hasSuffix(".jsonl") }
        #expect(files.count == 3, "\(files)")
    }
}
