/// Hinge angle → pose, with hysteresis (contract section 2: "from the angle with
/// hysteresis whose thresholds live in the device profile").
///
/// Each threshold has a band of ±hysteresis around it: the pose moves up only when the
/// angle reaches threshold + hysteresis and back down only at threshold − hysteresis,
/// so an encoder jittering around a threshold never makes the pose flap.
public enum HingePoseRule {
    // Inlined: called apart, it took the whole profile by value, and every hinge tick copied
    // it (~80 instructions of memcpy) to read three numbers.
    @inline(__always)
    public static func nextPose(from current: Pose, angle: Double, profile p: DeviceProfile) -> Pose {
        let openUp = p.partialOpenThreshold + p.hingeHysteresis
        let closeDown = p.partialOpenThreshold - p.hingeHysteresis
        let fullUp = p.fullyOpenThreshold + p.hingeHysteresis
        let fullDown = p.fullyOpenThreshold - p.hingeHysteresis
        switch current {
        case .closed:
            if angle >= fullUp { return .fullyOpen }
            if angle >= openUp { return .partiallyOpen }
            return .closed
        case .partiallyOpen:
            if angle <= closeDown { return .closed }
            if angle >= fullUp { return .fullyOpen }
            return .partiallyOpen
        case .fullyOpen:
            if angle <= closeDown { return .closed }
            if angle <= fullDown { return .partiallyOpen }
            return .fullyOpen
        }
    }
}

/// A hinge reading as a rig's encoder gives it: within the profile's `hingeTolerance` past
/// either end (an encoder overshoots shut and flat by a degree or two) it is clamped to
/// 0 or 180; past that it is refused, and the state is left as it was. Replay goes through
/// the same rule, so a recorded overshoot clamps the same way.
/// One `hinge` reading: clamped (or refused), the angle set, the pose moved through its
/// thresholds, and on a new pose (a new display, which grants other orientations) the
/// interface orientation resolved again. Returns whether the pose changed; the angle itself
/// is no layout input. The one reducer of a reading, for the engine's fast path and the
/// state machine alike. A refused reading changes nothing.
public enum HingeRule {
    @inline(__always) @discardableResult
    public static func apply(_ reading: Double, profile: DeviceProfile, supported: [Orientation],
                             to state: inout DeviceState) throws(InputError) -> Bool {
        let angle = try HingeReadingRule.clamped(reading, profile: profile)
        let pose = HingePoseRule.nextPose(from: state.pose, angle: angle, profile: profile)
        state.hingeAngle = angle
        guard pose != state.pose else { return false }
        state.pose = pose
        state.orientation = InterfaceOrientationRule.resolve(state, supported: supported)
        return true
    }
}

public enum HingeReadingRule {
    @inline(__always)
    public static func clamped(_ angle: Double, profile p: DeviceProfile) throws(InputError) -> Double {
        if angle >= 0, angle <= EventLimits.maxAngle { return angle }
        let tolerance = p.hingeTolerance
        guard angle >= -tolerance, angle <= EventLimits.maxAngle + tolerance else {
            throw InputError.outOfRange("angle", "must be between \(InputError.shown(-tolerance)) and \(InputError.shown(EventLimits.maxAngle + tolerance)) degrees (0 shut, 180 flat, and the profile's hingeTolerance past either end)",
                                        got: angle)
        }
        return angle < 0 ? 0 : EventLimits.maxAngle
    }

    /// Whether a reading is clamped (an overshoot the daemon counts).
    @inline(__always)
    public static func overshoots(_ angle: Double) -> Bool { !(angle >= 0 && angle <= EventLimits.maxAngle) }
}

/// Contract section 2: "`display` is `outer` when closed, else `inner`" (duo-facts §5:
/// the outer display goes dark when the device opens, at any angle).
public enum DisplayRule {
    public static func display(for pose: Pose) -> Display { pose == .closed ? .outer : .inner }
}
