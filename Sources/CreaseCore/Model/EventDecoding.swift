extension Event {
    /// Decodes one event object. Errors name the offending field and carry the
    /// message's `id` and `ts` when those could be read.
    public static func decode(_ value: JSONValue) throws(InputError) -> EventEnvelope {
        let r = try FieldReader(value, path: "", what: "event")
        let id = r.optional("id")
        var ts: Int64?
        do {
            ts = try timestamp(r)
            return try decodeFields(r, id: id, ts: ts)
        } catch {
            var e = error
            e.id = id
            e.ts = ts
            throw e
        }
    }

    private static func timestamp(_ r: FieldReader) throws(InputError) -> Int64? {
        guard let t = try r.optionalNumber("ts") else { return nil }
        guard t == t.rounded(), abs(t) < 9.2e18 else { throw InputError.wrongType("ts", expected: "an integer (nanoseconds)", got: .number(t)) }
        return Int64(t)
    }

    private static func decodeFields(_ r: FieldReader, id: JSONValue?, ts: Int64?) throws(InputError) -> EventEnvelope {
        if let idValue = id {
            switch idValue {
            case .string, .number, .bool: break
            default: throw InputError.wrongType("id", expected: "a string, number or boolean", got: idValue)
            }
        }
        let name = try r.string("event")
        // Every event may carry "event", "ts" and "id" besides its own fields.
        func fields(_ own: [StaticString]) throws(InputError) { try r.rejectUnknown(allowed: ["event", "ts", "id"] + own) }

        let event: Event
        switch name {
        case "hinge":
            try fields(["angle", "unit"])
            var angle = try r.number("angle")
            // UIHinge.angle and XCUIHinge.angle are radians; WebDriverAgent's and Appium's
            // hinge readings are degrees (docs/events.md).
            if try r.optionalEnumeration("unit", AngleUnit.self) == .rad { angle = angle * (180 / Double.pi) }
            // The profile's encoder tolerance is the engine's to apply; here only what no
            // tolerance (at most 45°) could make an angle.
            guard angle >= -EventLimits.maxAngleTolerance, angle <= EventLimits.maxAngle + EventLimits.maxAngleTolerance else {
                throw InputError.outOfRange("angle", "must be between 0 (shut) and 180 (flat) degrees, and the profile's hingeTolerance past either end", got: angle)
            }
            event = .hinge(angle: angle == 0 ? 0 : angle)  // folds -0 into 0
        case "orientation":
            try fields(["value", "convention"])
            let convention = try r.optionalEnumeration("convention", OrientationConvention.self) ?? .interface
            switch convention {
            case .device:
                event = .deviceOrientation(try r.enumeration("value", DeviceOrientation.self))
            case .interface:
                // faceUp and faceDown are device orientations only: an interface is never flat.
                if case .string(let text) = r.optional("value"), let device = DeviceOrientation(rawValue: text), device.isFlat {
                    throw InputError(.badValue, "field \"value\": \"\(text)\" is a device orientation; send it with \"convention\":\"device\"", field: "value")
                }
                event = .orientation(try r.enumeration("value", Orientation.self))
            }
        case "motion":
            try fields(["gravity"])
            event = .motion(try gravity(r))
        case "rotationLock":
            try fields(["enabled"])
            event = .rotationLock(enabled: try r.bool("enabled"))
        case "keyboard":
            try fields(["visible", "height"])
            let visible = try r.bool("visible")
            let height = try r.optionalNumber("height")
            if let h = height, !(h >= 0 && h <= EventLimits.maxKeyboardHeight) {
                throw InputError.outOfRange("height", "must be between 0 and \(Int(EventLimits.maxKeyboardHeight)) points", got: h)
            }
            event = .keyboard(visible: visible, height: height.map { $0 == 0 ? 0 : $0 })
        case "pip":
            try fields(["active"])
            event = .pip(active: try r.bool("active"))
        case "liveActivities":
            try fields(["count"])
            event = .liveActivities(count: try r.integer("count", min: 0, max: EventLimits.maxLiveActivities))
        case "splitView":
            try fields(["side"])
            event = .splitView(try r.enumeration("side", SplitSide.self))
        case "layoutDirection":
            try fields(["value"])
            event = .layoutDirection(try r.enumeration("value", LayoutDirection.self))
        case "reduceTransparency":
            try fields(["enabled"])
            event = .reduceTransparency(enabled: try r.bool("enabled"))
        case "select":
            try fields(["tab"])
            event = .select(tab: try r.string("tab"))
        case "push":
            try fields(["screen"])
            event = .push(screen: try r.string("screen"))
        case "pop":
            try fields([])
            event = .pop
        case "present":
            try fields(["sheet"])
            event = .present(sheet: try r.string("sheet"))
        case "dismiss":
            try fields([])
            event = .dismiss
        case "inspector":
            try fields(["presented"])
            event = .inspector(presented: try r.bool("presented"))
        case "app":
            try fields(["manifest"])
            event = .app(try App.decode(try r.required("manifest"), path: "manifest"))
        default:
            throw InputError(.unknownEvent, "unknown event \"\(name)\"; expected one of \(Event.names.joined(separator: ", "))", field: "event")
        }
        return EventEnvelope(event: event, ts: ts, id: id)
    }

    /// `gravity`: three finite numbers in g, each within an IMU's full scale.
    private static func gravity(_ r: FieldReader) throws(InputError) -> Gravity {
        let items = try r.array("gravity")
        guard items.count == 3 else {
            throw InputError(.badValue, "field \"gravity\" must be [x, y, z] in g, three numbers; got \(items.count)", field: "gravity")
        }
        var v = [0.0, 0.0, 0.0]
        for (i, item) in items.enumerated() {
            guard case .number(let n) = item else { throw InputError.wrongType("gravity", expected: "[x, y, z], three numbers in g", got: item) }
            guard abs(n) <= EventLimits.maxGravity else {
                throw InputError.outOfRange("gravity", "each component must be within ±\(Int(EventLimits.maxGravity)) g (component \(i))", got: n)
            }
            v[i] = n == 0 ? 0 : n  // folds -0 into 0
        }
        return Gravity(x: v[0], y: v[1], z: v[2])
    }

    /// Encodes the event as a canonical JSON object (used by traces and `crease gen`).
    public func write(to w: inout JSONWriter, ts: Int64? = nil, id: JSONValue? = nil) {
        w.beginObject()
        w.key("event"); w.string(name)
        switch self {
        case .hinge(let angle): w.key("angle"); w.number(angle)
        case .orientation(let o): w.key("value"); w.string(o.rawValue)
        case .deviceOrientation(let o): w.key("value"); w.string(o.rawValue); w.key("convention"); w.string("device")
        case .motion(let g):
            w.key("gravity"); w.beginArray(); w.number(g.x); w.number(g.y); w.number(g.z); w.endArray()
        case .rotationLock(let enabled): w.key("enabled"); w.bool(enabled)
        case .keyboard(let visible, let height):
            w.key("visible"); w.bool(visible)
            if let height { w.key("height"); w.number(height) }
        case .pip(let active): w.key("active"); w.bool(active)
        case .liveActivities(let count): w.key("count"); w.int(count)
        case .splitView(let side): w.key("side"); w.string(side.rawValue)
        case .layoutDirection(let d): w.key("value"); w.string(d.rawValue)
        case .reduceTransparency(let enabled): w.key("enabled"); w.bool(enabled)
        case .select(let tab): w.key("tab"); w.string(tab)
        case .push(let screen): w.key("screen"); w.string(screen)
        case .pop, .dismiss: break
        case .present(let sheet): w.key("sheet"); w.string(sheet)
        case .inspector(let presented): w.key("presented"); w.bool(presented)
        case .app(let app): w.key("manifest"); w.value(app.source)
        }
        if let ts { w.key("ts"); w.int(Int(ts)) }
        if let id { w.key("id"); w.value(id) }
        w.endObject()
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        write(to: &w)
        return w.bytes
    }
}
