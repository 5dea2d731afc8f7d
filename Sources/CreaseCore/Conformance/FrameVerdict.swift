/// A frame of the device's screen a frame judge flagged (docs/frames.md), as a rig reports it
/// with `{"cmd": "frame", …}` and the trace records it:
///
///     {"kind":"flash","t":2138528042,"refSeq":3,"frame":127,"region":{"x":8,"y":37.3,"w":653,"h":879.6}}
///
/// `t` is when the frame was on screen (ns on the trace's axis), `refSeq` the seq the verdict
/// belongs to, `frame` its number in the judged source, `relayoutMs` a late relayout's latency.
///
/// A `layoutShift` record is not a flagged frame but a measurement: one session window of
/// the device's layout shifts (`score`, from `fromT` to `t`, ending at `frame`), what the
/// judge measured on the screen, beside the model's own score for the same run.
public struct FrameVerdict: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case flash, unexpectedMotion, lateRelayout, layoutShift

        /// A frame the judge flagged (every kind but a layout-shift window, which is a figure).
        public var flags: Bool { self != .layoutShift }
    }

    public var kind: Kind
    public var t: UInt64
    public var refSeq: Int
    public var frame: Int
    public var region: Rect?
    public var relayoutMs: Double?
    /// A layout-shift window's score and where it began.
    public var score: Double?
    public var fromT: UInt64?

    /// The largest score a window can sum to: a whole screen moving by its size, 5 s long at 60 fps.
    public static let maxScore = 300.0

    public init(kind: Kind, t: UInt64, refSeq: Int, frame: Int, region: Rect? = nil, relayoutMs: Double? = nil,
                score: Double? = nil, fromT: UInt64? = nil) {
        self.kind = kind
        self.t = t
        self.refSeq = refSeq
        self.frame = frame
        self.region = region
        self.relayoutMs = relayoutMs
        self.score = score
        self.fromT = fromT
    }

    /// The verdict's members of `body` (a command, with `cmd` and `id` besides, or a record's object).
    static func decode(_ r: FieldReader, extra: [StaticString]) throws(InputError) -> FrameVerdict {
        try r.rejectUnknown(allowed: ["kind", "t", "refSeq", "frame", "region", "relayoutMs", "score", "fromT"] + extra)
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
        let kind = try r.enumeration("kind", Kind.self)
        let t = UInt64(try r.integer("t", min: 0, max: TraceHeader.maxInteger))
        let score = try r.optionalNumber("score")
        let fromT = try r.optionalInteger("fromT", min: 0, max: TraceHeader.maxInteger).map { UInt64($0) }
        if kind == .layoutShift {
            guard let score else { throw InputError(.missingField, "a layoutShift record needs \"score\", the window's layout-shift score", field: r.fieldPath("score")) }
            guard score >= 0, score <= maxScore else {
                throw InputError.outOfRange(r.fieldPath("score"), "must be a layout-shift score, 0 to \(Int(maxScore))", got: "\(score)")
            }
            if let fromT, fromT > t {
                throw InputError(.badValue, "field \"fromT\": the window begins (\(fromT)) after it ends (\(t))", field: r.fieldPath("fromT"))
            }
        } else if score != nil || fromT != nil {
            throw InputError(.unknownField, "\"score\" and \"fromT\" belong to a layoutShift record, not a \(kind.rawValue) one", field: r.fieldPath(score != nil ? "score" : "fromT"))
        }
        return FrameVerdict(kind: kind, t: t, refSeq: try r.integer("refSeq", min: 0, max: TraceHeader.maxInteger),
                            frame: try r.integer("frame", min: 0, max: TraceHeader.maxInteger), region: region, relayoutMs: relayout,
                            score: score, fromT: fromT)
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
        if let score { w.key("score"); w.number(score) }
        if let fromT { w.key("fromT"); w.int(Int(fromT)) }
    }
}
