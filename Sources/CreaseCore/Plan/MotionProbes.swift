/// `--probes` on a rig with a tilt stage (`moves.motion`): sweeps across the device-orientation
/// filter's boundaries (`DeviceOrientationFilter`), both ways, looking on each side, as the
/// hinge sweeps do for the hinge thresholds (`TourProbes`).
///
/// Three boundaries, each swept from upright portrait and back:
/// - towards landscape left and towards landscape right: the adjacent orientation is taken
///   once gravity leads its axis by `orientationHysteresis` past 45°, so with h that and δ
///   half of it (at most 1°): 45 + h − δ (still portrait), 45 + h + δ (landscape), 45 − h + δ
///   (still landscape), 45 − h − δ (portrait again);
/// - back, the screen towards the sky: flat at `flatTilt` F, upright again below
///   F − `flatHysteresis`: F − δ, F + δ (face up), F − hf + δ (still face up), F − hf − δ.
///
/// Each position is two samples of the same gravity: the first when the stage got there, the
/// second after the settle time (`orientationSettleMs`, plus 100 ms for a late sample), which
/// is when a proposal becomes the device orientation; the look follows the second. Both
/// carry `ts` on the tour's own time axis, so `crease layout --events` settles where a rig
/// holding the phone would, and whoever streams the tour keeps at least that gap. Every
/// move between positions stays in one plane or passes through upright, so the samples a
/// real IMU reads on the way cross no boundary the sweep does not name.
///
/// With `--calibration`, a sweep is centred on the middle of what the calibration left open
/// of its field (`orientationHysteresis`, `flatTilt`) and δ is at most a quarter of it; the
/// hold outlasts the top of `orientationSettleMs`'s interval.
public enum MotionProbes {
    /// Where the stage holds the phone: turned `degrees` out of upright portrait in `plane`.
    public struct Position: Sendable, Equatable {
        public enum Plane: Sendable, Equatable { case towardLandscapeLeft, towardLandscapeRight, back }
        public var plane: Plane
        public var degrees: Double

        public static let upright = Position(plane: .towardLandscapeLeft, degrees: 0)

        /// What the IMU reads there, in CoreMotion's frame (x right, y up, z out of the screen):
        /// device landscape left has gravity along −x, face up along −z. Rounded to a
        /// millionth of a g, so the tour's text is exactly the sample a rig sends.
        public var gravity: Gravity {
            let s = Trigonometry.sin(degrees: degrees), c = Trigonometry.cos(degrees: degrees)
            func r(_ v: Double) -> Double { let x = (v * 1e6).rounded() / 1e6; return x == 0 ? 0 : x }
            switch plane {
            case .towardLandscapeLeft: return Gravity(x: r(-s), y: r(-c), z: 0)
            case .towardLandscapeRight: return Gravity(x: r(s), y: r(-c), z: 0)
            case .back: return Gravity(x: 0, y: r(-c), z: r(-s))
            }
        }

        /// The degrees the stage turns from here to `other`: along one plane, or back through upright.
        public func degrees(to other: Position) -> Double {
            plane == other.plane ? abs(degrees - other.degrees) : abs(degrees) + abs(other.degrees)
        }

        /// Where the stage holds a phone in `orientation` (upright portrait when the device
        /// orientation was never set: the interface was set directly).
        public static func holding(_ orientation: DeviceOrientation?) -> Position {
            switch orientation {
            case nil, .portrait?: .upright
            case .landscapeLeft?: Position(plane: .towardLandscapeLeft, degrees: 90)
            case .landscapeRight?: Position(plane: .towardLandscapeRight, degrees: 90)
            case .portraitUpsideDown?: Position(plane: .towardLandscapeLeft, degrees: 180)
            case .faceUp?: Position(plane: .back, degrees: 90)
            case .faceDown?: Position(plane: .back, degrees: -90)
            }
        }
    }

    /// The filter's fields a calibration left open (nil: the profile's value).
    public struct Intervals: Sendable, Equatable {
        public var orientationHysteresis: ClosedRange<Double>?
        public var flatTilt: ClosedRange<Double>?
        public var orientationSettleMs: ClosedRange<Double>?

        public init(orientationHysteresis: ClosedRange<Double>? = nil, flatTilt: ClosedRange<Double>? = nil,
                    orientationSettleMs: ClosedRange<Double>? = nil) {
            self.orientationHysteresis = orientationHysteresis
            self.flatTilt = flatTilt
            self.orientationSettleMs = orientationSettleMs
        }
    }

    /// The centre and δ of a sweep: the profile's value, or the middle of a calibrated interval.
    static func centre(_ value: Double, band: Double, within interval: ClosedRange<Double>?) -> (centre: Double, delta: Double) {
        var delta = band > 0 ? min(1, band / 2) : 0.5
        guard let interval else { return (value, delta) }
        let width = interval.upperBound - interval.lowerBound
        delta = min(delta, width > 0 ? width / 4 : 0.25)
        return ((interval.lowerBound + interval.upperBound) / 2, delta)
    }

    /// The looked-at positions of the three sweeps, in order.
    public static func sweeps(profile: DeviceProfile, within intervals: Intervals = Intervals()) -> [Position] {
        let (h, dh) = centre(profile.orientationHysteresis, band: profile.orientationHysteresis, within: intervals.orientationHysteresis)
        let adjacent = [45 + h - dh, 45 + h + dh, 45 - h + dh, 45 - h - dh].map { min(90, max(0, $0)) }
        let hf = profile.flatHysteresis
        let (f, df) = centre(profile.flatTilt, band: hf, within: intervals.flatTilt)
        let flat = [f - df, f + df, f - hf + df, f - hf - df].map { min(90, max(0, $0)) }
        return adjacent.map { Position(plane: .towardLandscapeLeft, degrees: $0) }
            + adjacent.map { Position(plane: .towardLandscapeRight, degrees: $0) }
            + flat.map { Position(plane: .back, degrees: $0) }
    }

    /// Seconds the stage holds each position before the second sample.
    public static func hold(profile: DeviceProfile, within intervals: Intervals = Intervals()) -> Double {
        max(profile.orientationSettleMs, intervals.orientationSettleMs?.upperBound ?? 0) / 1000 + 0.1
    }

    /// The probe steps from `state` at `seconds` into the tour (the first sample's `ts` is
    /// counted from there); `state` is left where they end. Nil when the rig has no tilt stage.
    static func steps(from state: inout DeviceState, at seconds: Double, app: App, profile: DeviceProfile, rig: RigProfile, look: Double,
                      intervals: Intervals = Intervals(), classify: (Layout) -> UInt64) -> [Tour.Step]? {
        guard let stage = rig.motion else { return nil }
        let hold = TourPlanner.microseconds(hold(profile: profile, within: intervals))
        var steps: [Tour.Step] = []
        var clock = seconds
        var at = Position.holding(state.deviceOrientation)
        func sample(_ p: Position, cost: Double, looking: Bool) {
            let ts = Int64(((clock + cost) * 1e6).rounded()) * 1000
            var a = app
            do { try StateMachine.apply(.motion(p.gravity), at: ts, to: &state, app: &a, profile: profile) } catch {
                preconditionFailure("a probe's gravity of 1 g was refused: \(error)")
            }
            let layout = LayoutBuilder.build(profile: profile, app: app, state: state)
            let total = TourPlanner.microseconds(cost + (looking ? look : 0))
            steps.append(Tour.Step(event: .motion(p.gravity), digest: DigestAlgorithm.crease64v.digest(layout.encodeBody()),
                                   classDigest: classify(layout), cost: total, why: .probe,
                                   expected: looking ? PageSourceView.observation(of: layout) : nil, ts: ts))
            clock += total
        }
        func visit(_ p: Position, looking: Bool) {
            sample(p, cost: TourPlanner.microseconds(stage.seconds(degrees: at.degrees(to: p))), looking: false)
            sample(p, cost: hold, looking: looking)
            at = p
        }
        if state.deviceOrientation != .portrait || state.pendingOrientation != nil { visit(.upright, looking: false) }
        for p in sweeps(profile: profile, within: intervals) { visit(p, looking: true) }
        return steps
    }
}
