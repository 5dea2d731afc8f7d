import CreaseCore
import CreaseDaemonCore

/// `observe`: what an observation costs the loop. One client, blocking round trips against
/// one creased, alternating blocks of: an event with an id (a hinge tick inside one pose,
/// as in `rtt`), a complete observation of the current layout (every item with its frame:
/// the most a rig can send, and a match, so every field is compared), and the same with
/// one item moved (a mismatch: the window is searched and the differences encoded).
/// All three see the same machine noise.
enum ObserveScenario {
    static let block = 250

    static func run(count: Int, settings: DaemonSettings, progress: Progress) throws -> ScenarioReport {
        try Children.scope { children in try measure(count: count, settings: settings, progress: progress, children: children) }
    }

    static func measure(count: Int, settings: DaemonSettings, progress: Progress, children: Children) throws -> ScenarioReport {
        var report = ScenarioReport(name: "observe")
        progress.phase("observe: \(Format.grouped(count)) round trips each of an event, a matching and a mismatching observation")
        let daemon = try DaemonSession(settings, tag: "observe")
        _ = children.add(daemon.child)
        _ = try RTTScenario.enterPose(daemon, scenario: "observe")
        // The daemon's layout, computed here the same way (the bench starts creased with the built-in app).
        var mirror = Engine(profile: .builtin, app: BuiltinApps.app(named: BuiltinApps.defaultName)!)
        try mirror.apply(.hinge(angle: 90))
        let matching = ObserveRequest(observed: Observation(describing: mirror.layout), id: .number(1))
        var moved = matching
        if let i = moved.observed.items?.firstIndex(where: { $0.frame != nil }) { moved.observed.items![i].frame!.y += 30 }
        let lines: [(label: String, line: [UInt8])] = [
            ("event with id -> reply", RTTScenario.lines(count: 1)[0]),
            ("observe, complete, match -> reply", matching.jsonBytes() + [0x0A]),
            ("observe, complete, one item moved: mismatch -> reply", moved.jsonBytes() + [0x0A]),
        ]
        report.setup.append("\(Format.grouped(count)) round trips of each kind, alternating blocks of \(block) (after 200 untimed each); one client, blocking reads")
        report.setup.append("observations of \(lines[1].line.count) and \(lines[2].line.count) bytes (\(matching.observed.items?.count ?? 0) items with frames, overflow, tab bar, sheet, columns); the event \(lines[0].line.count) bytes")
        report.setup.append(settings.description)

        var histograms = lines.map { _ in LatencyHistogram(budgetNs: .max) }
        var verdicts = lines.map { _ in "" }
        for l in lines {
            for _ in 0..<200 { _ = try RTTScenario.roundTrip(daemon.publisher, l.line) { _ in } }
        }
        var done = 0
        while done < count {
            let n = min(block, count - done)
            for (i, l) in lines.enumerated() {
                for _ in 0..<n {
                    histograms[i].record(try RTTScenario.roundTrip(daemon.publisher, l.line) { r in
                        if verdicts[i].isEmpty, let v = try? JSON.parse(r) {
                            if case .string(let s)? = v["verdict"] { verdicts[i] = s } else if v["ok"] == .bool(true) { verdicts[i] = "ok" }
                            else { verdicts[i] = String(decoding: r, as: UTF8.self) }
                        }
                    })
                }
            }
            done += n
            progress.update("observe", done: done, total: count)
        }
        for (expected, got) in zip(["ok", "match", "mismatch"], verdicts) where expected != got {
            report.problems.append("observe: expected \(expected), the daemon answered \(got)")
        }
        let rows = zip(lines, histograms).map { Distribution(label: $0.0.label, histogram: $0.1) }
        report.groups.append(DistributionGroup(title: "observe: round trips on one connection", rows: rows))
        report.figures.append(Figure(name: "observe (match) p50 / event p50", value: Double(rows[1].p50Ns) / Double(max(1, rows[0].p50Ns)), unit: "x"))
        report.figures.append(Figure(name: "observe (match) p99 / event p99", value: Double(rows[1].p99Ns) / Double(max(1, rows[0].p99Ns)), unit: "x"))
        report.figures.append(Figure(name: "observe (mismatch) p50 / event p50", value: Double(rows[2].p50Ns) / Double(max(1, rows[0].p50Ns)), unit: "x"))
        let stats = try daemon.stats()
        if stats.int("rejected") > 0 { report.problems.append("the daemon rejected \(stats.int("rejected")) lines") }
        if let p = daemon.stop() { report.problems.append(p) }
        return report
    }
}
