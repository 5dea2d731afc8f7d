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
        guard let kind = EventKind(rawValue: name) else {
            throw InputError(.unknownEvent, "unknown event \"\(name)\"; expected one of \(EventKind.names.joined(separator: ", "))", field: "event")
        }
        // Every event may carry "event", "ts" and "id" besides its own fields.
        try r.rejectUnknown(allowed: ["event", "ts", "id"] + kind.fields)
        return EventEnvelope(event: try kind.decode(r), ts: ts, id: id)
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
