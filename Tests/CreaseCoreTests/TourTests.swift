import Foundation
import Testing
@testable import CreaseCore

/// Issue 39: `crease plan --tour` walks the phone once, with no reset, through every
/// observable class the rig's moves reach, and its estimate is the rig file's costs.
@Suite struct TourTests {
    static let motorRig = RigProfile(
        name: "motor", hinge: .init(fixed: 0.3, perDegree: 0.02),
        moves: RigProfile.Move.allCases.map { m -> Double? in
            switch m {
            case .orientation: 1.5
            case .pip, .liveActivities: 2
            case .splitView: 3
            case .layoutDirection: 15
            case .reduceTransparency: 8
            default: 1
            }
        },
        orientations: [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight], looks: [1.5, 2], reset: 20, observe: .pageSource)

    static func plan(_ name: String, rig: RigProfile = motorRig, observe: RigProfile.ObserveMode = .pageSource, depth: Int? = nil,
                     parts: Int = 1, budget: Double? = nil, done: Set<UInt64> = []) throws -> (App, Tour) {
        let app = builtin(name)
        let tour = try Tour.plan(app: app, profile: .builtin, rig: rig, from: DeviceState(app: app),
                                 options: .init(observe: observe, parts: parts, budget: budget, done: done, maxDepth: depth ?? (name == "tabs" ? 3 : 4)))
        return (app, tour)
    }

    @Test("the walk replays digest for digest from the start, with no reset and no load, and every step costs what the rig file says",
          arguments: BuiltinApps.names)
    func replaysAndCostsAsTheRigFileSays(app name: String) throws {
        let (app, tour) = try Self.plan(name)
        let steps = tour.parts[0].steps
        var engine = Engine(profile: .builtin, app: app)
        var sum = 0.0
        for (i, step) in steps.enumerated() {
            var cost = 0.0
            if let event = step.event {
                #expect(event.name != "app", "a tour never replaces the app")
                if case .orientation = event { Issue.record("step \(i + 1) sets an interface orientation directly") }
                cost = try #require(Self.motorRig.cost(of: event, from: engine.state))
                try engine.apply(event)
            } else {
                #expect(i == 0, "only a first look at the start has no event")
            }
            if step.why == .observe { cost += 1.5 }
            #expect(abs(step.cost - cost) < 1e-9, "step \(i + 1)")
            #expect(engine.digest == step.digest, "step \(i + 1)")
            sum += step.cost
        }
        #expect(abs(sum - tour.parts[0].seconds) < 1e-6)
        #expect(tour.parts[0].seconds >= tour.lowerBound - 1e-6)
    }

    @Test("every class the rig's exhaustive exploration reaches is observed once, with what a page source would show; the model's other classes are listed as unreachable",
          arguments: BuiltinApps.names)
    func everyClassIsObservedOnce(app name: String) throws {
        let (app, tour) = try Self.plan(name)
        let observes = tour.parts[0].steps.filter { $0.why == .observe }
        let classes = observes.map(\.classDigest)
        #expect(Set(classes).count == classes.count, "a class observed twice")
        #expect(classes.count == tour.classes && tour.unobserved == 0 && !tour.truncated)
        let graph = StateGraph.explore(app: app, profile: .builtin, from: DeviceState(app: app),
                                       inputs: TourPlanner.inputs(app: app, profile: .builtin, rig: Self.motorRig), maxDepth: name == "tabs" ? 3 : 4,
                                       closeFrontier: true, classify: PageSourceView.classDigest(of:))
        #expect(Set(graph.classOf) == Set(classes))
        let model = StateGraph.explore(app: app, profile: .builtin, from: DeviceState(app: app),
                                       inputs: ModelExplorer.inputs(app: app, profile: .builtin), maxDepth: name == "tabs" ? 3 : 4,
                                       closeFrontier: true, classify: PageSourceView.classDigest(of:))
        #expect(Set(model.classOf).subtracting(classes) == Set(tour.unreachable.map(\.classDigest)))
        for step in observes {
            #expect(step.expected.map(PageSourceView.classDigest(of:)) == step.classDigest)
        }
    }

    /// Two layouts of one class differ only where a page source does not look.
    @Test("layouts of one class differ only where a page source does not look: a control's title, the overflow menu, a sheet; a frame or an id makes another class")
    func oneClassOneView() throws {
        let app = builtin("tabs")
        let graph = StateGraph.explore(app: app, profile: .builtin, from: DeviceState(app: app),
                                       inputs: ModelExplorer.inputs(app: app, profile: .builtin), maxDepth: 2,
                                       classify: PageSourceView.classDigest(of:))
        let sharedClasses = Set((0..<graph.count).map { graph.classOf[$0] }).count
        #expect(sharedClasses < Set(graph.digest).count, "no two layouts share a class: the view would be the digest")
        let layout = LayoutBuilder.build(profile: .builtin, app: app, state: DeviceState(app: app))
        let before = PageSourceView.classDigest(of: layout)
        var unseen = layout
        unseen.bars[0].items[0].shows = unseen.bars[0].items[0].shows == .title ? .symbol : .title
        unseen.bars[0].overflow.append("somewhereElse")
        unseen.bars[0].background.toggle()
        #expect(PageSourceView.classDigest(of: unseen) == before)
        var moved = layout
        moved.bars[0].items[0].frame.y += 1
        #expect(PageSourceView.classDigest(of: moved) != before)
        var renamed = layout
        renamed.bars[0].items[0].id += "-renamed"
        #expect(PageSourceView.classDigest(of: renamed) != before)
    }

    @Test("--split: every class observed by exactly one part, each part from the start, the longest at most 1.25 × the total over N")
    func splitBalancesTheParts() throws {
        let (_, whole) = try Self.plan("split")
        for n in [2, 3] {
            let (_, tour) = try Self.plan("split", parts: n)
            #expect(tour.parts.count == n)
            let classes = tour.parts.flatMap { $0.steps.filter { $0.why == .observe }.map(\.classDigest) }
            #expect(classes.count == whole.classes && Set(classes).count == classes.count)
            let total = tour.parts.reduce(0) { $0 + $1.seconds }
            let longest = tour.parts.map(\.seconds).max()!
            #expect(longest <= 1.25 * total / Double(n), "parts \(tour.parts.map(\.seconds))")
        }
    }

    @Test("a budget cuts the walk before it would pass it and says so; classes already observed are not planned again")
    func budgetAndResume() throws {
        let (_, whole) = try Self.plan("split")
        let (_, cut) = try Self.plan("split", budget: 120)
        #expect(cut.truncated && cut.parts[0].seconds <= 120 && cut.unobserved > 0)
        #expect(cut.parts[0].observations + cut.unobserved == whole.classes)
        let seen = Set(cut.parts[0].steps.filter { $0.why == .observe }.map(\.digest))
        let (_, rest) = try Self.plan("split", done: seen)
        let again = Set(rest.parts[0].steps.filter { $0.why == .observe }.map(\.classDigest))
        #expect(again.isDisjoint(with: cut.parts[0].steps.filter { $0.why == .observe }.map(\.classDigest)))
        #expect(rest.classes == whole.classes - seen.count)
    }

    @Test("a rig that cannot select a tab or turn the phone reaches fewer classes, and each unreachable class names what would reach it")
    func unreachableClassesNameTheirNeed() throws {
        var rig = Self.motorRig
        rig.moves[RigProfile.Move.allCases.firstIndex(of: .select)!] = nil
        rig.moves[RigProfile.Move.allCases.firstIndex(of: .orientation)!] = nil
        rig.orientations = []
        let (_, full) = try Self.plan("tabs", depth: 3)
        let (_, tour) = try Self.plan("tabs", rig: rig, depth: 3)
        #expect(tour.classes < full.classes)
        let needs = Set(tour.unreachable.map(\.needs))
        #expect(needs.contains("select") && needs.contains(where: { $0.hasPrefix("orientation ") }))
        #expect(needs.isSubset(of: ["select", "orientation portrait", "orientation portraitUpsideDown", "orientation landscapeLeft",
                                    "orientation landscapeRight", "orientation faceUp", "orientation faceDown", "no device move"]))
        for step in tour.parts[0].steps {
            if case .select = step.event { Issue.record("the tour selects a tab on a rig that cannot") }
            if case .deviceOrientation = step.event { Issue.record("the tour turns a phone the rig cannot turn") }
        }
    }

    @Test("in digest mode every distinct layout is its own class")
    func digestModeCountsLayouts() throws {
        let (app, tour) = try Self.plan("split", observe: .digest, depth: 3)
        let graph = StateGraph.explore(app: app, profile: .builtin, from: DeviceState(app: app),
                                       inputs: TourPlanner.inputs(app: app, profile: .builtin, rig: Self.motorRig), maxDepth: 3)
        #expect(tour.classes == Set(graph.digest).count)
        #expect(tour.parts[0].steps.allSatisfy { $0.classDigest == $0.digest })
    }

    @Test("a rig file: every move given as seconds or null, unknown fields and bad values refused naming the field")
    func rigFileDecoding() throws {
        let good = """
        {"crease":"rig","version":1,"name":"r","moves":{"hinge":{"fixed":0.3,"perDegree":0.02},"orientation":1.5,"keyboard":1,"pip":2,
        "liveActivities":2,"splitView":3,"layoutDirection":null,"reduceTransparency":8,"select":1,"push":1,"pop":1,"present":1,
        "dismiss":1,"inspector":1},"orientations":["portrait","landscapeLeft"],"observations":{"page-source":1.5,"screenshot":null},
        "reset":20,"device":{"displays":{"outer":1,"inner":2}}}
        """
        let rig = try RigProfile.decode(json: Array(good.utf8))
        #expect(rig.cost(.layoutDirection) == nil && rig.cost(.pip) == 2 && rig.orientations == [.portrait, .landscapeLeft])
        #expect(rig.cost(of: .hinge(angle: 90), from: DeviceState(app: builtin("tabs"))) == 0.3 + 0.02 * 90)
        #expect(rig.cost(of: .orientation(.landscapeLeft), from: DeviceState(app: builtin("tabs"))) == nil)
        #expect(rig.cost(of: .deviceOrientation(.portraitUpsideDown), from: DeviceState(app: builtin("tabs"))) == nil)
        var w = JSONWriter()
        rig.write(to: &w)
        #expect(try RigProfile.decode(json: w.bytes) == rig)
        // A tilt stage may be left out (no stage), given, or null; it is written back either way.
        #expect(rig.motion == nil)
        let tilting = try RigProfile.decode(json: Array(good.replacingOccurrences(of: "\"inspector\":1}", with: "\"inspector\":1,\"motion\":{\"fixed\":0.5,\"perDegree\":0.02}}").utf8))
        #expect(tilting.motion == RigProfile.TiltCost(fixed: 0.5, perDegree: 0.02) && tilting.motion?.seconds(degrees: -10) == 0.7)
        var tw = JSONWriter()
        tilting.write(to: &tw)
        #expect(try RigProfile.decode(json: tw.bytes) == tilting)
        let cases: [(String, String, String)] = [
            ("\"inspector\":1}", "\"inspector\":1,\"motion\":{\"fixed\":0.5,\"perDegree\":0.02,\"tolerance\":1}}", "moves.motion.tolerance"),
            ("\"inspector\":1}", "\"inspector\":1,\"motion\":{\"fixed\":-1,\"perDegree\":0.02}}", "moves.motion.fixed"),
            ("\"pip\":2,", "", "moves.pip"),
            ("\"pip\":2", "\"pip\":-1", "moves.pip"),
            ("\"reset\":20", "\"reset\":20,\"resets\":1", "resets"),
            ("\"screenshot\":null", "\"screenshot\":null,\"video\":1", "observations.video"),
            ("\"page-source\":1.5", "\"page-source\":null", "observations"),
            ("\"landscapeLeft\"", "\"sideways\"", "orientations[1]"),
            ("\"version\":1", "\"version\":2", "version"),
        ]
        for (from, to, field) in cases {
            let bad = good.replacingOccurrences(of: from, with: to)
            #expect(bad != good)
            do {
                _ = try RigProfile.decode(json: Array(bad.utf8))
                Issue.record("\(to) was accepted")
            } catch {
                #expect(error.field == field, "\(to): \(error)")
            }
        }
    }

    @Test("--probes: after the walk, each hinge threshold is swept both ways inside and across its hysteresis band, looking on each side")
    func probesStraddleEachThreshold() throws {
        let app = builtin("split")
        let profile = DeviceProfile.builtin
        let tour = try Self.probed(app, rig: Self.motorRig, depth: 3)
        let probes = tour.parts[0].steps.filter { $0.why == .probe }
        #expect(!probes.isEmpty && tour.parts[0].steps.suffix(probes.count).allSatisfy { $0.why == .probe })
        // Replayed: the poses the looks see, against the angles.
        var looked: [(Double, Pose)] = []
        var engine = Engine(profile: profile, app: app)
        for step in tour.parts[0].steps {
            guard let e = step.event else { continue }
            try engine.apply(e)
            #expect(engine.digest == step.digest)
            if step.why == .probe, step.expected != nil, case .hinge(let a) = e { looked.append((a, engine.state.pose)) }
        }
        let h = profile.hingeHysteresis
        for (t, lower, upper) in [(profile.partialOpenThreshold, Pose.closed, Pose.partiallyOpen),
                                  (profile.fullyOpenThreshold, Pose.partiallyOpen, Pose.fullyOpen)] {
            let sweep = looked.filter { abs($0.0 - t) <= h + 1 }
            #expect(sweep.map(\.1) == [lower, upper, upper, lower], "around \(t): \(sweep)")
            #expect(sweep[0].0 < t + h && sweep[1].0 > t + h && sweep[2].0 > t - h && sweep[3].0 < t - h)
        }
        let sum = tour.parts[0].steps.reduce(0) { $0 + $1.cost }
        #expect(abs(sum - tour.parts[0].seconds) < 1e-6)
        var noHinge = Self.motorRig
        noHinge.hinge = nil
        #expect(throws: InputError.self) { _ = try Self.probed(app, rig: noHinge) }
    }

    /// A calibration leaves each threshold somewhere in an interval: the sweep is centred on
    /// its middle with δ at most a quarter of it, so the rising probes split it in three.
    @Test("--calibration: each threshold's sweep splits the interval the calibration left open")
    func probesInsideTheCalibratedInterval() throws {
        let profile = DeviceProfile.builtin
        let h = profile.hingeHysteresis
        #expect(TourProbes.sweep(20, profile: profile, within: 21...25) == [23 + h - 1, 23 + h + 1, 23 - h + 1, 23 - h - 1])
        // A narrow interval narrows δ: a quarter of 0.8°.
        let narrow = TourProbes.sweep(150, profile: profile, within: 158...158.8)
        #expect(narrow.map { ($0 * 100).rounded() / 100 } == [158.4 + h - 0.2, 158.4 + h + 0.2, 158.4 - h + 0.2, 158.4 - h - 0.2].map { ($0 * 100).rounded() / 100 })
        let app = builtin("split")
        let intervals = TourProbes.Intervals(partialOpen: 3...40, fullyOpen: 80...176.5)
        let tour = try Self.probed(app, rig: Self.motorRig, depth: 3, intervals: intervals)
        let angles = tour.parts[0].steps.filter { $0.why == .probe && $0.expected != nil }.compactMap { step -> Double? in
            if case .hinge(let a)? = step.event { a } else { nil }
        }
        #expect(angles == TourProbes.sweep(20, profile: profile, within: 3...40) + TourProbes.sweep(160, profile: profile, within: 80...176.5))
        // The rising probes either side of the middle bracket it: one below, one above.
        #expect(angles[0] - h < 21.5 && angles[1] - h > 21.5 && angles[4] - h < 128.25 && angles[5] - h > 128.25)
        #expect(throws: InputError.self) { _ = try Self.probed(app, rig: Self.motorRig, intervals: .init(partialOpen: 100...120, fullyOpen: 80...90)) }
    }

    /// A tour of `app` with `--probes` on `rig`, to depth 2 (3 for the hinge's sweeps of `split`).
    static func probed(_ app: App, rig: RigProfile, depth: Int = 2, intervals: TourProbes.Intervals = .init()) throws(InputError) -> Tour {
        try Tour.plan(app: app, profile: .builtin, rig: rig, from: DeviceState(app: app),
                      options: .init(observe: .pageSource, maxDepth: depth, probes: true, probeIntervals: intervals))
    }

    static var tiltRig: RigProfile {
        var rig = motorRig
        rig.motion = .init(fixed: 0.5, perDegree: 0.02)
        return rig
    }

    /// The device orientation after each looked-at motion probe, and the probes' positions, replayed with each sample's `ts`.
    static func replayMotionProbes(_ tour: Tour, app: App, profile: DeviceProfile) throws -> [(gravity: Gravity, orientation: DeviceOrientation?)] {
        var engine = Engine(profile: profile, app: app)
        var looked: [(Gravity, DeviceOrientation?)] = []
        for step in tour.parts[0].steps {
            guard let e = step.event else { continue }
            try engine.apply(e, at: step.ts)
            #expect(engine.digest == step.digest)
            if case .motion(let g) = e {
                #expect(step.ts != nil, "a motion probe without its read time")
                if step.expected != nil { looked.append((g, engine.state.deviceOrientation)) }
            }
        }
        return looked
    }

    @Test("--probes with a tilt stage: each boundary of the orientation filter (issue 25's hysteresis between adjacent orientations, the flat tilt) is swept both ways, each position held past the settle time, looking on each side")
    func motionProbesStraddleTheFilter() throws {
        let app = builtin("tabs")
        let profile = DeviceProfile.builtin
        let tour = try Self.probed(app, rig: Self.tiltRig)
        let looked = try Self.replayMotionProbes(tour, app: app, profile: profile)
        #expect(looked.map(\.orientation) == [.portrait, .landscapeLeft, .landscapeLeft, .portrait,
                                               .portrait, .landscapeRight, .landscapeRight, .portrait,
                                               .portrait, .faceUp, .faceUp, .portrait])
        // The angles either side of each boundary: 45° ± the hysteresis, and the flat tilt and its way back.
        let h = profile.orientationHysteresis, f = profile.flatTilt, hf = profile.flatHysteresis
        func roll(_ g: Gravity) -> Double { Foundation.atan2(abs(g.x), -g.y) * 180 / .pi }
        func tilt(_ g: Gravity) -> Double { Foundation.atan2(-g.z, -g.y) * 180 / .pi }
        for side in 0..<2 {
            let r = looked[side * 4..<side * 4 + 4].map { roll($0.gravity) }
            #expect(r[0] < 45 + h && r[1] > 45 + h && r[2] > 45 - h && r[3] < 45 - h, "\(r)")
            #expect(looked[side * 4 + 1].gravity.x * (side == 0 ? 1 : -1) < 0, "landscape left is gravity along −x")
        }
        let t = looked[8...].map { tilt($0.gravity) }
        #expect(t[0] < f && t[1] > f && t[2] > f - hf && t[3] < f - hf, "\(t)")
        // A crossing's first sample only proposes: the orientation turns at the held sample, a settle time later.
        let steps = tour.parts[0].steps
        let motion = steps.indices.filter { if case .motion? = steps[$0].event { true } else { false } }
        for i in motion where steps[i].expected != nil {
            #expect(steps[i - 1].event == steps[i].event)
            #expect(steps[i].ts! - steps[i - 1].ts! == Int64(MotionProbes.hold(profile: profile) * 1e9))
        }
        #expect(MotionProbes.hold(profile: profile) * 1000 > profile.orientationSettleMs)
        // The estimate is the rig file's costs: the stage's tilt by its degrees, the hold, the look.
        #expect(abs(steps.reduce(0) { $0 + $1.cost } - tour.parts[0].seconds) < 1e-6)
        #expect(steps.last!.ts! <= Int64((tour.parts[0].seconds * 1e9).rounded()))
        // Without a hinge the tilt stage's probes remain; with neither, --probes is refused.
        var noHinge = Self.tiltRig
        noHinge.hinge = nil
        let tilted = try Self.probed(app, rig: noHinge)
        #expect(tilted.parts[0].steps.allSatisfy { step in if case .hinge? = step.event { step.why != .probe } else { true } })
        #expect(try Self.replayMotionProbes(tilted, app: app, profile: profile).count == 12)
        noHinge.motion = nil
        #expect(throws: InputError.self) { _ = try Self.probed(app, rig: noHinge) }
    }

    @Test("--calibration places the tilt stage's sweeps in what the calibration left open of orientationHysteresis and flatTilt, and holds past orientationSettleMs's top")
    func motionProbesInsideTheCalibratedIntervals() throws {
        let profile = DeviceProfile.builtin
        let intervals = MotionProbes.Intervals(orientationHysteresis: 18...26, flatTilt: 70...71, orientationSettleMs: 80...250)
        let positions = MotionProbes.sweeps(profile: profile, within: intervals)
        let adjacent: [Double] = [66, 68, 24, 22]  // 45 ± 22 (the middle of 18…26) ∓ 1
        #expect(positions.prefix(4).map(\.degrees) == adjacent)
        // A 1° interval: δ a quarter of it, around its middle.
        let hf: Double = profile.flatHysteresis
        let flat: [Double] = [70.25, 70.75, 70.5 - hf + 0.25, 70.5 - hf - 0.25]
        #expect(positions.suffix(4).map(\.degrees) == flat)
        #expect(abs(MotionProbes.hold(profile: profile, within: intervals) - 0.35) < 1e-12)
        let app = builtin("tabs")
        let tour = try Self.probed(app, rig: Self.tiltRig, intervals: .init(motion: intervals))
        let looked = tour.parts[0].steps.compactMap { step -> Gravity? in
            if case .motion(let g)? = step.event, step.expected != nil { g } else { nil }
        }
        #expect(looked == positions.map(\.gravity))
    }
}
