/// The `load` command: puts the engine into a given profile, app and state at once,
/// so a trace slice can be replayed into a live daemon from the point it starts.
///
///     {"cmd":"load","profile"?:{…},"app"?:{…},"state"?:{…},"digest"?:"…"}
///
/// `profile` and `app` default to those in force; `state` (a device state as the
/// `state` command and trace headers write it, or the `state` reply's own
/// `{"seq","state"}` member) defaults to the app's default state. With `digest`, the
/// load is refused unless the loaded state gives that layout digest, so a replay never
/// runs on from the wrong starting point. Like an `app` event, a load counts as one
/// applied change: `seq` moves on by one and the trace records it.
public struct LoadRequest: Sendable, Equatable {
    public var profile: DeviceProfile?
    public var app: App?
    /// Read against the app the load ends with.
    public var state: JSONValue?
    public var digest: UInt64?

    public init(profile: DeviceProfile? = nil, app: App? = nil, state: JSONValue? = nil, digest: UInt64? = nil) {
        self.profile = profile
        self.app = app
        self.state = state
        self.digest = digest
    }

    /// The request that puts a daemon where `header` says its trace begins.
    public init(header: TraceHeader) {
        var w = JSONWriter(capacity: 1024)
        header.initialState.write(to: &w, app: header.app)
        self.init(profile: header.profile, app: header.app, state: try? JSON.parse(w.bytes), digest: header.initialDigest)
    }

    /// Decodes the command's whole message (`cmd` and `id` included).
    public static func decode(_ body: JSONValue) throws(InputError) -> LoadRequest {
        let r = try FieldReader(body, path: "", what: "command \"load\"")
        try r.rejectUnknown(allowed: ["cmd", "id", "profile", "app", "state", "digest"])
        var request = LoadRequest()
        if let p = r.optional("profile") {
            do { request.profile = try DeviceProfile.decode(p) } catch { throw error.under("profile") }
        }
        if let a = r.optional("app") { request.app = try App.decode(a, path: "app") }
        request.state = r.optional("state")
        if let d = try r.optionalString("digest") {
            guard let digest = Digest.parseHex(d) else { throw InputError(.badValue, "field \"digest\" must be 16 hex digits, got \"\(d)\"", field: "digest") }
            request.digest = digest
        }
        return request
    }

    /// The body of the command, as `crease replay --to` sends it.
    public func write(to w: inout JSONWriter, id: JSONValue?) {
        w.beginObject()
        w.key("cmd"); w.string("load")
        if let id { w.key("id"); w.value(id) }
        if let profile { w.key("profile"); profile.write(to: &w) }
        if let app { w.key("app"); w.value(app.source) }
        if let state { w.key("state"); w.value(state) }
        if let digest { w.key("digest"); w.string(Digest.hex(digest)) }
        w.endObject()
    }

    /// The engine after the load, one seq past `current`; rejected (nothing changes) when
    /// the state does not fit the app or the digest is not the one asked for. `now`: the
    /// engine's clock when the load is read; a pending orientation dated after it (a state
    /// from another clock) is taken as proposed now, so its settle time runs from the load
    /// instead of never.
    public func loaded(onto current: Engine, now: Int64? = nil) throws(InputError) -> Engine {
        let profile = self.profile ?? current.profile
        let app = self.app ?? current.app
        var state = DeviceState(app: app)
        if var value = self.state {
            // The `state` reply's member wraps the state with its seq.
            if case .object(let members) = value, members.count == 2, let inner = value["state"], value["seq"] != nil { value = inner }
            do { state = try DeviceState.decode(value, app: app) } catch { throw error.under("state") }
            // The pose depends on the angle's history, but only within the hysteresis bands.
            guard HingePoseRule.nextPose(from: state.pose, angle: state.hingeAngle, profile: profile) == state.pose else {
                throw InputError(.invalidState, "pose \"\(state.pose.rawValue)\" cannot hold at hinge angle \(InputError.shown(state.hingeAngle))",
                                 field: "state.pose")
            }
            // Under the rotation lock the interface is what the lock leaves it (portrait where granted).
            if state.rotationLock {
                guard state.deviceOrientation != nil else {
                    throw InputError(.invalidState, "state has the rotation lock on but no device orientation; a lock hands the orientation to the device",
                                     field: "state.deviceOrientation")
                }
                let held = InterfaceOrientationRule.resolve(state, supported: app.supportedOrientations)
                guard held == state.orientation else {
                    throw InputError(.invalidState, "state has the rotation lock on with interface orientation \"\(state.orientation.rawValue)\"; the lock holds it \"\(held.rawValue)\"",
                                     field: "state.orientation")
                }
            }
            if let now, let p = state.pendingOrientation, p.since > now { state.pendingOrientation?.since = now }
        }
        let engine = Engine(profile: profile, app: app, state: state, seq: current.seq + 1)
        if let digest, engine.digest != digest {
            throw InputError(.digestMismatch, "the loaded state gives layout digest \(Digest.hex(engine.digest)), not the \(Digest.hex(digest)) asked for; nothing was loaded",
                             field: "digest")
        }
        return engine
    }
}

extension InputError {
    /// The same error with its field named inside `parent` (`state.ui.sheet`).
    func under(_ parent: String) -> InputError {
        var e = self
        e.field = field.map { "\(parent).\($0)" } ?? parent
        return e
    }
}
