/// The layout's inputs as `why` names them: the app, then each member of the state
/// (`StateMember`, the encoding's keys in its order). Compared member by member in Swift (a
/// replay to a seq compares after every record), written as JSON only for the answer.
enum WhyInputs {
    static let names = ["app"] + StateMember.keys

    /// The state member of input `i` of `names`; nil for the app.
    static func member(_ i: Int) -> StateMember? { i == 0 ? nil : StateMember.allCases[i - 1] }

    /// Whether input `i` (of `names`) differs between two states of the same engine. A new
    /// app resets the UI state, so it counts as a change of `ui` too.
    static func differs(_ i: Int, _ a: DeviceState, _ appA: App, _ b: DeviceState, _ appB: App) -> Bool {
        guard let member = member(i) else { return appA.name != appB.name }
        if member == .ui, appA.name != appB.name { return true }
        return member.differs(a, b)
    }

    /// Each input's value as JSON text, in `names` order.
    static func values(_ state: DeviceState, app: App) -> [String] {
        var app1 = JSONWriter()
        app1.string(app.name)
        return [String(decoding: app1.bytes, as: UTF8.self)] + StateMember.allCases.map { member in
            var w = JSONWriter()
            member.write(state, app: app, to: &w)
            return String(decoding: w.bytes, as: UTF8.self)
        }
    }

    /// `state` with input `name` put back to its value in `earlier`; nil for the app and for
    /// the bookkeeping the layout never reads (the angle, the device orientation, the lock,
    /// what is pending), whose effect shows through the pose and orientation.
    static func replacing(_ name: String, in state: DeviceState, from earlier: DeviceState) -> DeviceState? {
        StateMember(rawValue: name)?.restoring(in: state, from: earlier)
    }
}
