/// The state as JSON (the `state` command, trace headers, `load`, why's checkpoints) and
/// back, by ids so a reader needs only the manifest: one key per `StateMember`, in its order;
/// arrays in manifest order.
extension DeviceState {
    public func write(to w: inout JSONWriter, app: App) {
        w.beginObject()
        for member in StateMember.allCases {
            w.key(member.rawValue)
            member.write(self, app: app, to: &w)
        }
        w.endObject()
    }

    public func jsonBytes(app: App) -> [UInt8] {
        var w = JSONWriter()
        write(to: &w, app: app)
        return w.bytes
    }

    /// Reads a state written by `write(to:app:)`, member by member in their order (a
    /// member may check itself against those before it: the display against the pose).
    /// The pose is taken as recorded (it depends on the angle's history, not only on the angle).
    public static func decode(_ value: JSONValue, app: App) throws(InputError) -> DeviceState {
        let r = try FieldReader(value, path: "", what: "state")
        try r.rejectUnknown(allowed: StateMember.keys)
        var s = DeviceState(app: app)
        for member in StateMember.allCases { try member.read(r, into: &s, app: app) }
        return s
    }
}

extension Engine {
    public func stateJSON() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("state"); state.write(to: &w, app: app)
        w.endObject()
        return w.bytes
    }
}
