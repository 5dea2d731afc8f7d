#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import CreaseTestSupport
import Testing

/// A rig session against a real creased: the layouts the daemon computes are computed here
/// too (the same engine, app and profile), so each observation is built from what the
/// device should show, and the daemon's digests confirm the two agree.
final class RigSession {
    let daemon: DaemonProcess
    let rig: Client
    var mirror = Engine(profile: .builtin, app: BuiltinApps.app(named: "tabs")!)
    private var ids = 0

    init(arguments: [String] = []) throws {
        daemon = try DaemonProcess(arguments: arguments)
        rig = try Client(daemon.socketPath)
    }

    /// Sends an event, waits for its reply and checks the daemon's digest against ours.
    func event(_ event: Event) throws {
        ids += 1
        var w = JSONWriter()
        event.write(to: &w, id: .number(Double(ids)))
        let reply = try rig.request(String(decoding: w.bytes, as: UTF8.self))
        try mirror.apply(event)
        #expect(reply["ok"] == .bool(true) && reply["digest"]?.str == Digest.hex(mirror.digest), "\(reply)")
    }

    @discardableResult
    func observe(_ observation: Observation, tolerance: Double = ObserveRequest.defaultTolerance) throws -> JSONValue {
        ids += 1
        let request = ObserveRequest(observed: observation, tolerance: tolerance, ts: 1_700_000_000_000 + Int64(ids), id: .number(Double(ids)))
        let reply = try rig.request(String(decoding: request.jsonBytes(), as: UTF8.self))
        #expect(reply["id"] == .number(Double(ids)) && reply["ok"] == .bool(true), "\(reply)")
        return reply
    }

    func paths(_ reply: JSONValue) -> [String] {
        guard case .array(let d)? = reply["differences"] else { return [] }
        return d.compactMap { $0["path"]?.str }
    }

    /// The trace files the daemon wrote, once it has stopped.
    func traceFiles() -> [String] {
        let dir = "\(daemon.dir)/state"
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted().map { "\(dir)/\($0)" }
    }
}

private func crease(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
    try run((try creasedBinary() as NSString).deletingLastPathComponent + "/crease", args)
}

@Suite struct ConformanceDaemonTests {
    @Test func anObservationOfTheCurrentLayoutMatches() throws {
        let s = try RigSession()
        try s.event(.hinge(angle: 180))
        let reply = try s.observe(Observation(describing: s.mirror.layout))
        #expect(reply["verdict"] == .string("match"))
        #expect(reply["seq"] == .number(1) && reply["layoutSeq"] == .number(1) && reply["matchedSeq"] == .number(1))
        #expect(s.paths(reply).isEmpty)
    }

    @Test func aFrameMovedBeyondTheToleranceIsAMismatchNamingTheItemAndField() throws {
        let s = try RigSession()
        var o = Observation(describing: s.mirror.layout)
        let i = try #require(o.items?.firstIndex { $0.id == "downloads" })
        let y = try #require(o.items?[i].frame?.y)
        o.items![i].frame!.y = y + 2
        #expect(try s.observe(o)["verdict"] == .string("match"))   // within the default tolerance
        o.items![i].frame!.y = y + 18
        let reply = try s.observe(o)
        #expect(reply["verdict"] == .string("mismatch") && reply["matchedSeq"] == .null)
        guard case .array(let d)? = reply["differences"] else { Issue.record("no differences"); return }
        #expect(d == [.object([("path", .string("items[downloads].frame.y")), ("expected", .number(y)), ("observed", .number(y + 18))])])
        #expect(try s.observe(o, tolerance: 20)["verdict"] == .string("match"))
    }

    @Test func thePreviousLayoutRightAfterAChangeIsStale() throws {
        // A window of a minute: "right after" holds however loaded the machine is.
        let s = try RigSession(arguments: ["--settle-ms", "60000"])
        let before = s.mirror.layout
        try s.event(.hinge(angle: 180))
        let reply = try s.observe(Observation(describing: before))
        #expect(reply["verdict"] == .string("stale"))
        #expect(reply["layoutSeq"] == .number(1) && reply["matchedSeq"] == .number(0))
        #expect(s.paths(reply).contains("barAxis"))
    }

    @Test func afterTheWindowThePreviousLayoutIsAMismatch() throws {
        let windowMs = 200.0
        let s = try RigSession(arguments: ["--settle-ms", String(Int(windowMs))])
        let before = s.mirror.layout
        let sent = try #require(try s.rig.request(#"{"cmd":"clock"}"#)["now"]?.double)
        try s.event(.hinge(angle: 180))
        var verdicts: [String] = []
        var judged = sent
        try pollUntil(timeout: 30) {
            verdicts.append(try s.observe(Observation(describing: before))["verdict"]?.str ?? "?")
            judged = try #require(try s.rig.request(#"{"cmd":"clock"}"#)["now"]?.double)
            return verdicts.last == "mismatch"
        }
        #expect(verdicts.last == "mismatch")
        #expect(verdicts.dropLast().allSatisfy { $0 == "stale" }, "\(verdicts)")
        // On the daemon's own clock, the old layout stopped counting only once the window had passed.
        #expect((judged - sent) / 1e6 > windowMs)
    }

    /// Issue 26: a page source read before an unfold and delivered after the settle window
    /// is a match at its capture time (and a mismatch judged at arrival); the clock command
    /// gives the daemon's clock, and the trace replays both verdicts.
    @Test func aSlowCaptureIsJudgedAtItsCaptureTime() throws {
        let s = try RigSession(arguments: ["--settle-ms", "100"])
        let before = s.mirror.layout
        let start = try #require(try s.rig.request(#"{"cmd":"clock","id":"c1"}"#)["now"]?.double)
        let end = try #require(try s.rig.request(#"{"cmd":"clock"}"#)["now"]?.double)
        #expect(end >= start)
        try s.event(.hinge(angle: 180))
        // Delivered late: on the daemon's clock, more than the 100 ms window after the unfold.
        let unfolded = try #require(try s.rig.request(#"{"cmd":"clock"}"#)["now"]?.double)
        try waitUntil("the settle window to pass") { (try s.rig.request(#"{"cmd":"clock"}"#)["now"]?.double ?? 0) > unfolded + 150e6 }
        let late = ObserveRequest(observed: Observation(describing: before), id: .string("late"), capturedAt: UInt64(start)...UInt64(end))
        let reply = try s.rig.request(String(decoding: late.jsonBytes(), as: UTF8.self))
        #expect(reply["verdict"] == .string("match") && reply["matchedSeq"] == .number(0) && reply["layoutSeq"] == .number(0), "\(reply)")
        #expect(try s.observe(Observation(describing: before))["verdict"] == .string("mismatch"), "judged at arrival")
        // A capture that ends a little after the daemon received it (a clock offset) counts as received then.
        let future = ObserveRequest(observed: Observation(describing: s.mirror.layout), id: .string("f"), capturedAt: UInt64(end)...UInt64(end) + 900_000_000)
        #expect(try s.rig.request(String(decoding: future.jsonBytes(), as: UTF8.self))["verdict"] == .string("match"))
        // Issue 37: the wall clock in place of the daemon's is refused at the door, naming the clock,
        // instead of being recorded as a time no reader can place (it used to corrupt the trace).
        let wall = UInt64(Date().timeIntervalSince1970 * 1e9)
        for captured in [wall...wall, UInt64(end)...UInt64(end) + 3_600_000_000_000, 1...2] {
            let off = ObserveRequest(observed: Observation(describing: s.mirror.layout), id: .string("w"), capturedAt: captured)
            let refused = try s.rig.request(String(decoding: off.jsonBytes(), as: UTF8.self))
            #expect(refused["ok"] == .bool(false) && refused["error"]?["field"] == .string("capturedAt") && refused["id"] == .string("w"), "\(refused)")
            #expect(refused["error"]?["message"]?.str?.contains("CLOCK_MONOTONIC") == true, "\(refused)")
        }
        let bad = try s.rig.request(#"{"cmd":"observe","id":"b","observed":{},"capturedAt":[2,1]}"#)
        #expect(bad["ok"] == .bool(false) && bad["error"]?["field"] == .string("capturedAt"))
        s.daemon.stop()
        let trace = try #require(s.traceFiles().first)
        let verified = try crease(["replay", "--verify", trace])
        #expect(verified.status == 0 && verified.err.contains("and 3 observation verdicts"), "\(verified.err)")
        #expect(try String(contentsOfFile: trace, encoding: .utf8).contains(#""captured":["#))
        for command in [["trace", "info", trace], ["trace", "glitches", trace], ["trace", "conformance", trace]] {
            let r = try crease(command)
            #expect(r.status <= 1 && !r.err.contains("captured must be"), "\(command): \(r.err)")
        }
    }

    @Test func partialObservationsCompareOnlyWhatTheyGive() throws {
        let s = try RigSession()
        try s.event(.orientation(.landscapeLeft))
        #expect(try s.observe(Observation(barAxis: s.mirror.layout.barAxis))["verdict"] == .string("match"))
        let item = try #require(s.mirror.layout.bars.first { !$0.items.isEmpty }?.items.first)
        let wrongShows: Shows = item.shows == .title ? .symbol : .title
        let reply = try s.observe(Observation(items: [ObservedItem(id: item.id, shows: wrongShows)]))
        #expect(reply["verdict"] == .string("mismatch"))
        #expect(s.paths(reply) == ["items[\(item.id)].shows"])
    }

    @Test func completeFindsMissingItems() throws {
        let s = try RigSession()
        var o = Observation(describing: s.mirror.layout)
        let missing = try #require(o.items?.last?.id)
        o.items!.removeLast()
        let reply = try s.observe(o)
        #expect(reply["verdict"] == .string("mismatch") && s.paths(reply) == ["items[\(missing)]"])
        o.complete = false
        #expect(try s.observe(o)["verdict"] == .string("match"))
    }

    @Test func badObservationsAreRefusedNamingTheFieldAndChangeNothing() throws {
        let s = try RigSession()
        let bad = try s.rig.request(#"{"cmd":"observe","id":"b","observed":{"items":[{"id":"search","frame":{"x":1,"y":2,"w":3}}]}}"#)
        #expect(bad["ok"] == .bool(false) && bad["id"] == .string("b"))
        #expect(bad["error"]?["field"] == .string("observed.items[0].frame.h") && bad["error"]?["code"] == .string("missingField"))
        let unknown = try s.rig.request(#"{"cmd":"observe","id":"u","observed":{"barAxes":"vertical"}}"#)
        #expect(unknown["error"]?["field"] == .string("observed.barAxes"))
        // The connection is kept, and nothing was counted.
        let stats = try s.rig.request(#"{"cmd":"stats","id":"s"}"#)
        #expect(stats["stats"]?["observations"] == .object([("match", .number(0)), ("stale", .number(0)), ("mismatch", .number(0))]))
        #expect(stats["stats"]?["rejected"] == .number(2))
    }

    @Test func statsCountVerdictsAndTheConformanceTopicPushesEveryNonMatch() throws {
        let s = try RigSession(arguments: ["--settle-ms", "60000"])
        let watcher = try Client(s.daemon.socketPath)
        let sub = try watcher.request(#"{"cmd":"subscribe","topics":["conformance"],"id":"w"}"#)
        #expect(sub["topics"] == .array([.string("conformance")]))
        let before = s.mirror.layout
        try s.observe(Observation(describing: before))                       // match: not pushed
        try s.event(.hinge(angle: 180))
        let stale = try s.observe(Observation(describing: before))
        let mismatch = try s.observe(Observation(barAxis: .vertical, tabBar: .some(.compressed)))
        let pushes = [try watcher.readJSON(), try watcher.readJSON()]
        #expect(pushes.map { $0["push"] } == [.string("conformance"), .string("conformance")])
        #expect(pushes.map { $0["verdict"] } == [stale["verdict"], mismatch["verdict"]])
        #expect(pushes[0]["matchedSeq"] == .number(0) && pushes[0]["differences"] == stale["differences"])
        #expect(pushes[1]["differences"] == mismatch["differences"] && pushes[1]["client"] != nil && pushes[1]["ts"] != nil)
        #expect(watcher.readAvailable(quiet: 0.2).isEmpty)
        let stats = try s.rig.request(#"{"cmd":"stats","id":"s"}"#)
        #expect(stats["stats"]?["observations"] == .object([("match", .number(1)), ("stale", .number(1)), ("mismatch", .number(1))]))
    }

    @Test func aTraceWithObservationsReplaysWithEveryVerdictAndReportsAsJUnit() throws {
        let s = try RigSession(arguments: ["--settle-ms", "60000"])
        var replies: [JSONValue] = []
        let closed = s.mirror.layout
        replies.append(try s.observe(Observation(describing: closed)))
        try s.event(.hinge(angle: 180))
        replies.append(try s.observe(Observation(describing: closed)))
        replies.append(try s.observe(Observation(describing: s.mirror.layout)))
        var moved = Observation(describing: s.mirror.layout)
        moved.items![0].frame!.x += 25
        replies.append(try s.observe(moved))
        try s.event(.orientation(.landscapeLeft))
        replies.append(try s.observe(Observation(sheet: .some(ObservedSheet(axis: .vertical)))))   // no layout has a sheet
        replies.append(try s.observe(Observation(describing: s.mirror.layout)))
        #expect(replies.compactMap { $0["verdict"]?.str } == ["match", "stale", "match", "mismatch", "mismatch", "match"])
        s.daemon.stop()
        let trace = try #require(s.traceFiles().first)

        // Recorded as replied.
        let file = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: trace))))
        #expect(file.header.config["settleMs"] == .number(60000))
        var recorded: [TraceObservation] = []
        var cursor = file.cursor()
        while let r = try cursor.next() { if case .observation(let o) = r.record { recorded.append(o) } }
        #expect(recorded.map { $0.result.verdict.rawValue } == replies.compactMap { $0["verdict"]?.str })
        #expect(recorded.map { Double($0.result.layoutSeq) } == replies.compactMap { $0["layoutSeq"]?.double })

        // A replay reproduces every verdict; one changed by hand is a divergence.
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil && outcome.observationsChecked == replies.count && outcome.observationsUnchecked == 0)
        let verified = try crease(["replay", "--verify", trace])
        #expect(verified.status == 0 && verified.err.contains("and \(replies.count) observation verdicts"), "\(verified.err)")
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        let tamperedPath = trace + ".tampered"
        try text.replacingOccurrences(of: #""verdict":"stale""#, with: #""verdict":"match""#).write(toFile: tamperedPath, atomically: true, encoding: .utf8)
        let diverged = try crease(["replay", "--verify", tamperedPath])
        #expect(diverged.status == 1 && diverged.out.contains("observation: the trace records match"), "\(diverged.out)")

        // The JUnit report: one case per observed layout, one failure per layout observed mismatching.
        let junit = "\(s.daemon.dir)/junit.xml"
        let report = try crease(["trace", "conformance", trace, "--junit", junit])
        #expect(report.status == 1 && report.out.contains("6 observations"), "\(report.out)")
        let document = try XMLDocument(contentsOf: URL(fileURLWithPath: junit))
        var observed: [Double] = [], failing: [Double] = []
        for r in replies {
            guard let seq = r["layoutSeq"]?.double else { continue }
            if !observed.contains(seq) { observed.append(seq) }
            if r["verdict"] == .string("mismatch"), !failing.contains(seq) { failing.append(seq) }
        }
        #expect(try document.nodes(forXPath: "//testcase").count == observed.count)
        #expect(try document.nodes(forXPath: "//testcase/failure").count == failing.count && failing.count == 2)
        let suite = try #require(try document.nodes(forXPath: "//testsuite").first as? XMLElement)
        #expect(suite.attribute(forName: "failures")?.stringValue == String(failing.count))
    }
}

extension ConformanceDaemonTests {
    /// Issue 37: a `load` is a layout change for the judge like any other. Before, the judge
    /// kept the layout from before the load, so the loaded layout (exactly what `layout`
    /// returns) came back stale or mismatching, and the trace kept the false verdict.
    @Test func anObservationOfTheLoadedLayoutRightAfterALoadMatchesLiveAndOnReplay() throws {
        let s = try RigSession(arguments: ["--settle-ms", "0"])
        try s.event(.hinge(angle: 180))
        var target = Engine(profile: .builtin, app: BuiltinApps.app(named: "tabs")!)
        try target.apply(.hinge(angle: 100))
        try target.apply(.orientation(.landscapeLeft))
        let request = LoadRequest(state: try JSON.parse(target.state.jsonBytes(app: target.app)), digest: target.digest)
        var w = JSONWriter()
        request.write(to: &w, id: .string("load"))
        let loaded = try s.rig.request(String(decoding: w.bytes, as: UTF8.self))
        #expect(loaded["ok"] == .bool(true) && loaded["seq"] == .number(2), "\(loaded)")
        #expect(try s.rig.request(#"{"cmd":"sync","id":"y"}"#)["digest"]?.str == Digest.hex(target.digest))

        let reply = try s.observe(Observation(describing: target.layout))
        #expect(reply["verdict"] == .string("match") && reply["layoutSeq"] == .number(2) && reply["matchedSeq"] == .number(2), "\(reply)")
        // The layout from before the load is no longer what the device should show.
        let before = try s.observe(Observation(describing: s.mirror.layout))
        #expect(before["verdict"] == .string("mismatch"), "\(before)")

        s.daemon.stop()
        let trace = try #require(s.traceFiles().first)
        let file = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: trace))))
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil && outcome.observationsChecked == 2, "\(outcome.divergence?.summary ?? "")")
        var verdicts: [String] = []
        var cursor = file.cursor()
        while let r = try cursor.next() { if case .observation(let o) = r.record { verdicts.append(o.result.verdict.rawValue) } }
        #expect(verdicts == ["match", "mismatch"])
    }
}

/// Issue 24: `creased --resume` continues a run killed mid-stream from its last
/// acknowledged event, in a new file that names the one it continues.
@Suite struct ResumeTests {
    @Test func aKilledDaemonResumesFromItsLastAcknowledgedEvent() throws {
        let first = try DaemonProcess(arguments: ["--fsync", "always", "--resume"])
        let traceDir = "\(first.dir)/state"
        let rig = try Client(first.socketPath)
        var fresh = try rig.request(#"{"cmd":"hello"}"#)
        #expect(fresh["resumed"]?["fresh"]?.str?.contains("no trace") == true, "\(fresh)")
        var last: JSONValue = .null
        for i in 1...300 {
            var w = JSONWriter()
            Event.hinge(angle: Double(i % 181)).write(to: &w, id: .number(Double(i)))
            last = try rig.request(String(decoding: w.bytes, as: UTF8.self))
        }
        _ = try rig.request(#"{"event":"orientation","value":"landscapeLeft","id":"o"}"#)
        last = try rig.request(#"{"event":"keyboard","visible":true,"id":"k"}"#)
        let ackedSeq = try #require(last["seq"]?.int), ackedDigest = try #require(last["digest"]?.str)
        let stateBefore = try rig.request(#"{"cmd":"state"}"#)["state"]?["state"]
        first.signal(SIGKILL)
        _ = first.waitForExit()
        // The same trace directory, a new process.
        let second = try DaemonProcess(arguments: ["--resume", "--trace-dir", traceDir])
        let again = try Client(second.socketPath)
        fresh = try again.request(#"{"cmd":"hello"}"#)
        #expect(fresh["seq"]?.int == ackedSeq && fresh["digest"]?.str == ackedDigest, "\(fresh)")
        #expect(fresh["resumed"]?["seq"]?.int == ackedSeq && fresh["resumed"]?["file"]?.str?.hasSuffix(".jsonl") == true)
        #expect(try again.request(#"{"cmd":"state"}"#)["state"]?["state"] == stateBefore)
        let next = try again.request(#"{"event":"keyboard","visible":false,"id":1}"#)
        #expect(next["seq"]?.int == ackedSeq + 1)
        second.stop()
        // Both files verify; the second names the first and starts where it ended.
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: traceDir)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
        #expect(files.count == 2)
        for f in files {
            let r = try run((try creasedBinary() as NSString).deletingLastPathComponent + "/crease", ["replay", "--verify", "\(traceDir)/\(f)"])
            #expect(r.status == 0, "\(f): \(r.out)\(r.err)")
        }
        let headers = try files.map { try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: "\(traceDir)/\($0)")))).header }
        let resumed = try #require(headers.first { $0.resumedFrom != nil })
        #expect(resumed.reason == "resume" && resumed.initialSeq == ackedSeq && Digest.hex(resumed.initialDigest) == ackedDigest)
        #expect(files.contains(resumed.resumedFrom!.file) && resumed.resumedFrom!.seq == ackedSeq)
        let info = try run((try creasedBinary() as NSString).deletingLastPathComponent + "/crease",
                           ["trace", "info", "\(traceDir)/\(files.first { $0 != resumed.resumedFrom!.file }!)"])
        #expect(info.out.contains("resumed    from \(resumed.resumedFrom!.file) at seq \(ackedSeq)"), "\(info.out)")
    }

    /// Issue 37: the file to resume from was the newest by modification time, so touching an
    /// older trace made a restart resume from its state (seq 100 instead of 200) and reuse
    /// seqs. It is the file whose records reach the highest seq.
    @Test func aTouchedOlderTraceDoesNotTakeTheResumeBack() throws {
        let dir = try makeTempDir()
        func send(_ count: Int, to d: DaemonProcess) throws -> Int {
            let rig = try Client(d.socketPath)
            var seq = 0
            for i in 1...count {
                var w = JSONWriter()
                Event.hinge(angle: Double((i * 7) % 181)).write(to: &w, id: .number(Double(i)))
                seq = try #require(try rig.request(String(decoding: w.bytes, as: UTF8.self))["seq"]?.int)
            }
            return seq
        }
        let first = try DaemonProcess(arguments: ["--resume", "--trace-dir", dir])
        #expect(try send(100, to: first) == 100)
        first.stop()
        let older = try #require(((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).first { $0.hasSuffix(".jsonl") })
        let second = try DaemonProcess(arguments: ["--resume", "--trace-dir", dir])
        #expect(try send(100, to: second) == 200)
        second.stop()
        // The older file now looks newest, and a copy of it with a later name as well.
        let later = time(nil) + 60
        var times = [timespec(tv_sec: later, tv_nsec: 0), timespec(tv_sec: later, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, "\(dir)/\(older)", &times, 0) == 0)
        try FileManager.default.copyItem(atPath: "\(dir)/\(older)", toPath: "\(dir)/creased-29991231T000000Z-1-0.jsonl")
        let third = try DaemonProcess(arguments: ["--resume", "--trace-dir", dir])
        let hello = try Client(third.socketPath).request(#"{"cmd":"hello"}"#)
        #expect(hello["seq"]?.int == 200 && hello["resumed"]?["seq"]?.int == 200, "\(hello)")
        #expect(hello["resumed"]?["file"]?.str != older)
        third.stop()
    }

    @Test func aTraceItCannotReplayIsLeftAsItIsAndTheDaemonStartsFresh() throws {
        let dir = try makeTempDir()
        try "{\"not\":\"a trace\"}\n".write(toFile: "\(dir)/creased-20260101T000000Z-1-0.jsonl", atomically: true, encoding: .utf8)
        let d = try DaemonProcess(arguments: ["--resume", "--trace-dir", dir])
        let hello = try Client(d.socketPath).request(#"{"cmd":"hello"}"#)
        #expect(hello["seq"]?.int == 0 && hello["resumed"]?["fresh"]?.str?.contains("creased-20260101T000000Z-1-0.jsonl") == true, "\(hello)")
        #expect(try String(contentsOfFile: "\(dir)/creased-20260101T000000Z-1-0.jsonl", encoding: .utf8) == "{\"not\":\"a trace\"}\n")
        #expect(d.log().contains("cannot resume"))
        let noTrace = try run(try creasedBinary(), ["--resume", "--no-trace"])
        #expect(noTrace.status == 2 && noTrace.err.contains("--resume"))
    }
}

extension ConformanceDaemonTests {
    /// Issue 37: a campaign's trace grew by about 8 KB a look. A real creased keeps a look
    /// that is exactly a view of its layout as a reference, a mismatch whole, a reset `load`
    /// as `{}`; `--trace-whole-looks` keeps every look whole; both replay every verdict.
    @Test(arguments: [false, true])
    func looksAndResetsAreRecordedCompactlyAndReplayEveryVerdict(wholeLooks: Bool) throws {
        let s = try RigSession(arguments: wholeLooks ? ["--trace-whole-looks"] : [])
        try s.event(.hinge(angle: 180))
        try s.observe(PageSourceView.observation(of: s.mirror.layout))
        try s.observe(Observation(describing: s.mirror.layout))
        var moved = Observation(describing: s.mirror.layout)
        moved.items![0].frame!.y += 30
        #expect(try s.observe(moved)["verdict"] == .string("mismatch"))
        let reset = try s.rig.request(#"{"cmd":"load","id":"reset"}"#)
        #expect(reset["ok"] == .bool(true), "\(reset)")
        let app = BuiltinApps.app(named: "tabs")!
        s.mirror = Engine(profile: .builtin, app: app, state: DeviceState(app: app), seq: 2)
        #expect(try s.observe(PageSourceView.observation(of: s.mirror.layout))["verdict"] == .string("match"))
        s.daemon.stop()
        let trace = try #require(s.traceFiles().first)
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
        let looks = lines.filter { $0["observe"] != nil }
        #expect(looks.map { $0["observedAs"]?["view"]?.str } == (wholeLooks ? [nil, nil, nil, nil] : ["pageSource", "complete", nil, "pageSource"]))
        #expect(looks.map { $0["observe"]?["observed"] == nil } == (wholeLooks ? [false, false, false, false] : [true, true, false, true]))
        #expect(lines.first(where: { $0["load"] != nil })?["load"] == .object([]))
        let verified = try crease(["replay", "--verify", trace])
        #expect(verified.status == 0 && verified.err.contains("and 4 observation verdicts"), "\(verified.err)")
        let checked = try crease(["trace", "check", trace])
        #expect(checked.status == 0 && checked.out.contains("1 loads") && checked.out.contains("4 observations"), "\(checked.out)")
    }
}
