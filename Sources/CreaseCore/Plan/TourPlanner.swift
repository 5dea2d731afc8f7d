/// One walk over the phone that shows it every observable class once (issue 39): no reset,
/// no `load`, only the moves the rig can make, at the least estimated device time found.
///
/// The walk is greedy over the rig's cost graph: from where the phone is, the cheapest
/// path (Dijkstra over the rig file's seconds) to the nearest class not yet observed
/// (of equals, the one with the fewest unseen classes next to it), a look there, and again. With several phones (`parts`), the phone with the least time
/// so far takes the next class, so the parts end together.
///
/// The bound it is measured against (`lowerBound`): every class must be looked at once,
/// and every class but the start's must be entered once by an edge from another class, a
/// different step for each; so no walk costs less than the looks plus, for each class, the
/// cheapest edge into it.
public enum TourPlanner {
    public enum Why: String, Sendable, CaseIterable {
        case move, probe, observe
    }

    /// One step of a walk: the edge taken (nil only for a first look at the start state),
    /// the state it leads to, and whether the rig looks there.
    public struct Step: Sendable, Equatable {
        public var edge: Int?
        public var state: Int
        public var cost: Double
        public var why: Why
    }

    public struct Part: Sendable {
        public var steps: [Step]
        public var seconds: Double
        public var observations: Int
    }

    public struct Walk: Sendable {
        public var parts: [Part]
        /// The classes the walk was to observe (reachable, not already done), in discovery order.
        public var targets: [UInt64]
        /// Targets no part observed: cut by the budget, or not reachable from where a part was.
        public var unobserved: [UInt64]
        public var lowerBound: Double
        /// The budget stopped the walk before every target was observed.
        public var truncated: Bool
    }

    /// The inputs a rig can make, one value per class the rules tell apart (as
    /// `ModelExplorer.inputs`): the hinge at the middle of each pose's band, the device
    /// orientations the rig turns the phone to, and every other input the rig has a cost for.
    public static func inputs(app: App, profile: DeviceProfile, rig: RigProfile) -> [Event] {
        var events: [Event] = []
        if rig.hinge != nil {
            events += [.hinge(angle: 0), .hinge(angle: (profile.partialOpenThreshold + profile.fullyOpenThreshold) / 2), .hinge(angle: 180)]
        }
        events += rig.orientations.map { Event.deviceOrientation($0) }
        for event in ModelExplorer.inputs(app: app, profile: profile) {
            guard let move = RigProfile.move(of: event), move != .orientation, rig.cost(move) != nil else { continue }
            events.append(event)
        }
        return events
    }

    /// The seconds of every edge of `graph` on `rig` (the graph's inputs must be ones the rig makes).
    public static func edgeCosts(_ graph: StateGraph, rig: RigProfile) -> [Double] {
        var costs = [Double](repeating: 0, count: graph.edgeInput.count)
        for s in 0..<graph.count {
            for e in graph.edges(of: s) {
                guard let c = rig.cost(of: graph.inputs[Int(graph.edgeInput[e])], from: graph.states[s]) else {
                    preconditionFailure("an input the rig cannot make is in the tour's graph")
                }
                costs[e] = microseconds(c)
            }
        }
        return costs
    }

    /// Seconds to the microsecond: the costs a tour file writes, so their sum reads back as the estimate.
    public static func microseconds(_ s: Double) -> Double { (s * 1e6).rounded() / 1e6 }

    /// Walks `graph` from its start (state 0) observing every class not in `done`.
    public static func walk(_ graph: StateGraph, costs: [Double], look: Double, done: Set<UInt64> = [], parts: Int = 1,
                            budget: Double? = nil) -> Walk {
        precondition(parts >= 1)
        // Dense class numbers, in discovery order.
        var number: [UInt64: Int32] = [:]
        var classes: [UInt64] = []
        var classIndex = [Int32](repeating: 0, count: graph.count)
        for s in 0..<graph.count {
            let c = graph.classOf[s]
            if let n = number[c] { classIndex[s] = n; continue }
            number[c] = Int32(classes.count)
            classIndex[s] = Int32(classes.count)
            classes.append(c)
        }
        var observed = classes.map { done.contains($0) }
        let targets = classes.indices.filter { !observed[$0] }
        var remaining = targets.count

        // The bound: a look at every target, and the cheapest edge into it from another class.
        var entry = [Double](repeating: .infinity, count: classes.count)
        entry[Int(classIndex[0])] = 0
        for s in 0..<graph.count {
            for e in graph.edges(of: s) {
                let to = Int(classIndex[Int(graph.edgeTarget[e])])
                if to != Int(classIndex[s]), costs[e] < entry[to] { entry[to] = costs[e] }
            }
        }
        var lowerBound = 0.0
        for t in targets { lowerBound += look + entry[t] }

        var search = NearestSearch(count: graph.count)
        var positions = [Int](repeating: 0, count: parts)
        var result = (0..<parts).map { _ in Part(steps: [], seconds: 0, observations: 0) }
        var active = [Bool](repeating: true, count: parts)
        var truncated = false
        let startClass = Int(classIndex[0])
        if !observed[startClass] {
            observed[startClass] = true
            remaining -= 1
            result[0].steps.append(Step(edge: nil, state: 0, cost: look, why: .observe))
            result[0].seconds = look
            result[0].observations = 1
        }
        while remaining > 0 {
            // The phone with the least time so far (the lowest part on a tie) takes the next class.
            var w = -1
            for p in 0..<parts where active[p] && (w < 0 || result[p].seconds < result[w].seconds) { w = p }
            guard w >= 0 else { break }
            // Of the nearest classes, the one with the fewest unseen classes one move on
            // (Warnsdorff's rule): corners first, while the walk is next to them, so it is
            // not sent back for them at the end. (On builtin:tabs with the motor rig: 11.5 %
            // over the bound, against 15.9 % for the lowest-numbered and 17.9 % for the most.)
            let onward = { (s: Int) -> Int in
                var n = 0
                for e in graph.edges(of: s) where !observed[Int(classIndex[Int(graph.edgeTarget[e])])] { n += 1 }
                return -n
            }
            guard let found = search.nearest(graph, costs: costs, from: positions[w], wanted: { !observed[Int(classIndex[$0])] },
                                             prefer: onward) else {
                active[w] = false
                continue
            }
            if let budget, result[w].seconds + found.distance + look > budget {
                active[w] = false
                truncated = true
                continue
            }
            let edges = search.path(graph, to: found.state)
            for (i, e) in edges.enumerated() {
                let last = i == edges.count - 1
                result[w].steps.append(Step(edge: e, state: Int(graph.edgeTarget[e]), cost: costs[e] + (last ? look : 0),
                                            why: last ? .observe : .move))
            }
            result[w].seconds += found.distance + look
            result[w].observations += 1
            observed[Int(classIndex[found.state])] = true
            remaining -= 1
            positions[w] = found.state
        }
        return Walk(parts: result, targets: targets.map { classes[$0] }, unobserved: targets.filter { !observed[$0] }.map { classes[$0] },
                    lowerBound: lowerBound, truncated: truncated)
    }
}

/// Dijkstra from one state until the first state that is wanted: the nearest by cost,
/// the lowest-numbered on a tie, so the walk is the same on every run. Its arrays live
/// across searches and only what a search touched is reset.
struct NearestSearch {
    private var distance: [Double]
    private var via: [Int32]
    private var settled: [Bool]
    private var touched: [Int32] = []
    private var heap: [(Double, Int32)] = []

    init(count: Int) {
        distance = [Double](repeating: .infinity, count: count)
        via = [Int32](repeating: -1, count: count)
        settled = [Bool](repeating: false, count: count)
    }

    /// The nearest wanted state; of those equally near, the one `prefer` scores highest
    /// (the lowest-numbered on a tie).
    mutating func nearest(_ graph: StateGraph, costs: [Double], from start: Int, wanted: (Int) -> Bool,
                          prefer: (Int) -> Int) -> (state: Int, distance: Double)? {
        for t in touched {
            distance[Int(t)] = .infinity
            via[Int(t)] = -1
            settled[Int(t)] = false
        }
        touched.removeAll(keepingCapacity: true)
        heap.removeAll(keepingCapacity: true)
        distance[start] = 0
        touched.append(Int32(start))
        push((0, Int32(start)))
        var best: (state: Int, distance: Double, score: Int)?
        while let (d, s32) = pop() {
            let s = Int(s32)
            if settled[s] || d > distance[s] { continue }
            if let b = best, d > b.distance { break }
            settled[s] = true
            if wanted(s) {
                let score = prefer(s)
                if best == nil || score > best!.score || (score == best!.score && s < best!.state) { best = (s, d, score) }
                continue
            }
            for e in graph.edges(of: s) {
                let t = Int(graph.edgeTarget[e])
                let nd = d + costs[e]
                if nd < distance[t] {
                    if distance[t] == .infinity { touched.append(Int32(t)) }
                    distance[t] = nd
                    via[t] = Int32(e)
                    push((nd, Int32(t)))
                }
            }
        }
        return best.map { ($0.state, $0.distance) }
    }

    /// The edges of the path the last search found to `state`, first to last.
    func path(_ graph: StateGraph, to state: Int) -> [Int] {
        var edges: [Int] = []
        var s = state
        while via[s] >= 0 {
            let e = Int(via[s])
            edges.append(e)
            s = Self.source(of: e, in: graph)
        }
        return edges.reversed()
    }

    /// The state an edge leaves: the one whose range holds it.
    static func source(of edge: Int, in graph: StateGraph) -> Int {
        var lo = 0, hi = graph.count
        while lo + 1 < hi {
            let mid = (lo + hi) / 2
            if Int(graph.edgeStart[mid]) <= edge { lo = mid } else { hi = mid }
        }
        return lo
    }

    private static func less(_ a: (Double, Int32), _ b: (Double, Int32)) -> Bool { a.0 < b.0 || (a.0 == b.0 && a.1 < b.1) }

    private mutating func push(_ x: (Double, Int32)) {
        heap.append(x)
        var i = heap.count - 1
        while i > 0 {
            let p = (i - 1) / 2
            guard Self.less(heap[i], heap[p]) else { break }
            heap.swapAt(i, p)
            i = p
        }
    }

    private mutating func pop() -> (Double, Int32)? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, Self.less(heap[l], heap[m]) { m = l }
                if r < heap.count, Self.less(heap[r], heap[m]) { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return top
    }
}
