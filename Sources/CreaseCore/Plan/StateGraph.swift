/// Every state an app reaches from a start over a list of inputs, breadth first, with the
/// edges between them: what the plan (`ModelExplorer`) and the tour (`TourPlanner`) walk.
///
/// States are numbered in discovery order; a state's out-edges are contiguous
/// (`edgeStart[s] ..< edgeStart[s + 1]`) and in input order. A refused event and an event
/// that leaves the state as it was are no edge. Two states are one when
/// `ModelExplorer.Key` says they lay out alike and go on alike. A state at `maxDepth` is
/// not explored further; with `closeFrontier` it keeps its edges to states already found,
/// so a walk that goes there can come back (the tour's graph has no dead ends the bound made).
///
/// Pure and deterministic: a dictionary only answers "seen before?", never gives an order.
public struct StateGraph: Sendable {
    public var inputs: [Event]
    public var states: [DeviceState]
    /// How each state was first reached (nil for the start): a shortest path by events.
    public var parent: [(state: Int32, input: Int32)?]
    public var depth: [Int32]
    /// The layout digest (crease64v) of each state.
    public var digest: [UInt64]
    /// The class of each state when a classifier was given (else its digest).
    public var classOf: [UInt64]
    public var edgeStart: [Int32]
    public var edgeInput: [Int32]
    public var edgeTarget: [Int32]
    /// Edges found, counting those into states already known.
    public var transitionsExplored: Int
    public var truncated: Bool

    public var count: Int { states.count }

    public func edges(of state: Int) -> Range<Int> { Int(edgeStart[state])..<Int(edgeStart[state + 1]) }

    /// The events of the shortest path from the start to `state`.
    public func path(to state: Int) -> [Event] {
        var events: [Event] = []
        var s = state
        while let p = parent[s] {
            events.append(inputs[Int(p.input)])
            s = Int(p.state)
        }
        return events.reversed()
    }

    public static func explore(app: App, profile: DeviceProfile, from start: DeviceState, inputs: [Event],
                               maxDepth: Int = 64, maxStates: Int = 200_000, closeFrontier: Bool = false,
                               classify: ((Layout) -> UInt64)? = nil) -> StateGraph {
        func label(_ state: DeviceState) -> (UInt64, UInt64) {
            let layout = LayoutBuilder.build(profile: profile, app: app, state: state)
            let d = DigestAlgorithm.crease64v.digest(layout.encodeBody())
            return (d, classify.map { $0(layout) } ?? d)
        }
        let first = label(start)
        var g = StateGraph(inputs: inputs, states: [start], parent: [nil], depth: [0], digest: [first.0], classOf: [first.1],
                           edgeStart: [0], edgeInput: [], edgeTarget: [], transitionsExplored: 0, truncated: false)
        var seen: [ModelExplorer.Key: Int] = [ModelExplorer.Key(start, profile: profile): 0]
        var next = 0
        while next < g.states.count {
            let index = next
            next += 1
            let frontier = Int(g.depth[index]) >= maxDepth
            if !frontier || closeFrontier {
                for (e, event) in inputs.enumerated() {
                    var state = g.states[index]
                    var a = app
                    guard (try? StateMachine.apply(event, at: 0, to: &state, app: &a, profile: profile)) != nil else { continue }
                    let key = ModelExplorer.Key(state, profile: profile)
                    let target: Int
                    if let known = seen[key] {
                        target = known
                    } else {
                        if frontier { continue }
                        guard g.states.count < maxStates else { g.truncated = true; continue }
                        target = g.states.count
                        seen[key] = target
                        g.states.append(state)
                        g.parent.append((Int32(index), Int32(e)))
                        g.depth.append(g.depth[index] + 1)
                        let l = label(state)
                        g.digest.append(l.0)
                        g.classOf.append(l.1)
                    }
                    guard target != index else { continue }
                    g.transitionsExplored += 1
                    g.edgeInput.append(Int32(e))
                    g.edgeTarget.append(Int32(target))
                }
            }
            g.edgeStart.append(Int32(g.edgeInput.count))
        }
        return g
    }
}
