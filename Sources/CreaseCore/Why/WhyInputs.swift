/// The layout's inputs as `why` names them: the app, then each member of the state encoding
/// in its order. Compared member by member in Swift (a replay to a seq compares after every
/// record), written as JSON only for the answer. A test holds `names` to the encoding's keys.
enum WhyInputs {
    static let names = ["app", "hingeAngle", "pose", "display", "orientation", "deviceOrientation", "rotationLock", "pendingOrientation",
                        "keyboard", "pip", "liveActivities", "splitView", "layoutDirection", "reduceTransparency", "ui"]

    /// Whether input `i` (of `names`) differs between two states of the same engine.
    static func differs(_ i: Int, _ a: DeviceState, _ appA: App, _ b: DeviceState, _ appB: App) -> Bool {
        switch names[i] {
        case "app": appA.name != appB.name
        case "hingeAngle": a.hingeAngle != b.hingeAngle
        case "pose": a.pose != b.pose
        case "display": a.display != b.display
        case "orientation": a.orientation != b.orientation
        case "deviceOrientation": a.deviceOrientation != b.deviceOrientation
        case "rotationLock": a.rotationLock != b.rotationLock
        case "pendingOrientation": a.pendingOrientation != b.pendingOrientation
        case "keyboard": a.keyboardVisible != b.keyboardVisible || a.keyboardHeight != b.keyboardHeight
        case "pip": a.pipActive != b.pipActive
        case "liveActivities": a.liveActivities != b.liveActivities
        case "splitView": a.splitSide != b.splitSide
        case "layoutDirection": a.layoutDirection != b.layoutDirection
        case "reduceTransparency": a.reduceTransparency != b.reduceTransparency
        default: appA.name != appB.name || a.ui != b.ui
        }
    }

    /// Each input's value as JSON text, in `names` order.
    static func values(_ state: DeviceState, app: App) -> [String] {
        var w = JSONWriter()
        state.write(to: &w, app: app)
        guard case .object(let fields)? = try? JSON.parse(w.bytes) else { return names.map { _ in "?" } }
        return names.map { name in
            if name == "app" { return "\"" + app.name + "\"" }
            guard let value = fields.first(where: { $0.0 == name })?.1 else { return "?" }
            var v = JSONWriter()
            v.value(value)
            return String(decoding: v.bytes, as: UTF8.self)
        }
    }

    /// `state` with input `name` put back to its value in `earlier`; nil for the app and for
    /// the bookkeeping the layout never reads (the angle, the device orientation, the lock,
    /// what is pending), whose effect shows through the pose and orientation.
    static func replacing(_ name: String, in state: DeviceState, from earlier: DeviceState) -> DeviceState? {
        var s = state
        switch name {
        case "pose", "display": s.pose = earlier.pose
        case "orientation": s.orientation = earlier.orientation
        case "keyboard": s.keyboardVisible = earlier.keyboardVisible; s.keyboardHeight = earlier.keyboardHeight
        case "pip": s.pipActive = earlier.pipActive
        case "liveActivities": s.liveActivities = earlier.liveActivities
        case "splitView": s.splitSide = earlier.splitSide
        case "layoutDirection": s.layoutDirection = earlier.layoutDirection
        case "reduceTransparency": s.reduceTransparency = earlier.reduceTransparency
        case "ui": s.ui = earlier.ui
        default: return nil
        }
        return s
    }
}
