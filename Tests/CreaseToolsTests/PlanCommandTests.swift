import CreaseCore
import Foundation
import Testing

/// `crease plan` and `crease coverage` as a rig engineer runs them.
@Suite struct PlanCommandTests {
    static let traces = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Traces")

    @Test("plan writes every layout's sequence; coverage says how many a trace showed and what to run next")
    func planThenCoverage() throws {
        let dir = NSTemporaryDirectory() + "crease-plan-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plan = try CommandRunner.run(["plan", "--app", "builtin:tabs", "--max-depth", "2", "--transitions", "-o", dir + "/plan.json"])
        #expect(plan.status == 0 && plan.stdout.contains("distinct layouts") && plan.stdout.contains("written to"), "\(plan.stdout)\(plan.stderr)")
        // JSON Lines in the tour's shape: a header, then a step per line, each sequence from its reset.
        let lines = try String(contentsOfFile: dir + "/plan.json", encoding: .utf8).split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
        let header = try #require(lines.first)
        let steps = Array(lines.dropFirst())
        #expect(header["crease"] == .string("plan") && header["version"] == .number(2) && header["truncated"] == .bool(false))
        #expect(header["steps"] == .number(Double(steps.count)))
        let looks = steps.filter { $0["why"] == .string("observe") }
        #expect(header["layouts"] == .number(Double(looks.filter { $0["from"] == nil }.count)) && header["sequences"] == header["layouts"])
        #expect(header["transitionSequences"] == .number(Double(looks.filter { $0["from"] != nil }.count)))
        #expect(steps.map { $0["step"] } == (1...steps.count).map { .number(Double($0)) })
        // The digest after every step is what crease layout --events computes for its sequence's events so far.
        let longest = try #require(steps.lazy.filter { $0["why"] == .string("observe") }.last { $0["from"] == nil }?["sequence"])
        let sequence = steps.filter { $0["sequence"] == longest }
        #expect(sequence.first?["event"] == .null && sequence.first?["digest"] == header["startDigest"] && sequence.count == 3)
        for k in 1..<sequence.count {
            let events = sequence[1...k].map { e -> String in
                var w = JSONWriter()
                w.value(e["event"]!)
                return String(decoding: w.bytes, as: UTF8.self)
            }.joined(separator: "\n") + "\n"
            let r = try CommandRunner.run(["layout", "--events", "-"], stdin: events)
            guard case .string(let digest)? = sequence[k]["digest"] else { Issue.record("step \(k) has no digest"); continue }
            #expect(r.status == 0 && r.stdout.contains(#""digest":"\#(digest)""#), "step \(k): \(r.stdout)")
        }
        let trace = Self.traces.appendingPathComponent("slow-unfold.jsonl").path
        let coverage = try CommandRunner.run(["coverage", "--plan", dir + "/plan.json", trace, "--json"])
        #expect(coverage.status == 0, "\(coverage.stderr)")
        let c = try JSON.parse(Array(coverage.stdout.utf8))
        guard case .number(let covered)? = c["covered"], case .number(let percent)? = c["percent"] else { Issue.record("no figures"); return }
        #expect(covered >= 3 && percent > 0 && percent < 100)
        let text = try CommandRunner.run(["coverage", "--plan", dir + "/plan.json", trace, "--min", "100"])
        #expect(text.status == 1 && text.stdout.contains("layouts ") && text.stdout.contains("next to run"))
        let bad = try CommandRunner.run(["coverage", "--plan", trace, trace])
        #expect(bad.status == 2 && bad.stderr.contains("not a plan"))
        let depth = try CommandRunner.run(["plan", "--max-depth", "0"])
        #expect(depth.status == 2 && depth.stderr.contains("--max-depth"))
    }

    @Test("coverage counts the frames a frame judge flagged, at the layout each refers to")
    func coverageCountsScreenFlags() throws {
        let scratch = Scratch()
        let plan = try CommandRunner.run(["plan", "--app", "builtin:tabs", "--max-depth", "1", "-o", scratch.path + "/plan.json"])
        #expect(plan.status == 0, "\(plan.stderr)")
        let daemon = try LiveDaemon(scratch, name: "judged")
        let lines = [#"{"event":"hinge","angle":180}"#, #"{"event":"pip","active":true}"#,
                     #"{"cmd":"frame","kind":"flash","t":5000000,"refSeq":1,"frame":12}"#,
                     #"{"cmd":"frame","kind":"unexpectedMotion","t":6000000,"refSeq":1,"frame":13}"#]
        #expect(try runProgram(Built.crease, ["send", "--socket", daemon.socket] + lines, in: scratch).status == 0)
        #expect(daemon.stop().status == 0)
        let trace = try daemon.traceFiles()[0]
        let coverage = try CommandRunner.run(["coverage", "--plan", scratch.path + "/plan.json", trace, "--json"])
        #expect(coverage.status == 0, "\(coverage.stderr)")
        let c = try JSON.parse(Array(coverage.stdout.utf8))
        #expect(c["frameVerdicts"] == .number(2))
        #expect(c["layouts"]?["screenFlagged"] == .number(1), "the hinge's layout, flagged twice")
        guard case .array(let flagged)? = c["screenFlaggedClasses"] else { Issue.record("no screenFlaggedClasses"); return }
        #expect(flagged.count == 1)
        let text = try CommandRunner.run(["coverage", "--plan", scratch.path + "/plan.json", trace])
        #expect(text.stdout.contains("screen       2 frames flagged by a frame judge, at 1 of the layouts"), "\(text.stdout)")
    }

    @Test("replay --to streams a plan into a daemon, a load before each sequence, and checks where each ends")
    func planIntoADaemon() throws {
        let scratch = Scratch()
        let plan = scratch.path + "/plan.json"
        #expect(try CommandRunner.run(["plan", "--app", "builtin:tabs", "--max-depth", "2", "--transitions", "-o", plan]).status == 0)
        let daemon = try LiveDaemon(scratch, name: "plain", ["--no-trace"])
        let sent = try runProgram(Built.crease, ["replay", plan, "--to", daemon.socket], in: scratch)
        #expect(sent.status == 0 && sent.stderr.contains("every sequence ends at the plan's digest"), "\(sent.stderr)")
        // One digest changed: the replay names the sequence that no longer ends there.
        var text = try String(contentsOfFile: plan, encoding: .utf8)
        let first = try #require(text.range(of: #""digest":""#))
        let digest = text[first.upperBound...].prefix(16)
        text.replaceSubrange(first.upperBound..<text.index(first.upperBound, offsetBy: 16), with: digest == "0000000000000000" ? "0000000000000001" : "0000000000000000")
        let tampered = scratch.path + "/tampered.json"
        try text.write(toFile: tampered, atomically: true, encoding: .utf8)
        let diverged = try runProgram(Built.crease, ["replay", tampered, "--to", daemon.socket], in: scratch)
        #expect(diverged.status == 1 && diverged.stdout.contains("divergence at sequence 1"), "\(diverged.stdout)\(diverged.stderr)")
        let other = scratch.path + "/split.json"
        #expect(try CommandRunner.run(["plan", "--app", "builtin:split", "--max-depth", "1", "-o", other]).status == 0)
        let wrongApp = try runProgram(Built.crease, ["replay", other, "--to", daemon.socket], in: scratch)
        #expect(wrongApp.status == 1 && wrongApp.stderr.contains("the plan is for \"Field Notes\""), "\(wrongApp.stderr)")
        let paced = try runProgram(Built.crease, ["replay", plan, "--to", daemon.socket, "--speed", "2"], in: scratch)
        #expect(paced.status == 2 && paced.stderr.contains("as fast as it goes"))
        #expect(daemon.stop().status == 0)
    }

    @Test("replay PLAN --to --looks rehearses a plan as a rig runs it: after each sequence, a page source's view of the layout it ends on, which matches; the trace holds a look a sequence")
    func planRehearsalWithLooks() throws {
        let scratch = Scratch()
        let plan = scratch.path + "/plan.jsonl"
        #expect(try CommandRunner.run(["plan", "--app", "builtin:sidebar", "--max-depth", "2", "-o", plan]).status == 0)
        let sequences = Set(try String(contentsOfFile: plan, encoding: .utf8).split(separator: "\n").dropFirst()
            .compactMap { line -> Double? in if case .number(let n)? = try JSON.parse(Array(line.utf8))["sequence"] { n } else { nil } }).count
        let daemon = try LiveDaemon(scratch, ["--app", "builtin:sidebar"])
        let ran = try runProgram(Built.crease, ["replay", plan, "--to", daemon.socket, "--looks"], in: scratch)
        #expect(ran.status == 0 && ran.stderr.contains("\(sequences) looks: \(sequences) match"), "\(ran.stderr)")
        #expect(daemon.stop().status == 0)
        let records = try String(contentsOfFile: try daemon.traceFiles()[0], encoding: .utf8).split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
        let looks = records.filter { $0["observe"] != nil }
        #expect(looks.count == sequences && looks.allSatisfy { $0["verdict"] == .string("match") })
        let alone = try runProgram(Built.crease, ["replay", plan, "--looks"], in: scratch)
        #expect(alone.status == 2 && alone.stderr.contains("--looks"), "\(alone.stderr)")
    }
}
