import CreaseCore

/// A tour as JSON Lines (`crease plan --tour -o TOUR.jsonl`, docs/plan.md): a header, then
/// one line per step, as a rig streams it.
enum TourFile {
    struct Header {
        var app: String
        var profile: String
        var rig: String
        var observe: RigProfile.ObserveMode
        var from: String
        /// With `--split`: this part (1-based) and how many.
        var part: (index: Int, of: Int)?
    }

    static func encode(_ tour: Tour, part index: Int, header h: Header) -> [UInt8] {
        let part = tour.parts[index]
        var w = JSONWriter(capacity: 256 * 1024)
        w.beginObject()
        w.key("crease"); w.string("tour")
        w.key("version"); w.int(1)
        w.key("app"); w.string(h.app)
        w.key("profile"); w.string(h.profile)
        w.key("rig"); w.string(h.rig)
        w.key("observe"); w.string(h.observe.rawValue)
        w.key("from"); w.string(h.from)
        w.key("startDigest"); w.string(Digest.hex(tour.startDigest))
        if let p = h.part {
            w.key("part"); w.int(p.index)
            w.key("parts"); w.int(p.of)
            w.key("totalEstimatedSeconds"); w.number(TourPlanner.microseconds(tour.parts.reduce(0) { $0 + $1.seconds }))
        }
        w.key("classes"); w.int(tour.classes)
        w.key("unreachable"); w.beginArray()
        for u in tour.unreachable {
            w.beginObject()
            w.key("class"); w.string(Digest.hex(u.classDigest))
            w.key("digest"); w.string(Digest.hex(u.digest))
            w.key("expected"); u.expected.write(to: &w)
            w.key("needs"); w.string(u.needs)
            w.endObject()
        }
        w.endArray()
        w.key("unobserved"); w.int(tour.unobserved)
        w.key("states"); w.int(tour.states)
        w.key("steps"); w.int(part.steps.count)
        w.key("observations"); w.int(part.observations)
        w.key("estimatedSeconds"); w.number(TourPlanner.microseconds(part.seconds))
        w.key("lowerBoundSeconds"); w.number(TourPlanner.microseconds(tour.lowerBound))
        w.key("truncated"); w.bool(tour.truncated || tour.statesTruncated)
        w.endObject()
        var out = w.bytes
        out.append(0x0A)
        for (i, s) in part.steps.enumerated() {
            var w = JSONWriter(capacity: 1024)
            w.beginObject()
            w.key("step"); w.int(i + 1)
            w.key("event"); if let e = s.event { e.write(to: &w, ts: s.ts) } else { w.null() }
            w.key("digest"); w.string(Digest.hex(s.digest))
            w.key("class"); w.string(Digest.hex(s.classDigest))
            w.key("cost"); w.number(TourPlanner.microseconds(s.cost))
            w.key("why"); w.string(s.why.rawValue)
            if let expected = s.expected { w.key("expected"); expected.write(to: &w) }
            w.endObject()
            out += w.bytes
            out.append(0x0A)
        }
        return out
    }
}
