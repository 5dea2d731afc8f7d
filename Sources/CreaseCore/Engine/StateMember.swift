/// The members of the device state as its encoding names them, in the encoding's order. The
/// `state` command, trace headers, `load`, why's checkpoints and why's inputs all walk this
/// one list; each member's encoding, decoding and comparison is a switch over every member,
/// so a member cannot be added to one of them only. (A stored property of the state no member
/// covers fails the encoding round-trip test over random event sequences.)
public enum StateMember: String, CaseIterable, Sendable {
    case hingeAngle, pose, display, orientation, deviceOrientation, rotationLock, pendingOrientation,
         keyboard, pip, liveActivities, splitView, layoutDirection, reduceTransparency, ui

    /// The encoding's keys, in order.
    public static let keys = allCases.map(\.rawValue)

    /// Whether the layout reads it: a member of `DeviceInputs` (the display follows from the
    /// pose) or the UI state. The others are the rules' bookkeeping (`DeviceBookkeeping`),
    /// whose effect shows through the pose and the orientation.
    public var isLayoutInput: Bool {
        switch self {
        case .hingeAngle, .deviceOrientation, .rotationLock, .pendingOrientation: false
        case .pose, .display, .orientation, .keyboard, .pip, .liveActivities, .splitView, .layoutDirection, .reduceTransparency, .ui: true
        }
    }

    func write(_ s: DeviceState, app: App, to w: inout JSONWriter) {
        switch self {
        case .hingeAngle: w.number(s.hingeAngle)
        case .pose: w.string(s.pose.rawValue)
        case .display: w.string(s.display.rawValue)
        case .orientation: w.string(s.orientation.rawValue)
        case .deviceOrientation: if let d = s.deviceOrientation { w.string(d.rawValue) } else { w.null() }
        case .rotationLock: w.bool(s.rotationLock)
        case .pendingOrientation:
            guard let p = s.pendingOrientation else { w.null(); return }
            w.beginObject(); w.key("orientation"); w.string(p.orientation.rawValue); w.key("since"); w.int(Int(p.since)); w.endObject()
        case .keyboard:
            w.beginObject()
            w.key("visible"); w.bool(s.keyboardVisible)
            w.key("height"); if let h = s.keyboardHeight { w.number(h) } else { w.null() }
            w.endObject()
        case .pip: w.bool(s.pipActive)
        case .liveActivities: w.int(s.liveActivities)
        case .splitView: w.string(s.splitSide.rawValue)
        case .layoutDirection: w.string(s.layoutDirection.rawValue)
        case .reduceTransparency: w.bool(s.reduceTransparency)
        case .ui: s.ui.write(to: &w, app: app)
        }
    }

    /// Reads the member from a state object into `s`, checking it against the members
    /// before it where they constrain it.
    func read(_ r: FieldReader, into s: inout DeviceState, app: App) throws(InputError) {
        switch self {
        case .hingeAngle:
            s.hingeAngle = try r.number(rawValue)
            guard s.hingeAngle >= 0, s.hingeAngle <= EventLimits.maxAngle else {
                throw InputError.outOfRange(rawValue, "must be between 0 and 180 degrees", got: s.hingeAngle)
            }
        case .pose:
            s.pose = try r.enumeration(rawValue, Pose.self)
        case .display:
            // The display follows from the pose; when given it must say the same.
            if let display = try r.optionalEnumeration(rawValue, Display.self), display != s.display {
                throw InputError(.badValue, "field \"display\" is \"\(display.rawValue)\", but pose \"\(s.pose.rawValue)\" shows the \(s.display.rawValue) display",
                                 field: rawValue)
            }
        case .orientation:
            s.orientation = try r.enumeration(rawValue, Orientation.self)
        // States written before the IMU existed have none of the next three: the interface
        // orientation was the rig's to set (no device orientation), with no lock and nothing pending.
        case .deviceOrientation:
            s.deviceOrientation = try r.optionalEnumeration(rawValue, DeviceOrientation.self)
        case .rotationLock:
            s.rotationLock = try r.optionalBool(rawValue) ?? false
        case .pendingOrientation:
            guard let pending = r.optional(rawValue), pending != .null else { return }
            let p = try FieldReader(pending, path: rawValue, what: "pending orientation")
            try p.rejectUnknown(allowed: ["orientation", "since"])
            let since = try p.number("since")
            guard since == since.rounded(), abs(since) < 9.2e18 else {
                throw InputError.wrongType("pendingOrientation.since", expected: "an integer (nanoseconds)", got: .number(since))
            }
            s.pendingOrientation = .init(orientation: try p.enumeration("orientation", DeviceOrientation.self), since: Int64(since))
        case .keyboard:
            let kb = try FieldReader(try r.required(rawValue), path: rawValue, what: "keyboard")
            try kb.rejectUnknown(allowed: ["visible", "height"])
            s.keyboardVisible = try kb.bool("visible")
            s.keyboardHeight = try kb.optionalNumber("height")
            if let h = s.keyboardHeight, !(h >= 0 && h <= EventLimits.maxKeyboardHeight) {
                throw InputError.outOfRange("keyboard.height", "must be between 0 and \(Int(EventLimits.maxKeyboardHeight)) points", got: h)
            }
            // A loaded state is one the events could have produced: hiding the keyboard drops its height.
            if !s.keyboardVisible, let h = s.keyboardHeight {
                throw InputError(.invalidState, "state has a hidden keyboard with height \(InputError.shown(h)); a hidden keyboard keeps no height (give null)",
                                 field: "keyboard.height")
            }
        case .pip:
            s.pipActive = try r.bool(rawValue)
        case .liveActivities:
            s.liveActivities = try r.integer(rawValue, min: 0, max: EventLimits.maxLiveActivities)
        case .splitView:
            s.splitSide = try r.enumeration(rawValue, SplitSide.self)
        case .layoutDirection:
            s.layoutDirection = try r.enumeration(rawValue, LayoutDirection.self)
        case .reduceTransparency:
            s.reduceTransparency = try r.bool(rawValue)
        case .ui:
            s.ui = try UIState.decode(try FieldReader(try r.required(rawValue), path: rawValue, what: "ui state"), app: app)
        }
    }

    /// Whether the member differs between two states of one app.
    func differs(_ a: DeviceState, _ b: DeviceState) -> Bool {
        switch self {
        case .hingeAngle: a.hingeAngle != b.hingeAngle
        case .pose: a.pose != b.pose
        case .display: a.display != b.display
        case .orientation: a.orientation != b.orientation
        case .deviceOrientation: a.deviceOrientation != b.deviceOrientation
        case .rotationLock: a.rotationLock != b.rotationLock
        case .pendingOrientation: a.pendingOrientation != b.pendingOrientation
        case .keyboard: a.keyboardVisible != b.keyboardVisible || a.keyboardHeight != b.keyboardHeight
        case .pip: a.pipActive != b.pipActive
        case .liveActivities: a.liveActivities != b.liveActivities
        case .splitView: a.splitSide != b.splitSide
        case .layoutDirection: a.layoutDirection != b.layoutDirection
        case .reduceTransparency: a.reduceTransparency != b.reduceTransparency
        case .ui: a.ui != b.ui
        }
    }

    /// `s` with this member put back to its value in `earlier`, for a layout input; nil for
    /// the bookkeeping, which the layout reads only through the pose and the orientation.
    func restoring(in s: DeviceState, from earlier: DeviceState) -> DeviceState? {
        var s = s
        switch self {
        case .hingeAngle, .deviceOrientation, .rotationLock, .pendingOrientation: return nil
        case .pose, .display: s.pose = earlier.pose
        case .orientation: s.orientation = earlier.orientation
        case .keyboard: s.keyboardVisible = earlier.keyboardVisible; s.keyboardHeight = earlier.keyboardHeight
        case .pip: s.pipActive = earlier.pipActive
        case .liveActivities: s.liveActivities = earlier.liveActivities
        case .splitView: s.splitSide = earlier.splitSide
        case .layoutDirection: s.layoutDirection = earlier.layoutDirection
        case .reduceTransparency: s.reduceTransparency = earlier.reduceTransparency
        case .ui: s.ui = earlier.ui
        }
        return s
    }
}
