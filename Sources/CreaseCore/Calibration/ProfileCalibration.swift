/// `crease calibrate` (issue 31): the profile's assumed numbers fitted to what the device
/// showed. Each trace is replayed with candidate profiles, every recorded observation judged
/// again against the layouts the candidate gives; a candidate is as good as the observations
/// it makes match.
///
/// The search: one field at a time over a grid around its value (within the field's range),
/// holding the others, and again over all fields until nothing moves (at most `passes`): the
/// hinge thresholds and their hysteresis act on the same angles, so a field fitted first is
/// fitted again once the others moved. The cost is bounded: fields × grid points × passes
/// replays of the traces. A candidate with more `match` verdicts is better; among those with
/// as many, more `stale` ones (the device catching up) break the tie, so a fast sweep whose
/// looks are all stale cannot "explain" any threshold. The fit is the middle of the run of
/// equally good values, unless that run holds the start (the data do not contradict it):
/// then the start is kept. A field no observation depends on is reported as not exercised
/// rather than given an invented number.
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
        /// The file's observation records in order, each look rebuilt by a replay with the
        /// trace's own profile: a candidate's layouts differ, so a look kept as a view of a
        /// layout is rebuilt once, from the layouts the device was really held against.
        public let looks: [TraceObservation]
        public init(name: String, file: TraceFile) {
            self.name = name
            self.file = file
            var looks: [TraceObservation] = []
            var cursor = file.resolvingCursor()
            while let traced = try? cursor.next() { if case .observation(let o) = traced.record { looks.append(o) } }
            self.looks = looks
        }
        /// Looks no replay of this build rebuilds (a trace of other rules): never judged.
        public var unresolvedLooks: Int { looks.reduce(0) { $0 + ($1.isResolved ? 0 : 1) } }
    }

    /// How well one candidate profile explains the observations: by `match` verdicts, and
    /// only by `stale` ones. Ordered by matches first.
    public struct Score: Sendable, Equatable, Comparable {
        public var matched = 0
        public var staleOnly = 0
        public var explained: Int { matched + staleOnly }
        public static func < (a: Score, b: Score) -> Bool { (a.matched, a.staleOnly) < (b.matched, b.staleOnly) }
    }

    public struct FieldResult: Sendable {
        public var field: String
        public var start: Double
        public var fitted: Double
        /// The values that explain the observations equally well (`fitted` is their middle,
        /// or the start when they hold it).
        public var interval: ClosedRange<Double>
        /// No candidate changed how many observations match: the traces do not exercise it.
        public var exercised: Bool
        /// The observations explained at `fitted` (the others as fitted), by match and only by stale.
        public var score: Score
        /// Observations explained with `fitted` and not with `start`: by a match, and only by a stale look.
        public var resolvedByMatch: Int
        public var resolvedByStale: Int
        public var mismatchesResolved: Int { resolvedByMatch + resolvedByStale }
        /// The fit rests mostly on stale looks: a sweep too fast for the device to settle
        /// cannot place a threshold, so the value is doubtful.
        public var restsOnStale: Bool { resolvedByStale > resolvedByMatch }
        /// `fitted` is the start, not the interval's middle: the interval holds the start (or
        /// the field is not exercised), so the data give no reason to move it.
        public var keptStart: Bool
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
        public var before: Score
        public var after: Score
        public var matchedBefore: Int { before.explained }
        public var matchedAfter: Int { after.explained }
        /// Observations no candidate explains: the real bugs.
        public var unexplained: [Unexplained]
        public var replays: Int
    }

    /// How the observations of `traces` are judged with `profile`: each trace replayed (its
    /// loads with `profile` in place of their own) and every observation judged again.
    static func score(_ traces: [Trace], profile: DeviceProfile, unexplained: inout [Unexplained]?) -> Score {
        var score = Score()
        for trace in traces {
            var replayer = TraceReplayer(header: trace.file.header, verify: false, profile: profile)
            var cursor = trace.file.cursor()
            var look = 0
            while let traced = try? cursor.next() {
                var resolved: TraceObservation?
                if case .observation = traced.record, look < trace.looks.count {
                    resolved = trace.looks[look]
                    look += 1
                }
                // A record this profile cannot apply leaves the replay where it was.
                do { _ = try replayer.apply(traced, resolved: resolved) } catch { continue }
                guard case .observation(let o) = traced.record, let r = replayer.lastJudged else { continue }
                switch r.verdict {
                case .match: score.matched += 1
                case .stale: score.staleOnly += 1
                case .mismatch: unexplained?.append(Unexplained(trace: trace.name, seq: o.seq, t: o.t, differences: r.differences))
                }
            }
        }
        return score
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
                var scores: [Double: Score] = [:]
                var top = Score(matched: -1)
                for c in candidates {
                    var p = profile
                    p[keyPath: range.path] = c
                    guard valid(p) else { continue }
                    let s = score(traces, profile: p, unexplained: &none)
                    replays += 1
                    scores[c] = s
                    top = max(top, s)
                }
                // The run of equally good candidates around the best one nearest the current value.
                let winners = candidates.filter { scores[$0] == top }
                guard let nearest = winners.min(by: { abs($0 - current) < abs($1 - current) }) else { continue }
                let i = candidates.firstIndex(of: nearest)!
                var lo = i, hi = i
                while lo > 0, scores[candidates[lo - 1]] == top { lo -= 1 }
                while hi < candidates.count - 1, scores[candidates[hi + 1]] == top { hi += 1 }
                let exercised = candidates.contains { scores[$0] != nil && scores[$0] != top }
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
                // A later pass whose grid lies inside what an earlier pass found tells nothing new.
                if !exercised, let earlier = results[field], earlier.exercised { continue }
                // The middle of the interval on the grid (every grid value in it scores `top`),
                // unless the interval holds the value it started from: the data do not move it.
                let keptStart = !exercised || (lower...upper).contains(startValue)
                let fitted = !exercised ? current : keptStart ? startValue
                    : ((lower + ((upper - lower) / 2 / g.step).rounded(.down) * g.step) * 1000).rounded() / 1000
                if fitted != current { moved = true }
                profile[keyPath: range.path] = fitted
                best = top
                var atStart = profile
                atStart[keyPath: range.path] = startValue
                let was = valid(atStart) ? score(traces, profile: atStart, unexplained: &none) : top
                replays += 1
                results[field] = FieldResult(field: field, start: startValue, fitted: fitted, interval: lower...upper, exercised: exercised,
                                             score: top, resolvedByMatch: max(0, top.matched - was.matched),
                                             resolvedByStale: max(0, top.staleOnly - was.staleOnly),
                                             keptStart: keptStart)
            }
            if !moved { break }
        }
        var unexplained: [Unexplained]? = []
        _ = score(traces, profile: profile, unexplained: &unexplained)
        replays += 1
        return Result(profile: profile, fields: fields.compactMap { results[$0] }, observations: observations, before: before,
                      after: best, unexplained: unexplained ?? [], replays: replays)
    }

    /// A candidate the profile decoder would take (the rules between fields hold).
    static func valid(_ p: DeviceProfile) -> Bool { p.crossFieldError == nil }
}
