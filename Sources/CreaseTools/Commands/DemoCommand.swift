import CreaseCore

/// `crease demo`: the built-in app driven through a scripted session (unfold, rotate,
/// Live Activities, keyboard, a tab switch to a task screen, fold, Split View,
/// right-to-left), one line per layout change.
enum DemoCommand {
    static let usage = "crease demo [--app builtin:NAME|FILE] [--json]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let app = try Inputs.app(try args.option("--app"))
        let json = args.flag("--json")
        try args.finish()
        var engine = Engine(profile: .builtin, app: app)
        Console.out("crease demo: \(app.name) on \(engine.profileName)")
        Console.out(LayoutSummary.line(engine.layout, seq: engine.seq, digest: engine.digest))
        var applied = 0
        for step in DemoScript.steps(for: app) {
            if let caption = step.caption { Console.out("-- \(caption)") }
            for event in step.events {
                do {
                    applied += 1
                    guard try engine.apply(event) else { continue }
                } catch {
                    Console.err("demo: \(event.name) rejected: \(error)")
                    continue
                }
                if json { Console.out(bytes: engine.layoutJSON()) } else {
                    Console.out(LayoutSummary.line(engine.layout, seq: engine.seq, digest: engine.digest))
                }
            }
        }
        Console.out("crease demo: \(applied) events applied")
        return ExitStatus.success
    }
}

/// The demo's event script, shared by the in-process demo and the daemon demo.
public enum DemoScript {
    public struct Step {
        public var caption: String?
        public var events: [Event]
    }

    /// A noisy hinge sweep: the rig's encoder jitters by ±1.5° around each step.
    static func sweep(from a: Double, to b: Double, steps: Int) -> [Event] {
        (0...steps).map { i in
            let t = Double(i) / Double(steps)
            let jitter = [0.0, 1.5, -1.2, 0.7, -1.5, 1.1][i % 6]
            return .hinge(angle: min(180, max(0, a + (b - a) * t + jitter)))
        }
    }

    public static func steps(for app: App) -> [Step] {
        var s: [Step] = [
            Step(caption: "unfold slowly, with encoder noise around the thresholds", events: sweep(from: 0, to: 180, steps: 90)),
            Step(caption: "rotate the open device to landscape", events: [.orientation(.landscapeLeft)]),
            Step(caption: "three Live Activities arrive", events: [.liveActivities(count: 1), .liveActivities(count: 2), .liveActivities(count: 3)]),
            Step(caption: "keyboard up, then down", events: [.keyboard(visible: true, height: nil), .keyboard(visible: false, height: nil)]),
            Step(caption: "Picture in Picture", events: [.pip(active: true), .pip(active: false)]),
        ]
        if case .tabView(let t) = app.containers[app.root], t.tabs.count > 1 {
            s.append(Step(caption: "switch to a task screen", events: [.select(tab: t.tabs[1].id)]))
        }
        s += [
            Step(caption: "fold shut and hold the outer display in landscape", events: sweep(from: 180, to: 0, steps: 30) + [.orientation(.landscapeRight)]),
            Step(caption: "keyboard on the outer display in landscape", events: [.keyboard(visible: true, height: nil), .keyboard(visible: false, height: nil)]),
            Step(caption: "back to portrait, open flat, Split View on each side", events: [.orientation(.portrait), .hinge(angle: 180), .orientation(.landscapeLeft),
                                                                                          .splitView(.left), .splitView(.right), .splitView(.none)]),
            Step(caption: "right-to-left", events: [.layoutDirection(.rtl), .layoutDirection(.ltr)]),
            Step(caption: "Reduce Transparency", events: [.reduceTransparency(enabled: true), .reduceTransparency(enabled: false)]),
        ]
        return s
    }
}
