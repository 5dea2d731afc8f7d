/// Gravity → device orientation (issue 25: "a device-orientation filter turns it into
/// `portrait`, `portraitUpsideDown`, `landscapeLeft`, `landscapeRight`, `faceUp` or
/// `faceDown`, with hysteresis between adjacent orientations, a tilt limit past which the
/// device counts as flat"). Modelled on AOSP's WindowOrientationListener, without its
/// low-pass filter: CoreMotion's gravity is already separated from the user's acceleration.
///
/// Every test is on squared components, so a sample costs a few multiplications and no
/// trigonometry; the profile's angles become the bounds below once, where the engine starts.
public struct DeviceOrientationFilter: Sendable, Equatable {
    /// |g|² must lie within (1 ∓ gravityTolerance)²: a swing or a shake is ignored.
    let minMagnitude2: Double
    let maxMagnitude2: Double
    /// sin²(flatTilt): at or past it, from upright, the device lies flat.
    let enterFlat2: Double
    /// sin²(flatTilt − flatHysteresis): below it, from flat, the device is upright again.
    let exitFlat2: Double
    /// cos²(45° − orientationHysteresis): how far an adjacent orientation's axis must lead.
    let adjacent2: Double
    /// The profile's settle time, in ns.
    public let settleNs: Int64

    public init(profile p: DeviceProfile) {
        minMagnitude2 = (1 - p.gravityTolerance) * (1 - p.gravityTolerance)
        maxMagnitude2 = (1 + p.gravityTolerance) * (1 + p.gravityTolerance)
        let enter = Trigonometry.sin(degrees: p.flatTilt), exit = Trigonometry.sin(degrees: p.flatTilt - p.flatHysteresis)
        enterFlat2 = enter * enter
        exitFlat2 = exit * exit
        let lead = Trigonometry.cos(degrees: 45 - p.orientationHysteresis)
        adjacent2 = lead * lead
        settleNs = Int64(p.orientationSettleMs * 1_000_000)
    }

    /// The device orientation a sample shows, seen from `current`; nil for a sample whose
    /// magnitude is too far from 1 g to say.
    ///
    /// Tilt is the screen's angle from upright (0 upright, 90° flat): flat at `flatTilt`,
    /// upright again below `flatTilt − flatHysteresis`; face up when the screen faces the sky
    /// (gravity into the screen, z < 0). Upright, the orientation is the one whose axis
    /// gravity is nearest (device `landscapeLeft`, home side right, has gravity along −x);
    /// an orientation adjacent to `current` is taken only once gravity leads its axis by
    /// `orientationHysteresis` past the 45° boundary, so a vector wavering near 45° keeps
    /// the orientation it has. The opposite orientation, and any from flat, is taken at once.
    @inline(__always)
    public func proposal(_ g: Gravity, current: DeviceOrientation) -> DeviceOrientation? {
        let xx = g.x * g.x, yy = g.y * g.y, zz = g.z * g.z
        let m2 = xx + yy + zz
        guard m2 >= minMagnitude2, m2 <= maxMagnitude2 else { return nil }
        if zz >= (current.isFlat ? exitFlat2 : enterFlat2) * m2 { return g.z < 0 ? .faceUp : .faceDown }
        let nearest: DeviceOrientation
        let along: Double
        if yy >= xx {
            nearest = g.y <= 0 ? .portrait : .portraitUpsideDown
            along = yy
        } else {
            nearest = g.x < 0 ? .landscapeLeft : .landscapeRight
            along = xx
        }
        if nearest == current || current.isFlat || nearest.isOpposite(of: current) { return nearest }
        return along >= adjacent2 * (xx + yy) ? nearest : current
    }
}

extension DeviceOrientation {
    /// Turned half a turn from `other`, both upright.
    func isOpposite(of other: DeviceOrientation) -> Bool {
        switch (self, other) {
        case (.portrait, .portraitUpsideDown), (.portraitUpsideDown, .portrait),
             (.landscapeLeft, .landscapeRight), (.landscapeRight, .landscapeLeft): true
        default: false
        }
    }
}

/// A proposed device orientation becomes the device orientation once it has held for the
/// profile's settle time (issue 25: "and a settle time"; AOSP's proposal settle time): a
/// sample proposing something else starts the wait again, one proposing the current
/// orientation ends it. The wait is judged at each sample, on the engine's clock (the
/// daemon's read time, recorded), so a replay settles at the same sample.
public enum OrientationSettleRule {
    /// Applies one sample's proposal at `time`. Returns whether the device orientation changed.
    @inline(__always)
    public static func apply(_ proposed: DeviceOrientation, current: DeviceOrientation, at time: Int64, settleNs: Int64,
                             to state: inout DeviceState) -> Bool {
        if proposed == current {
            if state.pendingOrientation != nil { state.pendingOrientation = nil }
            return false
        }
        var since = time
        if let pending = state.pendingOrientation, pending.orientation == proposed { since = pending.since }
        let (elapsed, overflow) = time.subtractingReportingOverflow(since)
        guard overflow ? time > since : elapsed >= settleNs else {
            if since == time { state.pendingOrientation = .init(orientation: proposed, since: time) }
            return false
        }
        state.pendingOrientation = nil
        state.deviceOrientation = proposed
        return true
    }
}

/// Device orientation → interface orientation, as the phone turns the app (issue 25;
/// duo-facts: "inner ignores supported orientations, outer honours them"):
/// - under the rotation lock the interface wants portrait; lying flat it wants what it has;
///   otherwise the device orientation's own interface orientation;
/// - the outer display grants only the app's `supportedOrientations`; the inner display grants
///   every orientation;
/// - a wish it cannot grant keeps the current interface orientation if that one is granted,
///   else takes the first supported orientation in the manifest's order.
/// With no device orientation (an interface-convention `orientation` event set the interface
/// directly), the interface stays as the rig set it.
public enum InterfaceOrientationRule {
    public static func resolve(_ s: DeviceState, supported: [Orientation]) -> Orientation {
        guard let device = s.deviceOrientation else { return s.orientation }
        func granted(_ o: Orientation) -> Bool { s.display == .inner || supported.contains(o) }
        let wanted = s.rotationLock ? .portrait : (device.interface ?? s.orientation)
        if granted(wanted) { return wanted }
        if granted(s.orientation) { return s.orientation }
        return supported.first ?? .portrait
    }
}

/// One `motion` sample: the filter's proposal, then the settle time, then (when the device
/// orientation changed) the interface orientation resolved again. Returns whether the
/// interface orientation, the one the layout reads, changed. The one reducer of a sample,
/// for the engine's fast path and the state machine alike.
public enum MotionRule {
    @inline(__always) @discardableResult
    public static func apply(_ gravity: Gravity, at time: Int64, filter: DeviceOrientationFilter, supported: [Orientation],
                             to state: inout DeviceState) -> Bool {
        // With the interface set directly, the filter starts from the device orientation
        // that shows it; the first sample hands the orientation back to the device.
        let known = state.deviceOrientation
        let current = known ?? DeviceOrientation(interface: state.orientation)
        guard let proposed = filter.proposal(gravity, current: current) else { return false }
        var moved = OrientationSettleRule.apply(proposed, current: current, at: time, settleNs: filter.settleNs, to: &state)
        if known == nil, !moved {
            state.deviceOrientation = current
            moved = true
        }
        guard moved else { return false }
        let before = state.orientation
        state.orientation = InterfaceOrientationRule.resolve(state, supported: supported)
        return state.orientation != before
    }

    /// A motion sample's time: the settle time is measured on it, so one without is refused.
    public static func time(_ time: Int64?) throws(InputError) -> Int64 {
        guard let time else {
            throw InputError(.missingField, "a motion event needs the time it was read: give \"ts\" (nanoseconds) where no daemon stamps it", field: "ts")
        }
        return time
    }
}
