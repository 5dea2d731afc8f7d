import CreaseCore

/// `glitches`: how many layouts per second the glitch checker walks, in process. The
/// layouts are the engine's after each event of `crease gen`'s rig scenario at 1 kHz
/// (hinge sweeps with noise, rotations, the keyboard, Live Activities): what a daemon's
/// live check sees. Most events leave the layout as it was; a second figure walks only
/// the layouts that differ from the one before, the checker's whole work each time.
/// The layouts are computed first, untimed; each round checks them all with a fresh checker.
enum GlitchScenario {
    struct Frame {
        var layout: Layout
        var seq: Int
        var t: UInt64
        var digest: UInt64
        var event: CheckedEvent
    }

    static func run(count: Int, rounds: Int, progress: Progress) -> ScenarioReport {
        var report = ScenarioReport(name: "glitches")
        progress.phase("glitches: laying out \(Format.grouped(count)) events of the rig scenario")
        let app = BuiltinApps.app(named: BuiltinApps.defaultName)!
        var engine = Engine(profile: .builtin, app: app)
        var frames: [Frame] = []
        frames.reserveCapacity(count)
        for g in DaemonScenarios.generate(.rig, seed: 4, count: count) {
            guard (try? engine.apply(g.event)) != nil else { continue }
            let t = g.offsetNs
            frames.append(Frame(layout: engine.layout, seq: engine.seq, t: t, digest: engine.digest,
                                event: CheckedEvent(seq: engine.seq, t: t, event: g.event, latencyNs: nil)))
        }
        var changed: [Frame] = []
        for f in frames where f.digest != changed.last?.digest { changed.append(f) }

        progress.phase("glitches: \(rounds) rounds over \(Format.grouped(frames.count)) layouts")
        var glitches = 0
        let all = best(of: rounds, frames, app: app, glitches: &glitches)
        var changedGlitches = 0
        let onlyChanged = best(of: rounds, changed, app: app, glitches: &changedGlitches)
        let rate = Double(frames.count) / (Double(max(1, all)) / 1e9)
        let changedRate = Double(changed.count) / (Double(max(1, onlyChanged)) / 1e9)
        report.setup.append("\(Format.grouped(frames.count)) layouts after the events of crease gen's rig scenario (seed 4, 1 kHz), \(Format.grouped(changed.count)) of them differing from the one before; app \(app.name); best of \(rounds) rounds, a fresh checker each")
        report.figures.append(Figure(name: "rig stream (event + layout each)", value: rate.rounded(), unit: "layouts/s"))
        report.figures.append(Figure(name: "time per layout, rig stream", value: Double(all) / Double(max(1, frames.count)), unit: "ns"))
        report.figures.append(Figure(name: "changed layouts only", value: changedRate.rounded(), unit: "layouts/s"))
        report.figures.append(Figure(name: "time per changed layout", value: Double(onlyChanged) / Double(max(1, changed.count)), unit: "ns"))
        report.notes.append("glitches found per round: \(glitches) in the rig stream, \(changedGlitches) over the changed layouts alone")
        report.targets.append(TargetCheck(name: "glitch checking, rig stream", measured: rate, bound: .atLeast, limit: 500_000, unit: "layouts/s"))
        return report
    }

    /// The fastest of `rounds` walks over `frames`, in ns.
    static func best(of rounds: Int, _ frames: [Frame], app: App, glitches: inout Int) -> UInt64 {
        var fastest = UInt64.max
        for _ in 0..<max(1, rounds) {
            var checker = GlitchChecker(app: app)
            var found = 0
            let start = Clock.now()
            for f in frames {
                found &+= checker.check(event: f.event).count
                found &+= checker.check(layout: f.layout, seq: f.seq, t: f.t, digest: f.digest).count
            }
            fastest = min(fastest, Clock.now() &- start)
            glitches = found
        }
        return fastest
    }
}
