/// What to fold next (issue 27): every state an app can reach from a start, explored
/// breadth first over one input value per class the rules tell apart, and for each
/// distinct layout the shortest event sequence that shows it.
///
/// The value classes (`ModelExplorer.inputs`), and why they are enough:
/// - **hinge**: one angle per pose, the middle of each pose's band (0, halfway between the
///   thresholds, 180). The layout reads only the pose; hysteresis makes a pose reachable
///   from its neighbours at these angles.
/// - **orientation**: the four interface orientations, set directly. Device orientations,
///   the IMU and the rotation lock reach only these four (the layout reads the interface
///   orientation alone), so they add no layout.
/// - **keyboard**: hidden, and shown at the profile's height for the display and
///   orientation. Other heights move the keyboard's edge point by point; they are a
///   continuum, not a class (see `Done when` in docs/plan.md).
/// - **Picture in Picture** on and off; **Live Activities** 0 up to `maxActivitiesShown`
///   (past it the island stops growing: the layout does not change); **Split View** none,
///   left, right; **writing direction** both; **Reduce Transparency** both.
/// - **the app**: `select` of every tab, `push` of every screen of every stack, `pop`,
///   `present` of every sheet, `dismiss`, the inspector shown and hidden; the state machine
///   refuses what is not possible from a state, and a refused event is no transition.
///
/// Pure and deterministic: states are kept in discovery order; a dictionary only answers
/// "seen before?", never gives an order.
public enum ModelExplorer {
    public struct Options: Sendable {
        /// Events from the start at most (a path longer is not explored).
        public var maxDepth: Int
        /// States at most: past it the exploration stops and says it was cut.
        public var maxStates: Int
        /// Also a sequence for every distinct layout-to-layout transition (by event type).
        public var transitions: Bool

        public init(maxDepth: Int = 64, maxStates: Int = 200_000, transitions: Bool = false) {
            self.maxDepth = maxDepth
            self.maxStates = maxStates
            self.transitions = transitions
        }
    }

    /// One sequence of the plan: the events, from the start, that show `digest` (and for a
    /// transition, the layout it leaves).
    public struct Sequence: Sendable, Equatable {
        public var digest: UInt64
        public var from: UInt64?
        public var events: [Event]
        public var pose: Pose
        public var orientation: Orientation
    }

    public struct Result: Sendable {
        public var states: Int
        public var layouts: Int
        public var transitionsExplored: Int
        public var truncated: Bool
        /// One per distinct layout, in discovery order (shortest first).
        public var sequences: [Sequence]
        /// With `transitions`: one per distinct (layout, event type, next layout), layout changes only.
        public var transitionSequences: [Sequence]
        /// Every distinct layout digest, in discovery order.
        public var digests: [UInt64]
    }

    /// The device and app inputs, one value per class (see above).
    public static func inputs(app: App, profile: DeviceProfile) -> [Event] {
        EventKind.allCases.filter(\.explored).flatMap { $0.values(app: app, profile: profile) }
    }

    /// What of a state the layout reads (the engine's own `LayoutInputs`), and what decides
    /// where the next events lead: two states with the same key lay out alike and go on
    /// alike. (Not the hinge angle: from any angle of a pose, the next angle leads to the
    /// same pose; nor Live Activities past where the island stops: the next count is absolute.)
    struct Key: Hashable {
        var inputs: LayoutInputs
        var deviceOrientation: DeviceOrientation?
        var rotationLock: Bool

        init(_ s: DeviceState, profile: DeviceProfile) {
            inputs = LayoutInputs(s, profile: profile)
            deviceOrientation = s.deviceOrientation
            rotationLock = s.rotationLock
        }
    }

    public static func explore(app: App, profile: DeviceProfile, from start: DeviceState, options: Options = Options(),
                               inputs given: [Event]? = nil) -> Result {
        let inputs = given ?? ModelExplorer.inputs(app: app, profile: profile)
        let g = StateGraph.explore(app: app, profile: profile, from: start, inputs: inputs, maxDepth: options.maxDepth,
                                   maxStates: options.maxStates)
        var firstStateOfDigest: [UInt64: Int] = [:]
        var digests: [UInt64] = []
        for (s, d) in g.digest.enumerated() where firstStateOfDigest[d] == nil {
            firstStateOfDigest[d] = s
            digests.append(d)
        }
        var edges: [(from: Int, event: Int, to: Int)] = []
        if options.transitions {
            var edgeSeen = Set<[UInt64]>()
            for s in 0..<g.count {
                for e in g.edges(of: s) {
                    let input = Int(g.edgeInput[e]), target = Int(g.edgeTarget[e])
                    if g.digest[s] != g.digest[target], edgeSeen.insert([g.digest[s], UInt64(input), g.digest[target]]).inserted {
                        edges.append((s, input, target))
                    }
                }
            }
        }
        func sequence(_ state: Int, extra: Int? = nil, from: UInt64? = nil) -> Sequence {
            var events = g.path(to: state)
            var last = g.states[state]
            if let extra {
                events.append(inputs[extra])
                var a = app
                _ = try? StateMachine.apply(inputs[extra], at: 0, to: &last, app: &a, profile: profile)
            }
            return Sequence(digest: ModelExplorer.digest(app: app, profile: profile, state: last), from: from, events: events,
                            pose: last.pose, orientation: last.orientation)
        }
        let sequences = digests.map { sequence(firstStateOfDigest[$0]!) }
        let transitionSequences = edges.map { sequence($0.from, extra: $0.event, from: g.digest[$0.from]) }
        return Result(states: g.count, layouts: digests.count, transitionsExplored: g.transitionsExplored, truncated: g.truncated,
                      sequences: sequences, transitionSequences: transitionSequences, digests: digests)
    }

    /// The layout digest of a state, as a daemon would publish it (crease64v).
    static func digest(app: App, profile: DeviceProfile, state: DeviceState) -> UInt64 {
        DigestAlgorithm.crease64v.digest(LayoutBuilder.build(profile: profile, app: app, state: state).encodeBody())
    }
}
