import Testing
@testable import CreaseCore

/// Issue 27: `crease plan` explores every state reachable from the start over one value
/// per input class, and gives the shortest sequence to each distinct layout.
@Suite struct PlanTests {
    @Test("every sequence, replayed from the start, shows the layout it names; digests are distinct, shortest first",
          arguments: BuiltinApps.names)
    func sequencesShowTheirLayouts(app name: String) throws {
        let app = builtin(name)
        let result = ModelExplorer.explore(app: app, profile: .builtin, from: DeviceState(app: app), options: .init(maxDepth: 3))
        #expect(!result.truncated && result.layouts == result.sequences.count && Set(result.digests).count == result.digests.count)
        #expect(result.sequences.first?.events == [] && result.states >= result.layouts)
        #expect(zip(result.sequences, result.sequences.dropFirst()).allSatisfy { $0.events.count <= $1.events.count })
        for s in result.sequences {
            var e = Engine(profile: .builtin, app: app)
            for event in s.events { try e.apply(event) }
            #expect(e.digest == s.digest && e.state.pose == s.pose && e.state.orientation == s.orientation)
        }
    }

    /// The value classes are enough: a finer sampling (every 15° of the hinge, device
    /// orientations and the rotation lock, Live Activities past where the island stops)
    /// reaches no layout the plan lacks, at the same depth.
    @Test("a finer sampling of the inputs finds no layout the plan misses", arguments: BuiltinApps.names)
    func finerSamplingFindsNothingMore(app name: String) {
        let app = builtin(name)
        let depth = name == "tabs" ? 2 : 3
        let plan = ModelExplorer.explore(app: app, profile: .builtin, from: DeviceState(app: app), options: .init(maxDepth: depth))
        var finer = ModelExplorer.inputs(app: app, profile: .builtin)
        finer += stride(from: 0.0, through: 180, by: 15).map { Event.hinge(angle: $0) }
        finer += DeviceOrientation.allCases.map { Event.deviceOrientation($0) } + [.rotationLock(enabled: true), .rotationLock(enabled: false)]
        finer += (4...6).map { Event.liveActivities(count: $0) }
        let fine = ModelExplorer.explore(app: app, profile: .builtin, from: DeviceState(app: app), options: .init(maxDepth: depth), inputs: finer)
        let missed = Set(fine.digests).subtracting(plan.digests)
        #expect(missed.isEmpty, "\(name): \(missed.count) layouts the plan misses")
        #expect(fine.states >= plan.states)
    }

    @Test("with transitions, every distinct layout change has a sequence ending in it; the state bound cuts and says so")
    func transitionsAndTheBound() throws {
        let app = builtin("split")
        let r = ModelExplorer.explore(app: app, profile: .builtin, from: DeviceState(app: app), options: .init(maxDepth: 2, transitions: true))
        #expect(!r.transitionSequences.isEmpty)
        for s in r.transitionSequences.prefix(200) {
            var e = Engine(profile: .builtin, app: app)
            for event in s.events.dropLast() { try e.apply(event) }
            #expect(e.digest == s.from)
            try e.apply(s.events.last!)
            #expect(e.digest == s.digest && s.from != s.digest)
        }
        let cut = ModelExplorer.explore(app: app, profile: .builtin, from: DeviceState(app: app), options: .init(maxStates: 50))
        #expect(cut.truncated && cut.states == 50)
    }
}
