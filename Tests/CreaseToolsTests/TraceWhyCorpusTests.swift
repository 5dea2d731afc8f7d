import CreaseCore
@testable import CreaseTools
import Foundation
import Testing

/// `crease trace why` on recorded traces: each input's setter is where the input changed.
@Suite struct TraceWhyCorpusTests {
    @Test("every input's last setter, replayed to its seq, is where that input changed", arguments: ["rig-observations.jsonl", "burst-coalesced.jsonl"])
    func everySetterChangesItsInput(_ name: String) throws {
        let file = try TraceFile(bytes: try Inputs.readFile(Corpus.directory + "/" + name))
        let last = try TraceMinimize.events(file).last.map(\.seq) ?? file.header.initialSeq
        for seq in [last, max(file.header.initialSeq + 1, last / 2)] {
            let why = try TraceWhy.explain(file, seq: seq)
            for input in why.allInputs {
                guard let setter = input.setBy else { continue }
                #expect(setter.seq <= seq)
                let at = try TraceWhy.explain(file, seq: setter.seq).allInputs.first { $0.name == input.name }
                #expect(at?.setBy == setter, "\(name) seq \(seq): \(input.name) set by seq \(setter.seq)")
                if setter.seq > file.header.initialSeq + 1 {
                    let earlier = try TraceWhy.explain(file, seq: setter.seq - 1).allInputs.first { $0.name == input.name }
                    #expect(earlier?.value != at?.value, "\(input.name) did not change at seq \(setter.seq)")
                }
            }
        }
    }

    @Test("crease trace why --json names the rule, its passage, its inputs and every input of the state with its setter; a seq the trace does not have exits 1")
    func command() throws {
        let path = Corpus.directory + "/rig-observations.jsonl"
        let r = try CommandRunner.run(["trace", "why", path, "--seq", "77", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSON.parse(Array(r.stdout.utf8))
        #expect(json["seq"] == .number(77))
        #expect(json["subject"] == .string("barAxis") && json["rule"] == .string("Bar axis"))
        if case .string(let passage)? = json["passage"] { #expect(passage.hasPrefix("seed 002")) } else { Issue.record("no passage") }
        guard case .array(let inputs)? = json["inputs"], case .array(let state)? = json["state"] else { Issue.record("no inputs"); return }
        #expect(inputs.map { $0["name"] } == LayoutRule.barAxis.inputs.map { .string($0) })
        let keyboard = state.first { $0["name"] == .string("keyboard") }
        #expect(keyboard?["setBy"]?["seq"] == .number(77))
        let missing = try CommandRunner.run(["trace", "why", path, "--seq", "100000"])
        #expect(missing.status == 1 && missing.stderr.contains("no event at seq 100000"), "\(missing.stderr)")
        let usage = try CommandRunner.run(["trace", "why", path])
        #expect(usage.status == 2)
    }

    @Test("crease why --events explains the layout after an event list, as trace why does for the same events recorded")
    func eventList() throws {
        let dir = try RenderCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let events = dir.appendingPathComponent("events.jsonl").path
        try Data("""
            {"event":"hinge","angle":180}
            {"event":"hinge","angle":10}
            {"event":"keyboard","visible":true}

            """.utf8).write(to: URL(fileURLWithPath: events))
        let r = try CommandRunner.run(["why", "--app", "builtin:tabs", "--events", events, "--item", "search", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSON.parse(Array(r.stdout.utf8))
        #expect(json["seq"] == .number(3) && json["rule"] == .string("Overflow and compression"))
        #expect(json["because"]?["input"] == .string("keyboard") && json["because"]?["seq"] == .number(3))
        let text = try CommandRunner.run(["why", "--app", "builtin:tabs", "--events", events, "--seq", "2"])
        #expect(text.status == 0 && text.stdout.contains("rule: Bar axis") && text.stdout.contains("because of seq 2"), "\(text.stdout)")
        let both = try CommandRunner.run(["why", "--events", events, "--item", "a", "--field", "barAxis"])
        #expect(both.status == 2 && both.stderr.contains("give one"))
        let unknown = try CommandRunner.run(["why", "--app", "builtin:tabs", "--events", events, "--item", "noSuchControl"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no control \"noSuchControl\""), "\(unknown.stderr)")
    }

    @Test("a large trace keeps its checkpoints beside it: the second question reads them and answers the same; a trace that grew gets new ones")
    func checkpointsBesideALargeTrace() throws {
        let dir = try RenderCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("large.jsonl").path
        let h = TraceHeader(daemon: "test", started: "2026-12-07T00:00:00Z", part: 0, reason: "start", config: .object([]),
                            layouts: false, monotonicOrigin: nil, t: 0, engine: Engine(app: BuiltinApps.app(named: "tabs")!))
        var bytes = h.encode() + [0x0A]
        var seq = 0
        func add(_ e: Event) {
            seq += 1
            TraceEncoding.appendEvent(TraceEvent(seq: seq, t: UInt64(seq) * 1_000_000, client: 1, envelope: EventEnvelope(event: e), digest: 0), to: &bytes)
        }
        while bytes.count < WhyCheckpointFile.minimumTraceBytes + 4096 {
            add(seq % 9_000 == 0 ? .keyboard(visible: seq % 18_000 == 0, height: nil) : .hinge(angle: Double(seq % 170) + 0.25))
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let ask = ["trace", "why", path, "--seq", String(seq - 3), "--item", "search", "--json"]
        let first = try CommandRunner.run(ask)
        #expect(first.status == 0 && first.stderr.contains("checkpoints"), "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: path + ".why"))
        let second = try CommandRunner.run(ask)
        #expect(second.status == 0 && !second.stderr.contains("kept"), "\(second.stderr)")
        #expect(second.stdout == first.stdout)
        let early = try CommandRunner.run(["trace", "why", path, "--seq", "5", "--json"])
        #expect(early.status == 0 && !early.stderr.contains("kept"), "before the first checkpoint: \(early.stderr)")
        add(.pip(active: true))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let grown = try CommandRunner.run(["trace", "why", path, "--seq", String(seq), "--field", "regions", "--json"])
        #expect(grown.status == 0 && grown.stderr.contains("kept"), "\(grown.stderr)")
        let json = try JSON.parse(Array(grown.stdout.utf8))
        #expect(json["because"]?["input"] == .string("pip") && json["because"]?["seq"] == .number(Double(seq)))
    }
}
