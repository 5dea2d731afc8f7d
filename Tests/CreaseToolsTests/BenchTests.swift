import CreaseCore
import CreaseDaemonCore
@testable import CreaseTools
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// `crease bench`: the scenarios run and print well-formed reports with tiny counts.
/// No figure is asserted: timings belong to `crease bench` on a quiet machine, not to tests.
@Suite struct BenchTests {
    @Test("the synthetic large app has 6 tabs, 40 toolbar items and a split view with an inspector, and lays out")
    func largeApp() throws {
        let app = LargeApp.app()
        guard case .tabView(let tabs) = app.containers[app.root] else {
            Issue.record("the root is not a tab view")
            return
        }
        #expect(tabs.tabs.count == 6)
        #expect(app.screens.reduce(0) { $0 + $1.toolbar.count } == 40)
        let splits = app.containers.compactMap { c -> SplitSpec? in if case .splitView(let s) = c { s } else { nil } }
        #expect(splits.count == 1)
        #expect(splits.first.map { app.screens[$0.detail].inspector != nil } == true)
        var engine = Engine(app: app)
        try engine.apply(.hinge(angle: 175))
        try engine.apply(.inspector(presented: true))
        #expect(engine.layout.inspector != nil)
        #expect(engine.layout.columns.count >= 2)
    }

    @Test("every driver of the core scenario is accepted by the engine on every app, and the largest built-in app is named")
    func coreDrivers() throws {
        for c in CoreScenario.apps() {
            let (drivers, notes) = CoreScenario.drivers(for: c.app)
            #expect(!notes.contains { $0.hasPrefix("left out") }, "\(c.name): \(notes)")
            #expect(drivers.contains { $0.name == "hinge" } && drivers.contains { $0.name == "app" })
            // Misses: the timed event must find inputs never seen, so the keyboard heights do not repeat within the cache.
            let heights = Set((0..<9).map { i -> Double in
                if case .keyboard(_, let h?) = CoreScenario.freshKeyboard(i) { h } else { -1 }
            })
            #expect(heights.count == 9 && !heights.contains(-1))
            // --core-events names them: every driver is in the list, in the list's order.
            #expect(drivers.map(\.name) == CoreScenario.driverNames.filter { name in drivers.contains { $0.name == name } })
        }
        #expect(CoreScenario.apps().map(\.name) == BuiltinApps.names + [LargeApp.name])
        // Every event kind is timed by some driver (on the built-in apps that have what it acts on).
        let driven = Set(CoreScenario.apps().flatMap { c in CoreScenario.drivers(for: c.app).drivers.flatMap { $0.cycle.map(\.kind) } })
        for kind in EventKind.allCases { #expect(driven.contains(kind), "no core bench driver sends \(kind.rawValue)") }
    }

    @Test("a distribution taken from the daemon's histogram keeps its quantiles in order and ends its curve at the max")
    func distribution() {
        var h = LatencyHistogram(budgetNs: 1000)
        for v in 1...10_000 { h.record(UInt64(v)) }
        let d = Distribution(label: "x", histogram: h, withBudget: true)
        #expect(d.count == 10_000)
        #expect(d.p50Ns <= d.p90Ns && d.p90Ns <= d.p99Ns && d.p99Ns <= d.p999Ns && d.p999Ns <= d.maxNs)
        #expect(d.maxNs == 10_000)
        #expect(d.overBudget == 9_000)
        #expect(d.curve.last == Distribution.CurvePoint(quantile: 1, ns: 10_000))
        #expect(d.curve.map(\.quantile) == d.curve.map(\.quantile).sorted())
        // 10,000 values resolve quantiles up to 99.99 %, not beyond.
        #expect(d.curve.dropLast().last.map { $0.quantile > 0.9998 && $0.quantile < 0.99991 } == true)
    }

    @Test("targets say met or missed, and by how much")
    func targets() {
        let over = TargetCheck(name: "p50", measured: 3, bound: .atMost, limit: 2, unit: "us")
        #expect(!over.met && over.margin == "1.50x over")
        let short = TargetCheck(name: "rate", measured: 100_000, bound: .atLeast, limit: 200_000, unit: "events/s")
        #expect(!short.met && short.margin == "2.00x short")
        #expect(TargetCheck(name: "p99", measured: 999, bound: .below, limit: 1000, unit: "us").met)
        #expect(!TargetCheck(name: "p99", measured: 1000, bound: .below, limit: 1000, unit: "us").met)
    }

    @Test("numbers in replies are read without building JSON")
    func replyBytes() {
        let line = Array(#"{"id":7,"ok":true,"seq":12,"changed":false,"digest":"00ff","latencyUs":3.25}"#.utf8)
        line.withUnsafeBytes { b in
            #expect(ReplyBytes.number(after: "\"latencyUs\":", in: b) == 3.25)
            #expect(ReplyBytes.number(after: "\"seq\":", in: b) == 12)
            #expect(ReplyBytes.number(after: "\"digest\":", in: b) == nil)
            #expect(ReplyBytes.number(after: "\"missing\":", in: b) == nil)
            #expect(ReplyBytes.hasPrefix(b, "{\"id\":7"))
        }
    }

    @Test("crease bench core --quick --json prints a well-formed report for every app and mode")
    func coreQuick() throws {
        let r = try CommandRunner.run(["bench", "core", "--quick", "--json", "--quiet", "--core-count", "20"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let machine = try #require(json["machine"] as? [String: Any])
        #expect((machine["cores"] as? Int ?? 0) >= 1)
        #expect(["debug", "release"].contains(machine["build"] as? String ?? ""))
        let scenarios = try #require(json["scenarios"] as? [[String: Any]])
        #expect(scenarios.map { $0["name"] as? String } == ["core"])
        let others = try #require(scenarios[0]["othersCPU"] as? Double)
        #expect(others >= 0 && others <= 1)
        let groups = try #require(scenarios[0]["groups"] as? [[String: Any]])
        #expect(groups.count == 4)
        for g in groups {
            let rows = try #require(g["distributions"] as? [[String: Any]])
            #expect(rows.compactMap { ($0["label"] as? String)?.split(separator: " ").last.map(String.init) } == ["unchanged", "hit", "miss", "scratch"])
            for d in rows { try checkQuantiles(d) }
        }
        let detail = try #require(scenarios[0]["detail"] as? [[String: Any]])
        #expect(detail.count == 16)
        let targets = try #require(scenarios[0]["targets"] as? [[String: Any]])
        // tabs: miss, scratch, unchanged, motion over hinge; large: miss.
        #expect(targets.count == 5)
        #expect(targets.contains { ($0["name"] as? String)?.hasPrefix("motion sample that changes nothing") == true && $0["unit"] as? String == "x" })
        #expect(targets.compactMap { $0["name"] as? String }.last == "incremental relayout p50 (cache miss), large")
        #expect(targets.allSatisfy { $0["met"] is Bool })
    }

    @Test("the socket scenarios run against a real creased and the echo server, lose nothing, and draw an SVG")
    func socketScenariosQuick() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bench-test-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let svg = dir.appendingPathComponent("bench.svg").path
        let r = try CommandRunner.run(["bench", "rtt", "stream", "burst", "replay", "memory", "--quick", "--json", "--quiet",
                                       "--stream-subscribers", "1,3", "--svg", svg])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let scenarios = try #require(json["scenarios"] as? [[String: Any]])
        #expect(scenarios.map { $0["name"] as? String } == ["rtt", "stream", "burst", "replay", "memory"])
        for s in scenarios {
            #expect((s["problems"] as? [String])?.isEmpty == true, "\(s["name"] ?? ""): \(s["problems"] ?? "")")
            for g in s["groups"] as? [[String: Any]] ?? [] {
                for d in g["distributions"] as? [[String: Any]] ?? [] { try checkQuantiles(d) }
            }
        }
        let rtt = try #require(scenarios.first?["groups"] as? [[String: Any]])
        #expect(rtt.count == 2)   // same core, then split
        for g in rtt {
            let rows = try #require(g["distributions"] as? [[String: Any]])
            #expect(rows.count == 3)
            #expect(rows.allSatisfy { $0["count"] as? Int == 300 })
        }
        let stream = scenarios[1]
        let figures = try #require(stream["figures"] as? [[String: Any]])
        let dropped = figures.filter { ($0["name"] as? String)?.hasSuffix("dropped") == true }
        #expect(dropped.count == 2 && dropped.allSatisfy { $0["value"] as? Double == 0 })

        let polylines = try SVGCounter.polylines(in: Data(contentsOf: URL(fileURLWithPath: svg)))
        let drawn = scenarios.flatMap { ($0["groups"] as? [[String: Any]]) ?? [] }
            .flatMap { ($0["distributions"] as? [[String: Any]]) ?? [] }
            .filter { ($0["count"] as? Int ?? 0) > 0 }
        #expect(polylines == drawn.count)
    }

    @Test("observe times an event, a matching and a mismatching observation against a real creased")
    func observeQuick() throws {
        let r = try CommandRunner.run(["bench", "observe", "--quick", "--json", "--quiet"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let scenario = try #require((json["scenarios"] as? [[String: Any]])?.first)
        #expect(scenario["name"] as? String == "observe")
        // The scenario checks each kind got the answer it should (ok, match, mismatch).
        #expect((scenario["problems"] as? [String])?.isEmpty == true, "\(scenario["problems"] ?? "")")
        let rows = try #require((scenario["groups"] as? [[String: Any]])?.first?["distributions"] as? [[String: Any]])
        #expect(rows.count == 3 && rows.allSatisfy { $0["count"] as? Int == 100 })
        for d in rows { try checkQuantiles(d) }
    }

    @Test("plan explores and tours every built-in app and the large one, with states per second, tours per second and peak memory")
    func planQuick() throws {
        let r = try CommandRunner.run(["bench", "plan", "--quick", "--json", "--quiet"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let scenario = try #require((json["scenarios"] as? [[String: Any]])?.first)
        #expect(scenario["name"] as? String == "plan" && (scenario["problems"] as? [String])?.isEmpty == true)
        let figures = try #require(scenario["figures"] as? [[String: Any]])
        for app in ["tabs", "split", "sidebar", "large"] {
            for what in ["states explored", "tours", "peak RSS so far"] {
                let f = figures.first { $0["name"] as? String == "\(app): \(what)" }
                #expect((f?["value"] as? Double ?? 0) > 0, "\(app): \(what)")
            }
        }
    }

    @Test("bad usage exits 2")
    func usage() throws {
        #expect(try CommandRunner.run(["bench", "nonsense"]).status == 2)
        #expect(try CommandRunner.run(["bench", "stream", "--stream-subscribers", "1,x"]).status == 2)
        #expect(try CommandRunner.run(["bench", "core", "--core-count", "0"]).status == 2)
        #expect(try CommandRunner.run(["bench", "core", "--reply", "x"]).status == 2)
        #expect(try CommandRunner.run(["bench", "rtt", "--rtt-placement", "same,nowhere"]).status == 2)
        #expect(try CommandRunner.run(["bench", "core", "--core-events", "keyboard,fold"]).status == 2)
    }

    @Test("--core-events narrows the core scenario to those event drivers")
    func coreEvents() throws {
        let r = try CommandRunner.run(["bench", "core", "--quick", "--json", "--quiet", "--core-count", "20", "--core-apps", "tabs",
                                       "--core-modes", "miss", "--core-events", "keyboard,push/pop"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let scenarios = try #require(json["scenarios"] as? [[String: Any]])
        let detail = try #require(scenarios.first?["detail"] as? [[String: Any]])
        let rows = try #require(detail.first?["distributions"] as? [[String: Any]])
        #expect(rows.compactMap { $0["label"] as? String } == ["keyboard", "push", "pop"])
    }

    func checkQuantiles(_ d: [String: Any]) throws {
        let q = ["p50Ns", "p90Ns", "p99Ns", "p999Ns", "maxNs"].map { d[$0] as? Int ?? -1 }
        #expect(q.allSatisfy { $0 >= 0 }, "\(d)")
        #expect(q == q.sorted(), "quantiles out of order: \(d)")
        #expect((d["count"] as? Int ?? 0) > 0, "\(d)")
    }
}

/// Parses an SVG with libxml2 (any well-formedness error throws) and counts its polylines.
final class SVGCounter: NSObject, XMLParserDelegate {
    private var count = 0

    static func polylines(in data: Data) throws -> Int {
        let counter = SVGCounter()
        let parser = XMLParser(data: data)
        parser.delegate = counter
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.fileReadCorruptFile) }
        return counter.count
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if elementName == "polyline" { count += 1 }
    }
}
