/// Canonical JSON for layouts: fixed key order, geometry rounded to 1/100 pt and
/// printed by `JSONWriter.centi` (no trailing zeros, -0 as 0), optional members written as null where the
/// contract shows them nullable and omitted where it marks them optional (`?`).
extension Layout {
    /// The canonical body: every member but `seq` and `digest`, as the members that
    /// follow them (a leading comma, no braces). The digest is FNV-1a of these bytes.
    public func encodeBody() -> [UInt8] {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()  // opened only to set comma state; its brace is dropped below
        w.key("device"); device.write(&w)
        w.key("barAxis"); w.string(barAxis.rawValue)
        w.key("verticalBarEdge"); if let e = verticalBarEdge { w.string(e.rawValue) } else { w.null() }
        w.key("verticalBarSide"); if let s = verticalBarSide { w.string(s.rawValue) } else { w.null() }
        w.key("safeArea"); safeArea.write(&w)
        w.key("layoutMargins"); layoutMargins.write(&w)
        w.key("regions"); w.beginArray()
        for r in regions { w.beginObject(); w.key("kind"); w.string(r.kind.rawValue); w.key("frame"); r.frame.write(&w); w.endObject() }
        w.endArray()
        w.key("bars"); w.beginArray()
        for b in bars { b.write(&w) }
        w.endArray()
        w.key("columns"); w.beginArray()
        for c in columns {
            w.beginObject()
            w.key("id"); w.string(c.id)
            w.key("frame"); c.frame.write(&w)
            w.key("sizeClass"); c.sizeClass.write(&w)
            w.key("verticalBarEdge"); if let e = c.verticalBarEdge { w.string(e.rawValue) } else { w.null() }
            w.endObject()
        }
        w.endArray()
        w.key("sheet")
        if let s = sheet {
            w.beginObject()
            w.key("id"); w.string(s.id)
            w.key("placement"); w.string(s.placement.rawValue)
            w.key("frame"); s.frame.write(&w)
            w.key("axis"); w.string(s.axis.rawValue)
            w.endObject()
        } else { w.null() }
        w.key("inspector")
        if let i = inspector {
            w.beginObject()
            w.key("presentation"); w.string(i.presentation.rawValue)
            w.key("frame"); i.frame.write(&w)
            w.endObject()
        } else { w.null() }
        w.key("custom"); w.beginArray()
        for c in custom {
            w.beginObject()
            w.key("id"); w.string(c.id)
            w.key("frame"); c.frame.write(&w)
            w.key("verticalBarEdge"); if let e = c.verticalBarEdge { w.string(e.rawValue) } else { w.null() }
            w.key("collides"); w.beginArray(); for k in c.collides { w.string(k.rawValue) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key("floating"); w.beginArray()
        for f in floating { w.beginObject(); w.key("id"); w.string(f.id); w.key("frame"); f.frame.write(&w); w.endObject() }
        w.endArray()
        w.key("diagnostics"); w.beginArray()
        for d in diagnostics {
            w.beginObject()
            w.key("code"); w.string(d.code)
            w.key("subject"); w.string(d.subject)
            w.key("message"); w.string(d.message)
            w.endObject()
        }
        w.endArray()
        w.bytes.removeFirst()  // the "{" opened above; the body starts with ","-free "device"
        return w.bytes
    }

    /// The full layout line: `{"seq":N,"digest":"…",` + body + `}`.
    public static func assemble(seq: Int, digest: UInt64, body: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 48)
        appendAssembled(seq: seq, digest: digest, body: body, to: &out)
        return out
    }

    /// Appends the layout line to `out` (for pushes: no intermediate copy).
    public static func appendAssembled(seq: Int, digest: UInt64, body: [UInt8], to out: inout [UInt8]) {
        out.append(contentsOf: Array(#"{"seq":"#.utf8))
        JSONWriter.appendInt(seq, to: &out)
        out.append(contentsOf: Array(#","digest":""#.utf8))
        out.append(contentsOf: Digest.hexBytes(digest))
        out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ",")])
        out.append(contentsOf: body)
        out.append(UInt8(ascii: "}"))
    }
}

extension Rect {
    func write(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("x"); w.centi(self.x)
        w.key("y"); w.centi(self.y)
        w.key("w"); w.centi(self.w)
        w.key("h"); w.centi(self.h)
        w.endObject()
    }
}

extension Insets {
    func write(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("top"); w.centi(top)
        w.key("leading"); w.centi(leading)
        w.key("bottom"); w.centi(bottom)
        w.key("trailing"); w.centi(trailing)
        w.endObject()
    }
}

extension SizeClassPair {
    func write(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("horizontal"); w.string(horizontal.rawValue)
        w.key("vertical"); w.string(vertical.rawValue)
        w.endObject()
    }
}

extension DeviceInfo {
    func write(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("pose"); w.string(pose.rawValue)
        w.key("display"); w.string(display.rawValue)
        w.key("orientation"); w.string(orientation.rawValue)
        w.key("layoutDirection"); w.string(layoutDirection.rawValue)
        w.key("width"); w.centi(width)
        w.key("height"); w.centi(height)
        w.key("sizeClass"); sizeClass.write(&w)
        w.key("window"); window.write(&w)
        w.endObject()
    }
}

extension Bar {
    func write(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("container"); w.string(container)
        w.key("role"); w.string(role.rawValue)
        w.key("axis"); w.string(axis.rawValue)
        w.key("edge"); w.string(edge.rawValue)
        w.key("frame"); frame.write(&w)
        w.key("background"); w.string(background ? "opaque" : "none")
        w.key("items"); w.beginArray()
        for item in items {
            w.beginObject()
            w.key("id"); w.string(item.id)
            w.key("frame"); item.frame.write(&w)
            w.key("shows"); w.string(item.shows.rawValue)
            if let b = item.badge { w.key("badge"); w.int(b) }
            if let tabs = item.tabs { w.key("tabs"); w.beginArray(); for t in tabs { w.string(t) }; w.endArray() }
            w.endObject()
        }
        w.endArray()
        w.key("overflow"); w.beginArray(); for o in overflow { w.string(o) }; w.endArray()
        if let t = tabBar { w.key("tabBar"); w.string(t.rawValue) }
        w.endObject()
    }
}

