/// A tour as a rig runs it (`crease plan --tour`, docs/plan.md): the walk's steps as
/// events with the digest after each, the classes the rig's moves cannot reach with what
/// would reach them, the estimate and its bound.
public struct Tour: Sendable {
    public struct Options: Sendable {
        public var observe: RigProfile.ObserveMode
        public var parts: Int
        public var budget: Double?
        /// Layout digests already observed (`--resume`): their classes are not planned again.
        public var done: Set<UInt64>
        /// Classes already observed (a tour's coverage, by the same observe mode).
        public var doneClasses: Set<UInt64>
        public var maxDepth: Int
        public var maxStates: Int
        /// Sweeps across the hinge thresholds (`TourProbes`) and, with a tilt stage, the
        /// orientation filter's boundaries (`MotionProbes`) at the end of the first part.
        public var probes: Bool
        /// Where the sweeps go, from a calibration (`--calibration`); empty: the profile's thresholds.
        public var probeIntervals: TourProbes.Intervals

        public init(observe: RigProfile.ObserveMode, parts: Int = 1, budget: Double? = nil, done: Set<UInt64> = [],
                    doneClasses: Set<UInt64> = [], maxDepth: Int = 64, maxStates: Int = 200_000, probes: Bool = false,
                    probeIntervals: TourProbes.Intervals = TourProbes.Intervals()) {
            self.doneClasses = doneClasses
            self.probes = probes
            self.probeIntervals = probeIntervals
            self.observe = observe
            self.parts = parts
            self.budget = budget
            self.done = done
            self.maxDepth = maxDepth
            self.maxStates = maxStates
        }
    }

    public struct Step: Sendable {
        public var event: Event?
        public var digest: UInt64
        public var classDigest: UInt64
        public var cost: Double
        public var why: TourPlanner.Why
        /// At an observe step: what the rig should see (its page-source view).
        public var expected: Observation?
        /// A `motion` probe's read time on the tour's axis (ns from its start): the settle
        /// time is measured between samples, so the gap between two of them is part of the tour.
        public var ts: Int64? = nil
    }

    public struct Part: Sendable {
        public var steps: [Step]
        public var seconds: Double
        public var observations: Int
    }

    /// A class the model reaches and this rig's moves do not.
    public struct Unreachable: Sendable {
        public var classDigest: UInt64
        public var digest: UInt64
        public var expected: Observation
        /// The cheapest capability the rig lacks that would reach it, or "no device move"
        /// (a layout only the model's shortcuts reach: an interface orientation set directly).
        public var needs: String
    }

    public var parts: [Part]
    /// The layout digest of the start state: where a daemon must be before the tour runs.
    public var startDigest: UInt64
    /// Classes the rig can reach and the tour was to observe.
    public var classes: Int
    public var unreachable: [Unreachable]
    public var unobserved: Int
    public var lowerBound: Double
    public var truncated: Bool
    /// States of the rig's graph, and of the model's own (for the unreachable classes).
    public var states: Int
    public var statesTruncated: Bool

    public static func plan(app: App, profile: DeviceProfile, rig: RigProfile, from start: DeviceState, options: Options) throws(InputError) -> Tour {
        guard let look = rig.lookCost else { throw InputError(.badValue, "the rig cannot look: give observations.page-source or observations.screenshot") }
        let classify: (Layout) -> UInt64
        switch options.observe {
        case .digest: classify = { DigestAlgorithm.crease64v.digest($0.encodeBody()) }
        case .pageSource: classify = { PageSourceView.classDigest(of: $0) }
        }
        func explore(_ inputs: [Event]) -> StateGraph {
            StateGraph.explore(app: app, profile: profile, from: start, inputs: inputs, maxDepth: options.maxDepth,
                               maxStates: options.maxStates, closeFrontier: true, classify: classify)
        }
        let graph = explore(TourPlanner.inputs(app: app, profile: profile, rig: rig))
        var done = options.doneClasses
        for s in 0..<graph.count where options.done.contains(graph.digest[s]) { done.insert(graph.classOf[s]) }
        let walk = TourPlanner.walk(graph, costs: TourPlanner.edgeCosts(graph, rig: rig), look: look, done: done, parts: options.parts,
                                    budget: options.budget)

        func view(_ state: DeviceState) -> Observation {
            PageSourceView.observation(of: LayoutBuilder.build(profile: profile, app: app, state: state))
        }
        var parts = walk.parts.map { part in
            Part(steps: part.steps.map { s in
                Step(event: s.edge.map { graph.inputs[Int(graph.edgeInput[$0])] }, digest: graph.digest[s.state],
                     classDigest: graph.classOf[s.state], cost: s.cost, why: s.why,
                     expected: s.why == .observe ? view(graph.states[s.state]) : nil)
            }, seconds: part.seconds, observations: part.observations)
        }
        // The probes are fixed steps: the bound counts them as they are.
        var lowerBound = walk.lowerBound
        if options.probes {
            var state = walk.parts[0].steps.last.map { graph.states[$0.state] } ?? start
            var probes: [Step] = []
            if rig.hinge != nil {
                let lower = TourProbes.sweep(profile.partialOpenThreshold, profile: profile, within: options.probeIntervals.partialOpen)
                let upper = TourProbes.sweep(profile.fullyOpenThreshold, profile: profile, within: options.probeIntervals.fullyOpen)
                guard lower.max()! < upper.min()! else {
                    throw InputError(.badValue, "the calibration's intervals put the partly-open sweep (up to \(lower.max()!)°) above the fully-open one (from \(upper.min()!)°)")
                }
                probes += TourProbes.steps(from: &state, app: app, profile: profile, rig: rig, look: look, intervals: options.probeIntervals,
                                           classify: classify) ?? []
            }
            let elapsed = parts[0].seconds + probes.reduce(0) { $0 + $1.cost }
            probes += MotionProbes.steps(from: &state, at: elapsed, app: app, profile: profile, rig: rig, look: look,
                                         intervals: options.probeIntervals.motion, classify: classify) ?? []
            guard !probes.isEmpty else {
                throw InputError(.badValue, "--probes sweeps the hinge and the orientation filter, and the rig can do neither (moves.hinge is null, moves.motion null or left out)")
            }
            let seconds = probes.reduce(0) { $0 + $1.cost }
            if let budget = options.budget, parts[0].seconds + seconds > budget {
                throw InputError(.badValue, "the probes take \(seconds) s more, past --budget: give a larger budget or leave --probes out")
            }
            parts[0].steps += probes
            parts[0].seconds += seconds
            parts[0].observations += probes.filter { $0.expected != nil }.count
            lowerBound += seconds
        }
        let unreachable = Tour.unreachable(app: app, profile: profile, rig: rig, reached: graph, explore: explore, view: view)
        return Tour(parts: parts, startDigest: graph.digest[0], classes: walk.targets.count, unreachable: unreachable, unobserved: walk.unobserved.count,
                    lowerBound: lowerBound, truncated: walk.truncated, states: graph.count, statesTruncated: graph.truncated)
    }

    /// The capabilities a rig may lack, in the order a lab would add them (the cheaper on a
    /// motor rig first): an app action, the hinge, each device orientation, the keyboard,
    /// PiP, Live Activities, Split View, Reduce Transparency, the writing direction.
    static func missingCapabilities(of rig: RigProfile) -> [(name: String, rig: RigProfile)] {
        var out: [(String, RigProfile)] = []
        let order: [RigProfile.Move] = [.select, .push, .pop, .present, .dismiss, .inspector]
        for move in order where rig.cost(move) == nil {
            var r = rig
            r.moves[RigProfile.Move.allCases.firstIndex(of: move)!] = 1
            out.append((move.rawValue, r))
        }
        if rig.hinge == nil {
            var r = rig
            r.hinge = .init(fixed: 1, perDegree: 0)
            out.append(("hinge", r))
        }
        for o in DeviceOrientation.allCases where !rig.orientations.contains(o) {
            var r = rig
            r.orientations.append(o)
            r.moves[RigProfile.Move.allCases.firstIndex(of: .orientation)!] = 1
            out.append(("orientation \(o.rawValue)", r))
        }
        for move in [RigProfile.Move.keyboard, .pip, .liveActivities, .splitView, .reduceTransparency, .layoutDirection] where rig.cost(move) == nil {
            var r = rig
            r.moves[RigProfile.Move.allCases.firstIndex(of: move)!] = 1
            out.append((move.rawValue, r))
        }
        return out
    }

    /// The classes the model's own exploration (the plan's inputs, interface orientations
    /// set directly among them) reaches and `reached` lacks, each with what would reach it.
    static func unreachable(app: App, profile: DeviceProfile, rig: RigProfile, reached: StateGraph,
                            explore: ([Event]) -> StateGraph, view: (DeviceState) -> Observation) -> [Unreachable] {
        let have = Set(reached.classOf)
        // Device orientations reach no layout the four interface orientations do not (see
        // `ModelExplorer.inputs`), so the plan's inputs are the model's whole reach.
        let model = explore(ModelExplorer.inputs(app: app, profile: profile))
        var missing: [(cls: UInt64, state: Int)] = []
        var listed = Set<UInt64>()
        for s in 0..<model.count where !have.contains(model.classOf[s]) && listed.insert(model.classOf[s]).inserted {
            missing.append((model.classOf[s], s))
        }
        guard !missing.isEmpty else { return [] }
        var needs = [String?](repeating: nil, count: missing.count)
        for capability in missingCapabilities(of: rig) where needs.contains(where: { $0 == nil }) {
            let g = explore(TourPlanner.inputs(app: app, profile: profile, rig: capability.rig))
            let classes = Set(g.classOf)
            for i in missing.indices where needs[i] == nil && classes.contains(missing[i].cls) { needs[i] = capability.name }
        }
        return missing.enumerated().map { i, m in
            Unreachable(classDigest: m.cls, digest: model.digest[m.state], expected: view(model.states[m.state]),
                        needs: needs[i] ?? "no device move")
        }
    }
}
