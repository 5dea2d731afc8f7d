/// Shrinks a trace's steps to a small, readable reproduction, each change kept only while
/// `test` still holds: a hinge ramp to its endpoints, then delta debugging (fewest steps),
/// then the values that are left, as Hypothesis's shrinker does (`StepValueShrinks`), and
/// delta debugging again while the values moved. Pure; `test` decides everything.
public enum TraceShrinker {
    public enum Phase: String, Sendable {
        case ramps = "ramps to their endpoints"
        case steps = "removing steps (ddmin)"
        case values = "shrinking values"
        case times = "times onto a grid"
    }

    public struct Progress: Sendable, Equatable {
        public var phase: Phase
        public var tests: Int
        public var steps: Int
    }

    /// At most this many rounds of removing steps and shrinking values.
    static let rounds = 4

    /// `hingeTolerance`: degrees a rig's fold may land off (`RigProfile.HingeCost.tolerance`);
    /// a hinge angle is shrunk only to values whose neighbours that far on either side hold
    /// too, so the repro survives a motor that lands short or long.
    public static func shrink<E: Error>(_ steps: [TraceStep], profile: DeviceProfile, origin: UInt64, hingeTolerance: Double = 0,
                                        progress: (Progress) -> Void = { _ in },
                                        test: ([TraceStep]) throws(E) -> Bool) throws(E) -> [TraceStep] {
        var tests = 0
        func holds(_ candidate: [TraceStep]) throws(E) -> Bool {
            tests += 1
            return try test(candidate)
        }
        var current = try rampEndpoints(steps, holds: holds)
        progress(Progress(phase: .ramps, tests: tests, steps: current.count))
        for _ in 0..<rounds {
            let before = current
            current = try DeltaDebugging.minimize(current, progress: { p in
                progress(Progress(phase: .steps, tests: tests, steps: p.size))
            }, test: holds)
            current = try shrinkValues(current, profile: profile, hingeTolerance: hingeTolerance, holds: holds)
            progress(Progress(phase: .values, tests: tests, steps: current.count))
            current = try shrinkTimes(current, origin: origin, holds: holds)
            progress(Progress(phase: .times, tests: tests, steps: current.count))
            if current == before { break }
        }
        return current
    }

    /// Ramps (three or more hinge events in a row, each angle moving the same way) lose
    /// their middles: all ramps at once if that holds, else ramp by ramp (up to
    /// `maxRampTests`; ddmin takes what is left). A 1 kHz sweep becomes its two ends.
    static func rampEndpoints<E: Error>(_ steps: [TraceStep], holds: ([TraceStep]) throws(E) -> Bool) throws(E) -> [TraceStep] {
        let ramps = self.ramps(steps)
        guard !ramps.isEmpty else { return steps }
        func without(_ middles: [Range<Int>], from list: [TraceStep]) -> [TraceStep] {
            var drop = [Bool](repeating: false, count: list.count)
            for r in middles { for i in (r.lowerBound + 1)..<(r.upperBound - 1) { drop[i] = true } }
            return list.indices.filter { !drop[$0] }.map { list[$0] }
        }
        let all = without(ramps, from: steps)
        if try holds(all) { return all }
        guard ramps.count <= maxRampTests else { return steps }
        var current = steps
        // From the last ramp back, so the indices of the ones before stay valid.
        for r in ramps.reversed() {
            let candidate = without([r], from: current)
            if try holds(candidate) { current = candidate }
        }
        return current
    }

    static let maxRampTests = 64

    /// The maximal monotonic runs of three or more consecutive hinge events.
    static func ramps(_ steps: [TraceStep]) -> [Range<Int>] {
        func angle(_ i: Int) -> Double? {
            guard i < steps.count, case .event(let e) = steps[i], case .hinge(let a) = e.envelope.event else { return nil }
            return a
        }
        var out: [Range<Int>] = []
        var start = 0
        var direction = 0.0
        var i = 0
        while i <= steps.count {
            let a = angle(i)
            var ends = a == nil
            if let a, i > start, let previous = angle(i - 1) {
                let d = (a - previous).sign == .minus ? -1.0 : (a == previous ? 0 : 1)
                if direction == 0 { direction = d } else if d != 0 && d != direction { ends = true }
            }
            if ends {
                if i - start >= 3 { out.append(start..<i) }
                // A turn starts the next ramp at the turning point; anything else after it.
                if a != nil { start = i - 1; direction = 0; continue }
                start = i + 1
                direction = 0
            }
            i += 1
        }
        return out
    }

    /// Each step's values, simplest candidate first; the first that holds is kept.
    static func shrinkValues<E: Error>(_ steps: [TraceStep], profile: DeviceProfile, hingeTolerance: Double = 0,
                                       holds: ([TraceStep]) throws(E) -> Bool) throws(E) -> [TraceStep] {
        var current = steps
        for i in current.indices {
            guard case .event(let e) = current[i] else { continue }
            var candidate = current
            func tries(_ event: Event) throws(E) -> Bool {
                var changed = e
                changed.envelope.event = event
                candidate[i] = .event(changed)
                return try holds(candidate)
            }
            if let kept = try StepValueShrinks.shrink(e.envelope.event, profile: profile, hingeTolerance: hingeTolerance, holds: tries) {
                var changed = e
                changed.envelope.event = kept
                current[i] = .event(changed)
            }
        }
        return current
    }

    /// Every time (events, observations and their captures) onto the coarsest grid from
    /// `origin` that holds: 1 s, 100 ms, 10 ms or 1 ms. Rounding keeps the order. The
    /// senders' stamps and ids go first, if the glitch does not need them.
    static func shrinkTimes<E: Error>(_ steps: [TraceStep], origin: UInt64,
                                      holds: ([TraceStep]) throws(E) -> Bool) throws(E) -> [TraceStep] {
        var current = steps
        let unstamped = current.map { step -> TraceStep in
            switch step {
            case .event(var e):
                e.envelope.ts = nil
                e.envelope.id = nil
                return .event(e)
            case .observation(var o):
                o.request.ts = nil
                o.request.id = nil
                o.request.capturedAt = nil  // the sender's clock; `captured` is the trace's
                return .observation(o)
            }
        }
        if unstamped != current, try holds(unstamped) { current = unstamped }
        // A grid that would put two different moments on one is too coarse: the order of
        // what happened is part of the story.
        let moments = Set(current.map(\.t)).count
        for grid: UInt64 in [1_000_000_000, 100_000_000, 10_000_000, 1_000_000] {
            func snap(_ t: UInt64) -> UInt64 {
                guard t > origin else { return t }
                return origin + (t - origin + grid / 2) / grid * grid
            }
            let snapped = current.map { step -> TraceStep in
                switch step {
                case .event(var e):
                    e.t = snap(e.t)
                    return .event(e)
                case .observation(var o):
                    o.t = snap(o.t)
                    o.captured = o.captured.map { snap($0.lowerBound)...snap($0.upperBound) }
                    return .observation(o)
                }
            }
            if snapped == current { return current }
            guard Set(snapped.map(\.t)).count == moments else { continue }
            if try holds(snapped) { return snapped }
        }
        return current
    }
}

/// The simpler values an event could have, as a shrinker tries them: an angle toward the
/// nearest hinge threshold, a keyboard height and an activity count toward their smallest,
/// gravity onto round components. Returns the value kept, or nil when none held.
public enum StepValueShrinks {
    public static func shrink<E: Error>(_ event: Event, profile: DeviceProfile, hingeTolerance: Double = 0,
                                        holds: (Event) throws(E) -> Bool) throws(E) -> Event? {
        switch event {
        case .hinge(let angle):
            let thresholds = [profile.partialOpenThreshold, profile.fullyOpenThreshold]
            let nearest = thresholds.min { abs($0 - angle) < abs($1 - angle) }!
            // With a tolerance, a value holds only when the angles a fold may land on instead do.
            func robust(_ a: Double) throws(E) -> Bool {
                guard try holds(.hinge(angle: a)) else { return false }
                guard hingeTolerance > 0 else { return true }
                guard try holds(.hinge(angle: max(0, a - hingeTolerance))) else { return false }
                return try holds(.hinge(angle: min(180, a + hingeTolerance)))
            }
            return try towards(nearest.rounded(), from: angle, holds: robust).map { .hinge(angle: $0) }
        case .keyboard(let visible, let height?):
            if try holds(.keyboard(visible: visible, height: nil)) { return .keyboard(visible: visible, height: nil) }
            return try towards(0, from: height) { (h: Double) throws(E) -> Bool in try holds(.keyboard(visible: visible, height: h)) }
                .map { .keyboard(visible: visible, height: $0) }
        case .liveActivities(let count) where count > 0:
            return try towards(0, from: Double(count)) { (c: Double) throws(E) -> Bool in try holds(.liveActivities(count: Int(c))) }
                .map { .liveActivities(count: Int($0)) }
        case .motion(let g):
            for step in [1.0, 0.5, 0.1] {
                func round(_ v: Double) -> Double { (v / step).rounded() * step }
                let r = Gravity(x: round(g.x), y: round(g.y), z: round(g.z))
                if r == g { return nil }
                if try holds(.motion(r)) { return .motion(r) }
            }
            return nil
        // Named or enumerated values have nothing simpler (the minimizer drops whole events
        // instead), nor a keyboard without a height or no Live Activities. Listed, so a new
        // kind with a number in it gets a decision here.
        case .keyboard, .liveActivities, .orientation, .deviceOrientation, .rotationLock, .pip, .splitView, .layoutDirection,
             .reduceTransparency, .select, .push, .pop, .present, .dismiss, .inspector, .app:
            return nil
        }
    }

    /// The whole number nearest `target` between it and `value` that holds, found by
    /// bisection (`value` itself holds), else `value` rounded if that holds; nil when
    /// nothing simpler holds.
    static func towards<E: Error>(_ target: Double, from value: Double, holds: (Double) throws(E) -> Bool) throws(E) -> Double? {
        guard target != value else { return nil }
        if try holds(target) { return target }
        var fails = target, kept = value
        var best: Double?
        while abs(kept - fails) > 1 {
            let mid = ((fails + kept) / 2).rounded()
            if mid == fails || mid == kept { break }
            if try holds(mid) { kept = mid; best = mid } else { fails = mid }
        }
        if best == nil, value != value.rounded(), try holds(value.rounded()) { best = value.rounded() }
        return best
    }
}
