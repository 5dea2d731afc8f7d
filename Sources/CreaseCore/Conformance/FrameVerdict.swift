/// A frame of the device's screen a frame judge flagged (docs/frames.md), as a rig reports it
/// with `{"cmd": "frame", …}` and the trace records it:
///
///     {"kind":"flash","t":2138528042,"refSeq":3,"frame":127,"region":{"x":8,"y":37.3,"w":653,"h":879.6}}
///
/// `t` is when the frame was on screen (ns on the trace's axis), `refSeq` the seq the verdict
/// belongs to, `frame` its number in the judged source, `relayoutMs` a late relayout's latency.
public struct FrameVerdict: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case flash, unexpectedMotion, lateRelayout
    }

    public var kind: Kind
    public var t: UInt64
    public var refSeq: Int
    public var frame: Int
    public var region: Rect?
    public var relayoutMs: Double?

    public init(kind: Kind, t: UInt64, refSeq: Int, frame: Int, region: Rect? = nil, relayoutMs: Double? = nil) {
        self.kind = kind
        self.t = t
        self.refSeq = refSeq
        self.frame = frame
        self.region = region
        self.relayoutMs = relayoutMs
    }

    /// The verdict's members of `body` (a command, with `cmd` and `id` besides, or a record's object).
    static func decode(_ r: FieldReader, extra: [StaticString]) throws(InputError) -> FrameVerdict {
        try r.rejectUnknown(allowed: ["kind", "t", "refSeq", "frame", "region", "relayoutMs"] + extra)
        var region: Rect?
        if let value = r.optional("region") {
            let g = try FieldReader(value, path: r.fieldPath("region"), what: "region")
            try g.rejectUnknown(allowed: ["x", "y", "w", "h"])
            region = Rect(x: try g.number("x"), y: try g.number("y"), w: try g.number("w"), h: try g.number("h"))
        }
        let relayout = try r.optionalNumber("relayoutMs")
        if let relayout, !(relayout >= 0 && relayout.isFinite) {
            throw InputError.outOfRange("relayoutMs", "must be milliseconds, 0 or more", got: "\(relayout)")
        }
        return FrameVerdict(kind: try r.enumeration("kind", Kind.self), t: UInt64(try r.integer("t", min: 0, max: TraceHeader.maxInteger)),
                            refSeq: try r.integer("refSeq", min: 0, max: TraceHeader.maxInteger),
                            frame: try r.integer("frame", min: 0, max: TraceHeader.maxInteger), region: region, relayoutMs: relayout)
    }

    /// The verdict as the object a trace's `frame` member holds.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        writeMembers(to: &w)
        w.endObject()
    }

    /// Its members inside an object already begun (a `frame` command adds `cmd`).
    public func writeMembers(to w: inout JSONWriter) {
        w.key("kind"); w.string(kind.rawValue)
        w.key("t"); w.int(Int(t))
        w.key("refSeq"); w.int(refSeq)
        w.key("frame"); w.int(frame)
        if let region {
            w.key("region"); w.beginObject()
            w.key("x"); w.number(region.x); w.key("y"); w.number(region.y); w.key("w"); w.number(region.w); w.key("h"); w.number(region.h)
            w.endObject()
        }
        if let relayoutMs { w.key("relayoutMs"); w.number(relayoutMs) }
    }
}
