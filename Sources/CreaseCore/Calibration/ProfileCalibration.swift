/// `crease calibrate` (issue 31): the profile's assumed numbers fitted to what the device
/// showed. Each trace is replayed with candidate profiles, every recorded observation judged
/// again against the layouts the candidate gives; a candidate is as good as the observations
/// it makes match.
///
/// The search: one field at a time over a grid around its value (within the field's range),
/// holding the others, and again over all fields until nothing moves (at most `passes`): the
/// hinge thresholds and their hysteresis act on the same angles, so a field fitted first is
/// fitted again once the others moved. The cost is bounded: fields × grid points × passes
/// replays of the traces. Ties keep the value nearest the start, so traces that already
/// match leave the profile as it is, and a field no observation depends on is reported as
/// not exercised rather than given an invented number.
public enum ProfileCalibration {
    /// What one field's grid is: `step` apart, `span` either side of the start, within the field's range.
    public struct Grid: Sendable {
        public var step: Double
        public var span: Double
    }

    /// The fields fitted by default: those marked [assumed] that observations can show
    /// (poses through the hinge, frames through lengths and spacing, the interface
    /// orientation through the IMU's filter).
    public static let defaultFields = ["partialOpenThreshold", "fullyOpenThreshold", "hingeHysteresis", "tabLength", "itemSpacing",
                                       "groupSpacing", "fixedSpacerLength", "minTabWidth",
                                       "orientationHysteresis", "flatTilt", "orientationSettleMs"]

    public static func grid(for field: String) -> Grid {
        switch field {
        case "partialOpenThreshold", "fullyOpenThreshold": Grid(step: 0.5, span: 20)
        case "hingeHysteresis": Grid(step: 0.5, span: 6)
        // The orientation filter, from when the observed orientation changed against the IMU's samples.
        case "orientationHysteresis": Grid(step: 1, span: 15)
        case "flatTilt": Grid(step: 1, span: 10)
        case "orientationSettleMs": Grid(step: 10, span: 100)
        default: Grid(step: 0.5, span: 12)
        }
    }

    /// One trace's records, as the calibration replays them.
    public struct Trace: Sendable {
        public var name: String
        public var file: TraceFile
        public init(name: String, file: TraceFile) {
            self.name = name
            self.file = file
        }
    }

    public struct FieldResult: Sendable {
        public var field: String
        public var start: Double
        public var fitted: Double
        /// The values that explain the observations equally well (around `fitted`).
        public var interval: ClosedRange<Double>
        /// No candidate changed how many observations match: the traces do not exercise it.
        public var exercised: Bool
        /// Observations that matched with `fitted` and not with `start` (the others as fitted).
        public var mismatchesResolved: Int
    }

    public struct Unexplained: Sendable {
        public var trace: String
        public var seq: Int
        public var t: UInt64
        public var differences: [ConformanceDifference]
    }

    public struct Result: Sendable {
        public var profile: DeviceProfile
        public var fields: [FieldResult]
        public var observations: Int
        public var matchedBefore: Int
        public var matchedAfter: Int
        /// Observations no candidate explains: the real bugs.
        public var unexplained: [Unexplained]
        public var replays: Int
    }

    /// How many observations of `traces` match (or are stale: the device caught up) with `profile`.
    static func score(_ traces: [Trace], profile: DeviceProfile, unexplained: inout [Unexplained]?) -> Int {
        var good = 0
        for trace in traces {
            let header = trace.file.header
            var engine = Engine(profile: profile, app: header.app, state: header.initialState, seq: header.initialSeq)
            var tracker = ConformanceTracker(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: header.initialT,
                                             windowNs: ConformanceTracker.windowNs(config: header.config))
            var cursor = trace.file.cursor()
            while let traced = try? cursor.next() {
                switch traced.record {
                case .event(let e):
                    if (try? engine.apply(e.envelope.event, at: Int64(e.t))) == true {
                        tracker.publish(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: e.t)
                    }
                case .load(let l):
                    engine = Engine(profile: profile, app: l.app, state: l.state, seq: l.seq)
                    tracker.publish(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: l.t)
                case .gap(let g):
                    if let state = try? DeviceState.decode(g.state, app: engine.app) {
                        engine = Engine(profile: profile, app: engine.app, state: state, seq: g.seq)
                        tracker.restart(layout: engine.layout, digest: engine.digest, seq: g.seq, t: g.t)
                    }
                case .observation(let o):
                    let r = tracker.observe(o.request, seq: o.seq, t: o.t, captured: o.captured).result
                    if r.verdict != .mismatch {
                        good += 1
                    } else {
                        unexplained?.append(Unexplained(trace: trace.name, seq: o.seq, t: o.t, differences: r.differences))
                    }
                case .mark, .batch, .layout:
                    break
                }
            }
        }
        return good
    }

    public static func calibrate(_ traces: [Trace], start: DeviceProfile, fields: [String], passes: Int = 3) -> Result {
        let ranges = DeviceProfile.fieldRanges
        var profile = start
        var replays = 0
        var none: [Unexplained]? = nil
        let observations = traces.reduce(0) { n, t in
            var count = 0
            var cursor = t.file.cursor()
            while let r = try? cursor.next() { if case .observation = r.record { count += 1 } }
            return n + count
        }
        let before = score(traces, profile: start, unexplained: &none)
        replays += 1
        var best = before
        var results: [String: FieldResult] = [:]
        for _ in 0..<max(1, passes) {
            var moved = false
            for field in fields {
                guard let range = ranges.first(where: { $0.name == field }) else { continue }
                let g = grid(for: field)
                let current = profile[keyPath: range.path]
                var candidates: [Double] = []
                var v = max(range.min, current - g.span)
                while v <= min(range.max, current + g.span) + 1e-9 {
                    candidates.append((v * 1000).rounded() / 1000)
                    v += g.step
                }
                if !candidates.contains(current) { candidates.append(current); candidates.sort() }
                var scores: [Double: Int] = [:]
                var top = -1
                for c in candidates {
                    var p = profile
                    p[keyPath: range.path] = c
                    guard valid(p) else { continue }
                    let s = score(traces, profile: p, unexplained: &none)
                    replays += 1
                    scores[c] = s
                    top = max(top, s)
                }
                // The best candidate nearest the current value; ties keep it.
                let winners = candidates.filter { scores[$0] == top }
                guard let fitted = winners.min(by: { abs($0 - current) < abs($1 - current) }) else { continue }
                // The interval: the run of equally good candidates around the fitted value.
                let i = candidates.firstIndex(of: fitted)!
                var lo = i, hi = i
                while lo > 0, scores[candidates[lo - 1]] == top { lo -= 1 }
                while hi < candidates.count - 1, scores[candidates[hi + 1]] == top { hi += 1 }
                let exercised = Set(candidates.compactMap { scores[$0] }).count > 1
                // An interval that reaches the grid's edge goes on past it, so it is the data's
                // and not the grid's (at most three spans further, within the range).
                var lower = candidates[lo], upper = candidates[hi]
                if exercised {
                    func extend(_ from: Double, by step: Double) -> Double {
                        var edge = from
                        for _ in 0..<Int(3 * g.span / g.step) {
                            let next = ((edge + step) * 1000).rounded() / 1000
                            guard next >= range.min, next <= range.max else { break }
                            var p = profile
                            p[keyPath: range.path] = next
                            guard valid(p) else { break }
                            replays += 1
                            guard score(traces, profile: p, unexplained: &none) == top else { break }
                            edge = next
                        }
                        return edge
                    }
                    if lo == 0 { lower = extend(lower, by: -g.step) }
                    if hi == candidates.count - 1 { upper = extend(upper, by: g.step) }
                }
                let startValue = start[keyPath: range.path]
                if fitted != current { moved = true }
                profile[keyPath: range.path] = fitted
                best = top
                var atStart = profile
                atStart[keyPath: range.path] = startValue
                let resolved = top - (valid(atStart) ? score(traces, profile: atStart, unexplained: &none) : top)
                replays += 1
                results[field] = FieldResult(field: field, start: startValue, fitted: fitted, interval: lower...upper,
                                             exercised: exercised, mismatchesResolved: max(0, resolved))
            }
            if !moved { break }
        }
        var unexplained: [Unexplained]? = []
        _ = score(traces, profile: profile, unexplained: &unexplained)
        replays += 1
        return Result(profile: profile, fields: fields.compactMap { results[$0] }, observations: observations, matchedBefore: before,
                      matchedAfter: best, unexplained: unexplained ?? [], replays: replays)
    }

    /// A candidate the profile decoder would take (the rules between fields hold).
    static func valid(_ p: DeviceProfile) -> Bool { p.crossFieldError == nil }
}
