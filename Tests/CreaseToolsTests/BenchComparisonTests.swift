import CreaseCore
@testable import CreaseTools
import Foundation
import Testing

/// `crease bench --save / --compare / --instructions`: the comparison's verdicts and exit
/// status, the baseline file, callgrind's format, and the gate failing on a slower build.
@Suite struct BenchComparisonTests {
    static func repeats(_ figures: [(String, Better, [Double])]) -> BenchRepeats {
        BenchRepeats(figures: figures.map { ComparableFigure(key: $0.0, unit: "instructions", better: $0.1, values: $0.2) },
                     count: figures.map(\.2.count).max() ?? 0)
    }

    @Test("a figure 6 % worse than the baseline regresses at the default 5 % margin; 4 % worse, better, or better-higher do not")
    func verdicts() {
        let baseline = Self.repeats([
            ("instructions / round trip", .lower, [1000, 1000, 1000]),
            ("instructions / relayout", .lower, [2000, 2000, 2000]),
            ("burst / throughput", .higher, [100, 100, 100]),
            ("core / encode", .lower, [500, 500, 500]),
        ])
        let current = Self.repeats([
            ("instructions / round trip", .lower, [1060, 1060, 1060]),
            ("instructions / relayout", .lower, [2080, 2080, 2080]),
            ("burst / throughput", .higher, [120, 120, 120]),
            ("core / encode", .lower, [400, 400, 400]),
        ])
        let c = BenchComparison(baseline: baseline, at: "b.json", current: current, ran: ["instructions", "burst", "core"])
        #expect(c.rows.map(\.verdict) == [.regressed, .same, .improved, .improved])
        #expect(c.failed)
        #expect(c.regressions.map(\.key) == ["instructions / round trip"])
        #expect(c.rows[0].ratio == 1.06)
        // A throughput that falls by more than the margin regresses too.
        let slower = Self.repeats([("burst / throughput", .higher, [90, 90, 90])])
        let d = BenchComparison(baseline: baseline, at: "b.json", current: slower, ran: ["burst"])
        #expect(d.rows.map(\.verdict) == [.regressed])
        #expect(d.notRun == 3)
    }

    @Test("the spread either run's repeats showed widens the margin: a noisy figure is judged by its noise")
    func spreadWidensTheMargin() {
        let baseline = Self.repeats([("rtt / p50", .lower, [100, 120, 110])])   // spread 20/110
        let current = Self.repeats([("rtt / p50", .lower, [125, 125, 125])])   // 13.6 % worse
        let c = BenchComparison(baseline: baseline, at: "b.json", current: current, ran: ["rtt"])
        #expect(c.rows[0].verdict == .same)
        #expect(abs(c.rows[0].margin - 20.0 / 110) < 1e-12)
        let tight = BenchComparison(baseline: Self.repeats([("rtt / p50", .lower, [110, 110, 110])]), at: "b.json",
                                    current: current, ran: ["rtt"])
        #expect(tight.rows[0].verdict == .regressed)
        // --margin raises the floor.
        let wide = BenchComparison(baseline: Self.repeats([("rtt / p50", .lower, [110, 110, 110])]), at: "b.json",
                                   current: current, ran: ["rtt"], marginFloor: 0.2)
        #expect(wide.rows[0].verdict == .same && !wide.failed)
    }

    @Test("a baseline figure of a scenario that ran but was not measured fails the comparison; one of a scenario not run does not")
    func missingFigures() {
        let baseline = Self.repeats([("instructions / round trip", .lower, [1000]), ("memory / RSS", .lower, [30])])
        let current = Self.repeats([("instructions / relayout", .lower, [1000])])
        let c = BenchComparison(baseline: baseline, at: "b.json", current: current, ran: ["instructions"])
        #expect(c.rows.map(\.verdict) == [.missing, .new])
        #expect(c.failed)
        #expect(c.notRun == 1)
        #expect(c.summary.contains("1 of the baseline not measured"))
    }

    @Test("a baseline written by --save reads back with every value; a file that is not one is refused with what is wrong")
    func baselineFile() throws {
        let r = Self.repeats([("instructions / round trip", .lower, [6663, 6679, 6683]), ("burst / rate", .higher, [3.5e6])])
        let saved = BenchBaseline(command: "crease bench --instructions --save b.json", commit: "abc", machine: "m", repeats: r)
        let back = try BenchBaseline.decode(try JSON.parse(saved.json()), path: "b.json")
        #expect(back == saved)
        #expect(back.repeats.figures[0].median == 6679)
        for (text, expected) in [
            (#"{"figures":[]}"#, "no \"format\""),
            (#"{"format":"crease-bench-baseline","version":9,"repeats":1,"figures":[]}"#, "version 9"),
            (#"{"format":"crease-bench-baseline","version":1,"repeats":1,"figures":[{"key":"a","unit":"ns","better":"up","values":[1]}]}"#, "no \"better\""),
            (#"{"format":"crease-bench-baseline","version":1,"repeats":1,"figures":[{"key":"a","unit":"ns","better":"lower","values":[1]},{"key":"a","unit":"ns","better":"lower","values":[2]}]}"#, "appears twice"),
        ] {
            #expect(throws: UsageError.self) { try BenchBaseline.decode(try JSON.parse(Array(text.utf8)), path: "b.json") }
            do { _ = try BenchBaseline.decode(try JSON.parse(Array(text.utf8)), path: "b.json") } catch {
                #expect("\(error)".contains(expected), "\(error)")
            }
        }
    }

    @Test("callgrind's compressed names are resolved, and each callee's calls and inclusive cost are summed over its call sites")
    func callgrindFormat() throws {
        let text = """
            # callgrind format
            version: 1
            events: Ir
            summary: 5000

            fn=(1) main
            0 10
            cfn=(2) $s10CreaseCore13LayoutEncoderV6encode
            calls=3 0
            0 900
            cfn=(3) helper
            calls=1 0
            0 40
            fn=(3)
            0 40
            cfn=(2)
            calls=2 0
            +4 600
            totals: 5000
            """
        let p = try CallgrindProfile.parse(Array(text.utf8), path: "x.out")
        #expect(p.total == 5000)
        #expect(p.calls("13LayoutEncoderV6encode") == 5)
        #expect(p.inclusive("13LayoutEncoderV6encode") == 1500)
        #expect(p.inclusive("helper") == 40)
        #expect(p.function("absent") == nil)
        #expect(throws: CheckFailed.self) { try CallgrindProfile.parse(Array("events: Dr\nsummary: 1\n".utf8), path: "x.out") }
        #expect(throws: CheckFailed.self) { try CallgrindProfile.parse(Array("not a profile\n".utf8), path: "x.out") }
    }

    @Test("crease bench --save writes a baseline --compare reads: exit 1 against a baseline far faster, 0 against one far slower; a bad baseline fails first")
    func compareCommand() throws {
        let dir = try RenderCommandTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let saved = dir.appendingPathComponent("core.json").path
        let core = ["bench", "core", "--quick", "--quiet", "--core-count", "20", "--core-apps", "tabs", "--core-modes", "miss",
                    "--core-events", "keyboard"]
        let first = try CommandRunner.run(core + ["--repeat", "2", "--save", saved])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("== repeats") && first.stdout.contains("2 repeats"))
        let baseline = try BenchBaseline.read(saved)
        #expect(baseline.repeats.count == 2)
        #expect(baseline.repeats.figures.contains { $0.key.hasPrefix("core / ") && $0.key.hasSuffix(" / p50") && $0.values.count == 2 })
        // Timings are noisy: the baselines are a thousand times faster and slower, so the
        // verdict does not depend on this machine's load.
        func scaled(_ factor: Double) throws -> String {
            var b = baseline
            b = BenchBaseline(command: b.command, commit: b.commit, machine: b.machine,
                              repeats: BenchRepeats(figures: b.repeats.figures.map { f in
                                  var f = f
                                  f.values = f.values.map { f.better == .lower ? $0 * factor : $0 / factor }
                                  return f
                              }, count: b.repeats.count))
            let path = dir.appendingPathComponent("scaled-\(factor).json").path
            try Data(b.json()).write(to: URL(fileURLWithPath: path))
            return path
        }
        let faster = try CommandRunner.run(core + ["--repeat", "1", "--compare", try scaled(0.001)])
        #expect(faster.status == 1, "\(faster.stdout)")
        #expect(faster.stdout.contains("REGRESSED") && faster.stdout.contains("== comparison"))
        let slower = try CommandRunner.run(core + ["--repeat", "1", "--compare", try scaled(1000), "--json"])
        #expect(slower.status == 0, "\(slower.stdout)")
        let json = try JSON.parse(Array(slower.stdout.utf8))
        #expect(json["comparison"]?["failed"] == .bool(false))
        if case .array(let rows)? = json["comparison"]?["rows"] {
            #expect(!rows.isEmpty && rows.allSatisfy { $0["verdict"] == .string("improved") })
        } else {
            Issue.record("no comparison rows in --json")
        }
        // A baseline that is not one: refused before anything runs, exit 2.
        let bad = dir.appendingPathComponent("bad.json").path
        try Data("{}".utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try CommandRunner.run(core + ["--compare", bad])
        #expect(refused.status == 2 && refused.stderr.contains("not a bench baseline"), "\(refused.stderr)")
        let same = try CommandRunner.run(core + ["--compare", saved, "--save", saved])
        #expect(same.status == 2)
    }

    @Test("the instruction gate fails on a slower build: this debug build against the committed release baseline regresses on the round trip and the relayout miss")
    func instructionGateFailsOnASlowerBuild() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let committed = root.appendingPathComponent("benchmarks/instructions.json").path
        let baseline = try BenchBaseline.read(committed)
        #expect(baseline.repeats.figures.contains { $0.key == "instructions / round trip, tracing on" })
        #expect(baseline.repeats.figures.allSatisfy { $0.unit == "instructions" })
        let r = try CommandRunner.run(["bench", "--instructions", "--quick", "--quiet", "--repeat", "1", "--compare", committed, "--json"])
        #expect(r.status == 1, "\(r.stderr)")
        let json = try JSON.parse(Array(r.stdout.utf8))
        guard case .array(let rows)? = json["comparison"]?["rows"] else {
            Issue.record("no comparison in \(r.stdout.prefix(400))")
            return
        }
        func verdict(_ key: String) -> JSONValue? { rows.first { $0["key"] == .string(key) }?["verdict"] }
        #expect(verdict("instructions / round trip, tracing on") == .string("regressed"))
        #expect(verdict("instructions / relayout miss (tabs keyboard): event applied") == .string("regressed"))
        #expect(json["comparison"]?["failed"] == .bool(true))
    }
}
