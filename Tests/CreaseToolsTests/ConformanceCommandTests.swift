import CreaseCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import CreaseTools

/// A trace with observations, written the way the daemon writes it: events applied and
/// published to the daemon's tracker, each observation judged when read.
struct ObservedSession {
    var engine = Engine(profile: .builtin, app: BuiltinApps.app(named: "tabs")!)
    var tracker: ConformanceTracker
    var bytes: [UInt8]
    var results: [ConformanceResult] = []

    init() {
        let config = JSONValue.object([("budgetUs", .number(1000)), ("settleMs", .number(500))])
        tracker = ConformanceTracker(layout: engine.layout, digest: engine.digest, seq: 0, t: 0)
        bytes = TraceHeader(daemon: "creased test", started: "2026-01-01T00:00:00.000Z", part: 0, reason: "start", config: config,
                            layouts: false, monotonicOrigin: nil, t: 0, engine: engine).encode() + [0x0A]
    }

    mutating func event(_ event: Event, atMs ms: UInt64) throws {
        if try engine.apply(event) { tracker.publish(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: ms * 1_000_000) }
        TraceEncoding.appendEvent(TraceEvent(seq: engine.seq, t: ms * 1_000_000, client: 1, envelope: EventEnvelope(event: event), digest: engine.digest),
                                  to: &bytes)
    }

    mutating func observe(_ observation: Observation, atMs ms: UInt64) {
        let request = ObserveRequest(observed: observation, id: .number(Double(results.count)))
        let result = tracker.observe(request, seq: engine.seq, t: ms * 1_000_000).result
        TraceEncoding.appendObservation(TraceObservation(seq: engine.seq, t: ms * 1_000_000, client: 2, request: request, result: result), to: &bytes)
        results.append(result)
    }

    /// Closed, unfolded, turned: the device lags once (stale), shows one item 40 pt off
    /// twice (mismatches of one layout), gets stuck once, and otherwise agrees.
    static func mixed() throws -> ObservedSession {
        var s = ObservedSession()
        let closed = s.engine.layout
        s.observe(Observation(describing: closed), atMs: 10)
        try s.event(.hinge(angle: 180), atMs: 100)
        let open = s.engine.layout
        s.observe(Observation(describing: closed), atMs: 150)
        s.observe(Observation(describing: open), atMs: 300)
        var moved = Observation(describing: open)
        let i = moved.items!.firstIndex { $0.id == "share" }!
        moved.items![i].frame!.y += 40
        s.observe(moved, atMs: 320)
        s.observe(moved, atMs: 330)
        try s.event(.orientation(.landscapeLeft), atMs: 400)
        s.observe(Observation(describing: open), atMs: 450)
        s.observe(Observation(describing: open), atMs: 1000)
        s.observe(Observation(describing: s.engine.layout), atMs: 1100)
        return s
    }

    func write() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("crease-observed-\(UUID().uuidString).jsonl").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return path
    }
}

@Suite struct ConformanceCommandTests {
    @Test func theSummaryCountsVerdictsAndExitsOneOnAMismatch() throws {
        let s = try ObservedSession.mixed()
        #expect(s.results.map(\.verdict) == [.match, .stale, .match, .mismatch, .mismatch, .stale, .mismatch, .match])
        let path = try s.write()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try CommandRunner.run(["trace", "conformance", path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stdout.contains("8 observations from 0.010 s to 1.100 s of 3 layouts: 3 match, 2 stale, 3 mismatch"), "\(r.stdout)")
        #expect(r.stdout.contains("items[share]  in 3 mismatches: items[share].frame.y, items[share]\n"), "\(r.stdout)")
        #expect(r.stdout.contains("from 0.320 s to 0.330 s (seq 1), 2 observations"), "\(r.stdout)")

        let json = try JSON.parse(Array(try CommandRunner.run(["trace", "conformance", path, "--json"]).stdout.utf8))
        #expect(json["observations"] == .number(8) && json["mismatch"] == .number(3) && json["stale"] == .number(2))
        guard case .array(let layouts)? = json["layouts"] else { Issue.record("no layouts"); return }
        #expect(layouts.map { $0["layoutSeq"] } == [.number(0), .number(1), .number(2)])
    }

    @Test func theJUnitReportIsXMLWithOneFailurePerMismatchedLayout() throws {
        let s = try ObservedSession.mixed()
        let path = try s.write()
        let junit = path + ".xml"
        defer { try? FileManager.default.removeItem(atPath: path); try? FileManager.default.removeItem(atPath: junit) }
        #expect(try CommandRunner.run(["trace", "conformance", path, "--junit", junit]).status == 1)
        let document = try XMLDocument(contentsOf: URL(fileURLWithPath: junit))
        let suite = try #require(try document.nodes(forXPath: "/testsuites/testsuite").first as? XMLElement)
        let cases = try document.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
        let failures = try document.nodes(forXPath: "//testcase/failure").compactMap { $0 as? XMLElement }
        // Layouts observed, and those observed mismatching, computed from the verdicts themselves.
        var seqs: [Int] = [], failing: [Int] = []
        for r in s.results {
            if !seqs.contains(r.layoutSeq) { seqs.append(r.layoutSeq) }
            if r.verdict == .mismatch, !failing.contains(r.layoutSeq) { failing.append(r.layoutSeq) }
        }
        #expect(cases.map { $0.attribute(forName: "name")?.stringValue } == seqs.map { "layout seq \($0)" })
        #expect(failures.count == failing.count && failures.count == 2)
        #expect(suite.attribute(forName: "tests")?.stringValue == String(seqs.count))
        #expect(suite.attribute(forName: "failures")?.stringValue == String(failing.count))
        let firstFailure = try #require(failures.first)
        #expect(firstFailure.attribute(forName: "message")?.stringValue?.hasPrefix("2 of 4 observations mismatched: items[share].frame.y") == true)
        #expect(firstFailure.stringValue?.contains("items[share].frame.y: expected") == true)
    }

    @Test func onlyMatchesExitZeroAndNoObservationsSaySo() throws {
        var s = ObservedSession()
        s.observe(Observation(describing: s.engine.layout), atMs: 5)
        try s.event(.hinge(angle: 180), atMs: 10)
        s.observe(Observation(describing: s.engine.layout), atMs: 20)
        let path = try s.write()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let r = try CommandRunner.run(["trace", "conformance", path])
        #expect(r.status == 0 && r.stdout.contains("2 match, 0 stale, 0 mismatch"), "\(r.stdout)")
        let corpus = try CommandRunner.run(["trace", "conformance", URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Traces/slow-unfold.jsonl").path])
        #expect(corpus.status == 0 && corpus.stdout.hasSuffix("no observations\n"), "\(corpus.stdout)")
    }

    @Test func replayVerifyChecksEveryVerdictAndReportsADivergentOne() throws {
        let s = try ObservedSession.mixed()
        let path = try s.write()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ok = try CommandRunner.run(["replay", "--verify", path])
        #expect(ok.status == 0 && ok.stderr.contains("verified 2 events (seq 1…2) and 8 observation verdicts"), "\(ok.stderr)")
        let text = String(decoding: s.bytes, as: UTF8.self)
        let tampered = text.replacingOccurrences(of: #""verdict":"stale","layoutSeq":2"#, with: #""verdict":"match","layoutSeq":2"#)
        #expect(tampered != text)
        try Data(tampered.utf8).write(to: URL(fileURLWithPath: path))
        let bad = try CommandRunner.run(["replay", "--verify", path])
        #expect(bad.status == 1)
        #expect(bad.stdout.contains("observation: the trace records match against seq 2"), "\(bad.stdout)")
        #expect(bad.stdout.contains("the replay gives stale against seq 2, matched seq 1"), "\(bad.stdout)")
        let check = try CommandRunner.run(["trace", "check", path])
        #expect(check.stdout.contains("8 observations"), "\(check.stdout)")
    }

    @Test func framesDrawObservationsOverTheLayoutAndTheTimelineMarksMismatches() throws {
        let s = try ObservedSession.mixed()
        let file = try TraceFile(bytes: s.bytes)
        let run = try TraceRun.replay(file, title: "t", keepFrames: true)
        #expect(run.story.observations.map(\.result) == s.results)
        let files = FrameSet.files(run.story)
        let index = try XMLTree.parse(try #require(files.last).contents)
        let verdicts = index.all("li").compactMap { $0["data-verdict"] }
        #expect(verdicts == s.results.map(\.verdict.rawValue))
        // The first mismatch: the share button observed 40 pt low.
        let name = try #require(index.all("li").first { $0["data-verdict"] == "mismatch" }?["data-src"])
        #expect(name == "frame-000001_observed-003.svg")
        let frame = try XMLTree.parse(try #require(files.first { $0.name == name }).contents)
        let overlay = try #require(frame.first(id: "observation"))
        #expect(overlay["data-verdict"] == "mismatch")
        #expect(overlay.all("g", class: "observed").count == run.story.observations[3].observation?.items?.count)
        #expect(overlay.all("g", class: "difference").map { $0["data-subject"] } == ["items[share]"])
        #expect(frame.all("g", class: "difference-entry").map { $0["data-path"] } == ["items[share].frame.y"])
        // Frames sort in the order they happened.
        let names = files.dropLast().map(\.name)
        #expect(names == names.sorted())

        let timeline = try XMLTree.parse(TimelineSVG.render(run.story))
        #expect(timeline.all("g", class: "mismatch").count == 3)
        let lane = try #require(timeline.all("g", class: "lane").first { $0["data-lane"] == "observations" })
        #expect(lane.all("path", class: "verdicts").map { $0["data-count"] } == ["3", "2", "3"])
    }
}
