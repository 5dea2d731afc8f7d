import CreaseCore
import CreaseDaemonCore

/// `core`: relayout latency in process, per event type, on each built-in app and the
/// synthetic large app, in four modes:
/// - `unchanged`: events that leave every layout input as it was (a hinge tick inside a
///   pose, a repeated value): the engine does no layout work;
/// - `hit`: two events alternating (fold and unfold, keyboard up and down, push and
///   pop), so every input was seen a moment ago and the engine's small cache of recent
///   layouts answers;
/// - `miss`: the same events, each preceded by an untimed keyboard-height change the
///   engine has never seen, so no timed event finds its inputs in the cache: the real
///   incremental relayout (scene reused where the UI state allows);
/// - `scratch`: `Engine.fromScratch` on the states those events lead to: no cache at all.
/// Every event is timed on its own with the monotonic clock.
enum CoreScenario {
    enum Mode: String, CaseIterable, Sendable { case unchanged, hit, miss, scratch }

    /// One kind of event the scenario drives, derived from the app.
    struct Driver {
        var name: String
        /// Events that alternate; together they revisit the same inputs.
        var cycle: [Event]
        /// Events that change no layout input once the first has been applied.
        var same: [Event]?
        /// An event with inputs never seen before, for the i-th miss (used instead of
        /// perturbing the state first, when the event itself can bring new inputs).
        var fresh: ((Int) -> Event)?
    }

    struct AppCase {
        var name: String
        var app: App
        var items: Int
    }

    /// A keyboard height the engine has not seen among its recent inputs (800 distinct values).
    static func freshKeyboard(_ i: Int) -> Event { .keyboard(visible: true, height: 200 + Double(i % 800) * 0.25) }

    /// The base state every driver starts from: open flat, portrait (the inner display,
    /// where split views, sidebars and the inspector column all apply).
    static let baseEvents: [Event] = [.hinge(angle: 175)]

    static func apps() -> [AppCase] {
        var out: [AppCase] = []
        for name in BuiltinApps.names {
            guard let app = BuiltinApps.app(named: name) else { continue }
            out.append(AppCase(name: name, app: app, items: itemCount(app)))
        }
        let large = LargeApp.app()
        out.append(AppCase(name: LargeApp.name, app: large, items: itemCount(large)))
        return out
    }

    /// Every declared item of the app: toolbars, overflow menus, inspectors, sheets, keyboard accessories.
    static func itemCount(_ app: App) -> Int {
        app.screens.reduce(0) { n, s in
            n + s.toolbar.count + s.overflowMenu.count + (s.inspector?.count ?? 0) + s.keyboardAccessory.count
                + s.sheets.reduce(0) { $0 + $1.toolbar.count }
        }
    }

    static func baseEngine(_ app: App) -> Engine {
        var e = Engine(profile: .builtin, app: app)
        for event in baseEvents { _ = try? e.apply(event) }
        return e
    }

    /// The drivers that apply to this app, each checked against the engine; the notes
    /// say which were left out and why.
    static func drivers(for app: App) -> (drivers: [Driver], notes: [String]) {
        var list: [Driver] = [
            Driver(name: "hinge", cycle: [.hinge(angle: 10), .hinge(angle: 175)], same: [.hinge(angle: 176.5), .hinge(angle: 178)]),
            // An IMU held still (noise under the hysteresis: no change); turned to landscape and
            // back, two samples each so the second finds the first held past the settle time.
            Driver(name: "motion", cycle: [.motion(Gravity(x: -1, y: 0.02, z: -0.1)), .motion(Gravity(x: -1, y: 0.02, z: -0.1)),
                                           .motion(Gravity(x: 0.01, y: -1, z: -0.1)), .motion(Gravity(x: 0.01, y: -1, z: -0.1))],
                   same: [.motion(Gravity(x: 0.01, y: -0.99, z: -0.1)), .motion(Gravity(x: -0.02, y: -1.01, z: -0.12))]),
            Driver(name: "orientation", cycle: [.orientation(.landscapeLeft), .orientation(.portrait)],
                   same: [.orientation(.portrait), .orientation(.portrait)]),
            // The lock only shows against a turned device: turned, locked to portrait, unlocked, turned back.
            Driver(name: "rotationLock", cycle: [.deviceOrientation(.landscapeLeft), .rotationLock(enabled: true), .rotationLock(enabled: false),
                                                 .deviceOrientation(.portrait)],
                   same: [.rotationLock(enabled: false), .rotationLock(enabled: false)]),
            Driver(name: "keyboard", cycle: [.keyboard(visible: true, height: nil), .keyboard(visible: false, height: nil)],
                   same: [.keyboard(visible: false, height: nil), .keyboard(visible: false, height: nil)], fresh: freshKeyboard),
            Driver(name: "pip", cycle: [.pip(active: true), .pip(active: false)], same: [.pip(active: false), .pip(active: false)]),
            Driver(name: "liveActivities", cycle: [.liveActivities(count: 2), .liveActivities(count: 0)],
                   same: [.liveActivities(count: 5), .liveActivities(count: 6)]),
            Driver(name: "splitView", cycle: [.splitView(.left), .splitView(.none)], same: [.splitView(.none), .splitView(.none)]),
            Driver(name: "layoutDirection", cycle: [.layoutDirection(.rtl), .layoutDirection(.ltr)],
                   same: [.layoutDirection(.ltr), .layoutDirection(.ltr)]),
            Driver(name: "reduceTransparency", cycle: [.reduceTransparency(enabled: true), .reduceTransparency(enabled: false)],
                   same: [.reduceTransparency(enabled: false), .reduceTransparency(enabled: false)]),
        ]
        var notes: [String] = []
        let base = baseEngine(app)
        func accepted(_ events: [Event]) -> Bool {
            var e = base
            for event in events { guard (try? e.apply(event, at: 0)) != nil else { return false } }
            return true
        }
        if case .tabView(let spec) = app.containers[app.root], spec.tabs.count > 1 {
            let current = spec.tabs[spec.initialSelection].id
            let other = spec.tabs[spec.initialSelection == 0 ? 1 : 0].id
            list.append(Driver(name: "select", cycle: [.select(tab: other), .select(tab: current)],
                               same: [.select(tab: current), .select(tab: current)]))
        }
        let stacks = app.containers.compactMap { c -> String? in
            if case .navigationStack(let s) = c, s.screens.count > 1 { return app.screens[s.screens[1]].id }
            return nil
        }
        var absent: [String] = []
        if let screen = stacks.first(where: { accepted([.push(screen: $0), .pop]) }) {
            list.append(Driver(name: "push/pop", cycle: [.push(screen: screen), .pop]))
        } else {
            absent.append("push/pop")
        }
        let sheets = app.screens.flatMap { $0.sheets.map(\.id) }
        if let sheet = sheets.first(where: { accepted([.present(sheet: $0), .dismiss]) }) {
            list.append(Driver(name: "present/dismiss", cycle: [.present(sheet: sheet), .dismiss]))
        } else {
            absent.append("present/dismiss")
        }
        if accepted([.inspector(presented: true)]) {
            list.append(Driver(name: "inspector", cycle: [.inspector(presented: true), .inspector(presented: false)],
                               same: [.inspector(presented: false), .inspector(presented: false)]))
        } else {
            absent.append("inspector")
        }
        if !absent.isEmpty {
            notes.append("no \(absent.joined(separator: ", ")): nothing on the visible screens to drive them")
        }
        list.append(Driver(name: "app", cycle: [.app(app)], fresh: { _ in .app(app) }))
        let checked = list.filter { d in
            let ok = accepted(d.cycle + (d.same ?? []))
            if !ok { notes.append("left out \(d.name): the engine rejects its events from the base state") }
            return ok
        }
        return (checked, notes)
    }

    /// Per-event and all-event histograms of one app in one mode.
    struct Measured {
        var perEvent: [(name: String, histogram: LatencyHistogram, changed: Int)] = []
        var all = LatencyHistogram(budgetNs: UInt64(BenchReport.frameNs))
        /// `Engine.releaseRetired` after each timed event: freeing what the relayout evicted,
        /// which the daemon does once it has replied, so it is timed apart.
        var released = LatencyHistogram(budgetNs: UInt64(BenchReport.frameNs))

        mutating func record(_ name: String, _ ns: UInt64, changed: Bool) {
            if let i = perEvent.firstIndex(where: { $0.name == name }) {
                perEvent[i].histogram.record(ns)
                if changed { perEvent[i].changed += 1 }
            } else {
                var h = LatencyHistogram(budgetNs: UInt64(BenchReport.frameNs))
                h.record(ns)
                perEvent.append((name, h, changed ? 1 : 0))
            }
            all.record(ns)
        }
    }

    /// Times `count` events of one driver in one mode (nothing, for a mode the driver has no events for).
    static func measure(_ d: Driver, mode: Mode, app: App, count: Int, into m: inout Measured) throws {
        var engine = baseEngine(app)
        // The engine's clock: 200 ms an event, past the orientation filter's settle time.
        var clock: Int64 = 0
        func tick() -> Int64 { clock += 200_000_000; return clock }
        switch mode {
        case .unchanged:
            guard let same = d.same else { return }
            for e in same { try engine.apply(e, at: tick()) }   // the first may change the inputs; then none does
            for i in 0..<count {
                let e = same[i % same.count]
                let at = tick()
                let t0 = Clock.now()
                let changed = try engine.apply(e, at: at)
                m.record(e.name, Clock.now() &- t0, changed: changed)
            }
        case .hit:
            guard d.cycle.count > 1 else { return }   // one event alone (app) never revisits
            for _ in 0..<2 { for e in d.cycle { try engine.apply(e, at: tick()) } }
            for i in 0..<count {
                let e = d.cycle[i % d.cycle.count]
                let at = tick()
                let t0 = Clock.now()
                let changed = try engine.apply(e, at: at)
                m.record(e.name, Clock.now() &- t0, changed: changed)
            }
        case .miss:
            for i in 0..<count {
                let e: Event
                if let fresh = d.fresh {
                    e = fresh(i)
                } else {
                    try engine.apply(freshKeyboard(i))
                    engine.releaseRetired()
                    e = d.cycle[i % d.cycle.count]
                }
                let at = tick()
                let t0 = Clock.now()
                let changed = try engine.apply(e, at: at)
                let t1 = Clock.now()
                m.record(e.name, t1 &- t0, changed: changed)
                engine.releaseRetired()
                m.released.record(Clock.now() &- t1)
            }
        case .scratch:
            var states: [(name: String, state: DeviceState, seq: Int)] = []
            for e in d.cycle {
                try engine.apply(e, at: tick())
                states.append((e.name, engine.state, engine.seq))
            }
            for i in 0..<count {
                let s = states[i % states.count]
                let t0 = Clock.now()
                let bytes = Engine.fromScratch(profile: engine.profile, app: engine.app, state: s.state, seq: s.seq)
                let ns = Clock.now() &- t0
                keep(bytes)
                m.record(s.name, ns, changed: true)
            }
        }
    }

    /// One event type's p50 over another's, both timed in the same mode of the same run.
    static func unchangedRatio(of name: String, to base: String, in rows: [(name: String, histogram: LatencyHistogram, changed: Int)]) -> Double? {
        guard let a = rows.first(where: { $0.name == name }), let b = rows.first(where: { $0.name == base }) else { return nil }
        let denominator = b.histogram.value(atQuantile: 0.5)
        guard denominator > 0 else { return nil }
        return Double(a.histogram.value(atQuantile: 0.5)) / Double(denominator)
    }

    /// Uses a result, so the optimizer cannot drop the work that made it.
    @inline(never)
    static func keep(_ bytes: [UInt8]) {
        precondition(bytes.first == UInt8(ascii: "{"), "a layout line starts with {")
    }

    /// Every driver's name, in the order the scenario runs them (each app drives those that apply to it).
    static let driverNames = ["hinge", "motion", "orientation", "rotationLock", "keyboard", "pip", "liveActivities", "splitView", "layoutDirection",
                              "reduceTransparency", "select", "push/pop", "present/dismiss", "inspector", "app"]

    /// `apps`, `modes` and `events` (driver names) narrow the run (nil: all), e.g. to profile one case.
    static func run(count: Int, apps names: [String]? = nil, modes: [Mode] = Mode.allCases, events: [String]? = nil,
                    progress: Progress) throws -> ScenarioReport {
        let cases = apps().filter { names?.contains($0.name) ?? true }
        var report = ScenarioReport(name: "core")
        report.setup.append("in process, one thread; \(Format.grouped(count)) timed events per event type and mode; every event timed alone")
        report.setup.append("base state: hinge 175 (fully open, inner display), portrait; then each event type alone")
        report.setup.append("apps: " + cases.map { "\($0.name) (\($0.items) items, \($0.app.screens.count) screens)" }.joined(separator: ", "))
        var allRows: [String: [Mode: Distribution]] = [:]
        var perEventUnchanged: [String: [(name: String, histogram: LatencyHistogram, changed: Int)]] = [:]
        for (index, c) in cases.enumerated() {
            let (all, notes) = drivers(for: c.app)
            let drivers = all.filter { events?.contains($0.name) ?? true }
            report.notes += notes.map { "\(c.name): \($0)" }
            var byMode: [(Mode, Measured)] = []
            for mode in modes {
                progress.phase("core: \(c.name) (\(index + 1)/\(cases.count)), \(mode.rawValue)")
                var m = Measured()
                for d in drivers { try measure(d, mode: mode, app: c.app, count: count, into: &m) }
                byMode.append((mode, m))
            }
            // The per-event matrix: p50 and p99 of each mode.
            var names: [String] = []
            for (_, m) in byMode { for r in m.perEvent where !names.contains(r.name) { names.append(r.name) } }
            var rows: [[String]] = []
            for name in names {
                var row = [name]
                for (_, m) in byMode {
                    if let r = m.perEvent.first(where: { $0.name == name }) {
                        row.append(Format.micros(r.histogram.value(atQuantile: 0.5)))
                        row.append(Format.micros(r.histogram.value(atQuantile: 0.99)))
                    } else {
                        row += ["-", "-"]
                    }
                }
                rows.append(row)
            }
            let header = ["event"] + modes.flatMap { ["\($0.rawValue) p50", "p99"] }
            report.tables.append(TextTable(title: "core \(c.name): per event type, microseconds", header: header, rows: rows))
            var group = DistributionGroup(title: "core \(c.name): all event types", rows: [])
            var modes: [Mode: Distribution] = [:]
            for (mode, m) in byMode {
                let d = Distribution(label: "\(c.name) \(mode.rawValue)", histogram: m.all)
                group.rows.append(d)
                modes[mode] = d
                report.detail.append(DistributionGroup(title: "core \(c.name) \(mode.rawValue): per event type",
                                                       rows: m.perEvent.map { Distribution(label: $0.name, histogram: $0.histogram) }))
            }
            if let (_, m) = byMode.first(where: { $0.0 == .miss }), m.released.count > 0 {
                report.notes.append("\(c.name) miss: freeing the layouts a relayout evicted from the recent cache (after the reply, "
                    + "as the daemon does), timed apart: p50 \(Format.micros(m.released.value(atQuantile: 0.5))) us, "
                    + "p99 \(Format.micros(m.released.value(atQuantile: 0.99))) us")
            }
            allRows[c.name] = modes
            perEventUnchanged[c.name] = byMode.first { $0.0 == .unchanged }?.1.perEvent
            report.groups.append(group)
        }
        // Targets (issue 14): the largest built-in app (by declared items), and the large app's
        // cache miss. (Only when that app was in the run: a narrowed run states no target for
        // another app.)
        let builtins = apps().filter { $0.name != LargeApp.name }
        if let largest = builtins.max(by: { $0.items < $1.items }), let m = allRows[largest.name] {
            report.setup.append("largest built-in app: \(largest.name) (\(largest.items) items)")
            if let miss = m[.miss] {
                report.targets.append(TargetCheck(name: "incremental relayout p50 (cache miss), \(largest.name)", measured: Double(miss.p50Ns) / 1000,
                                                  bound: .atMost, limit: 2, unit: "us"))
            }
            if let scratch = m[.scratch] {
                report.targets.append(TargetCheck(name: "relayout from scratch p50, \(largest.name)", measured: Double(scratch.p50Ns) / 1000,
                                                  bound: .atMost, limit: 10, unit: "us"))
            }
            if let unchanged = m[.unchanged] {
                report.targets.append(TargetCheck(name: "event that changes nothing p50 (issue 2), \(largest.name)",
                                                  measured: Double(unchanged.p50Ns) / 1000, bound: .atMost, limit: 1, unit: "us"))
            }
            if let ratio = unchangedRatio(of: "motion", to: "hinge", in: perEventUnchanged[largest.name] ?? []) {
                report.targets.append(TargetCheck(name: "motion sample that changes nothing, p50 over an unchanged hinge tick's (issue 25), \(largest.name)",
                                                  measured: ratio, bound: .atMost, limit: 2, unit: "x"))
            }
        }
        if let miss = allRows[LargeApp.name]?[.miss] {
            report.targets.append(TargetCheck(name: "incremental relayout p50 (cache miss), \(LargeApp.name)", measured: Double(miss.p50Ns) / 1000,
                                              bound: .atMost, limit: 4, unit: "us"))
        }
        return report
    }
}
