/// `--probes`: a sweep across each hinge threshold in both directions at the end of a tour,
/// looking on each side, so a night's run shows where the phone's thresholds really are.
///
/// For a threshold T with hysteresis h (the encoder noise the profile tolerates without a
/// flap), from the pose below it: T + h − δ (not yet across: the lower pose), T + h + δ
/// (across: the upper pose), T − h + δ (back inside the band: still the upper pose), and
/// T − h − δ (across again: the lower pose); δ is half the hysteresis, at most 1°. The
/// closed/partly open threshold is swept from shut, the partly/fully open one from the
/// middle of the partly open band.
///
/// With `--calibration` (what `crease calibrate --json` left open of each threshold: the
/// interval of values its observations still allow), a threshold's sweep is centred on the
/// middle of that interval and δ is at most a quarter of it, so the probes split what the last
/// night left open and the next calibration narrows it.
public enum TourProbes {
    /// What a calibration left open of each hinge threshold (nil: the profile's value).
    public struct Intervals: Sendable, Equatable {
        public var partialOpen: ClosedRange<Double>?
        public var fullyOpen: ClosedRange<Double>?
        /// The orientation filter's, for the tilt stage's sweeps.
        public var motion: MotionProbes.Intervals

        public init(partialOpen: ClosedRange<Double>? = nil, fullyOpen: ClosedRange<Double>? = nil,
                    motion: MotionProbes.Intervals = MotionProbes.Intervals()) {
            self.partialOpen = partialOpen
            self.fullyOpen = fullyOpen
            self.motion = motion
        }
    }

    /// The angles of the sweep across `threshold` (or the middle of `within`), in order.
    public static func sweep(_ threshold: Double, profile: DeviceProfile, within interval: ClosedRange<Double>? = nil) -> [Double] {
        let h = profile.hingeHysteresis
        var delta = h > 0 ? min(1, h / 2) : 0.5
        var centre = threshold
        if let interval {
            centre = (interval.lowerBound + interval.upperBound) / 2
            let width = interval.upperBound - interval.lowerBound
            delta = min(delta, width > 0 ? width / 4 : 0.25)
        }
        return [centre + h - delta, centre + h + delta, centre - h + delta, centre - h - delta].map { min(180, max(0, $0)) }
    }

    /// The probe steps from `state` (where the walk ended), which is left where they end:
    /// each a hinge event, the sweeps' with a look. Nil when the rig cannot move the hinge.
    static func steps(from state: inout DeviceState, app: App, profile: DeviceProfile, rig: RigProfile, look: Double,
                      intervals: Intervals = Intervals(), classify: (Layout) -> UInt64) -> [Tour.Step]? {
        guard rig.hinge != nil else { return nil }
        var steps: [Tour.Step] = []
        func take(_ angle: Double, looking: Bool) {
            let event = Event.hinge(angle: angle)
            let cost = rig.cost(of: event, from: state)!
            var a = app
            do { try StateMachine.apply(event, at: 0, to: &state, app: &a, profile: profile) } catch {
                preconditionFailure("a hinge angle between 0 and 180 was refused: \(error)")
            }
            let layout = LayoutBuilder.build(profile: profile, app: app, state: state)
            steps.append(Tour.Step(event: event, digest: DigestAlgorithm.crease64v.digest(layout.encodeBody()), classDigest: classify(layout),
                                   cost: TourPlanner.microseconds(cost + (looking ? look : 0)), why: .probe,
                                   expected: looking ? PageSourceView.observation(of: layout) : nil))
        }
        let lower = sweep(profile.partialOpenThreshold, profile: profile, within: intervals.partialOpen)
        let upper = sweep(profile.fullyOpenThreshold, profile: profile, within: intervals.fullyOpen)
        if state.pose != .closed { take(0, looking: false) }
        for angle in lower { take(angle, looking: true) }
        // Between the two sweeps: past the first's highest angle, short of the second's lowest.
        take((lower.max()! + upper.min()!) / 2, looking: false)
        for angle in upper { take(angle, looking: true) }
        return steps
    }
}
