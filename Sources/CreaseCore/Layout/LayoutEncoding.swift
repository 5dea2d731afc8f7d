/// Canonical JSON for layouts: fixed key order, geometry rounded to 1/100 pt and printed
/// without trailing zeros (-0 as 0, as `JSONWriter.appendCenti`), optional members written
/// as null where the layout shows them nullable and omitted where they are optional (`?`).
extension Layout {
    /// The canonical body: every member but `seq` and `digest`, from `"device"` to the
    /// end of `"diagnostics"` (no braces). The digest is taken over these bytes.
    public func encodeBody() -> [UInt8] {
        // Written straight, without an encoder's storage: nothing is kept for a next layout.
        var w = RawWriter(capacity: 4096)
        defer { w.free() }
        for member in LayoutEncoder.Member.ordered {
            if member != .head { w.byte(UInt8(ascii: ",")) }
            write(member, &w)
        }
        return w.array()
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
        TraceEncoding.appendASCII(#"{"seq":"#, to: &out)
        JSONWriter.appendInt(seq, to: &out)
        TraceEncoding.appendASCII(#","digest":""#, to: &out)
        Digest.appendHex(digest, to: &out)
        TraceEncoding.appendASCII(#"","#, to: &out)
        out.append(contentsOf: body)
        out.append(UInt8(ascii: "}"))
    }
}

extension Layout {
    /// One top-level member as `"key":value` (its leading comma is the caller's).
    func write(_ member: LayoutEncoder.Member, _ w: inout RawWriter) {
        switch member {
        case .head:
            w.literal(#""device":"#); device.write(&w)
            w.literal(#","barAxis":"#); w.name(barAxis.jsonName)
            w.literal(#","verticalBarEdge":"#); w.name(verticalBarEdge?.jsonName)
            w.literal(#","verticalBarSide":"#); w.name(verticalBarSide?.jsonName)
            w.literal(#","safeArea":"#); safeArea.write(&w)
            w.literal(#","layoutMargins":"#); layoutMargins.write(&w)
        case .regions:
            w.literal(#""regions":["#)
            for (i, r) in regions.enumerated() {
                w.literal(i == 0 ? #"{"kind":"# : #",{"kind":"#); w.name(r.kind.jsonName)
                w.literal(#","frame":"#); r.frame.write(&w); w.byte(UInt8(ascii: "}"))
            }
            w.byte(UInt8(ascii: "]"))
        case .bars:
            w.literal(#""bars":["#)
            for (i, b) in bars.enumerated() { if i > 0 { w.byte(UInt8(ascii: ",")) }; b.write(&w) }
            w.byte(UInt8(ascii: "]"))
        case .columns:
            w.literal(#""columns":["#)
            for (i, c) in columns.enumerated() {
                w.literal(i == 0 ? #"{"id":"# : #",{"id":"#); w.quoted(c.id)
                w.literal(#","frame":"#); c.frame.write(&w)
                w.literal(#","sizeClass":"#); c.sizeClass.write(&w)
                w.literal(#","verticalBarEdge":"#); w.name(c.verticalBarEdge?.jsonName)
                w.byte(UInt8(ascii: "}"))
            }
            w.byte(UInt8(ascii: "]"))
        case .sheet:
            w.literal(#""sheet":"#)
            if let s = sheet {
                w.literal(#"{"id":"#); w.quoted(s.id)
                w.literal(#","placement":"#); w.name(s.placement.jsonName)
                w.literal(#","frame":"#); s.frame.write(&w)
                w.literal(#","axis":"#); w.name(s.axis.jsonName)
                w.byte(UInt8(ascii: "}"))
            } else { w.literal("null") }
        case .inspector:
            w.literal(#""inspector":"#)
            if let i = inspector {
                w.literal(#"{"presentation":"#); w.name(i.presentation.jsonName)
                w.literal(#","frame":"#); i.frame.write(&w)
                w.byte(UInt8(ascii: "}"))
            } else { w.literal("null") }
        case .custom:
            w.literal(#""custom":["#)
            for (i, c) in custom.enumerated() {
                w.literal(i == 0 ? #"{"id":"# : #",{"id":"#); w.quoted(c.id)
                w.literal(#","frame":"#); c.frame.write(&w)
                w.literal(#","verticalBarEdge":"#); w.name(c.verticalBarEdge?.jsonName)
                w.literal(#","collides":["#)
                for (k, kind) in c.collides.enumerated() { if k > 0 { w.byte(UInt8(ascii: ",")) }; w.name(kind.jsonName) }
                w.literal("]}")
            }
            w.byte(UInt8(ascii: "]"))
        case .floating:
            w.literal(#""floating":["#)
            for (i, f) in floating.enumerated() {
                w.literal(i == 0 ? #"{"id":"# : #",{"id":"#); w.quoted(f.id)
                w.literal(#","frame":"#); f.frame.write(&w); w.byte(UInt8(ascii: "}"))
            }
            w.byte(UInt8(ascii: "]"))
        case .diagnostics:
            w.literal(#""diagnostics":"#); Layout.write(diagnostics, &w)
        }
    }

    /// The `diagnostics` array, byte for byte as the layout line carries it (the
    /// diagnostics push sends these bytes).
    public func diagnosticsJSON() -> [UInt8] {
        var w = RawWriter(capacity: 256)
        defer { w.free() }
        Layout.write(diagnostics, &w)
        return w.array()
    }

    /// The one diagnostics writer.
    private static func write(_ diagnostics: [Diagnostic], _ w: inout RawWriter) {
        w.byte(UInt8(ascii: "["))
        for (i, d) in diagnostics.enumerated() {
            w.literal(i == 0 ? #"{"code":"# : #",{"code":"#); w.quoted(d.code.rawValue)
            w.literal(#","subject":"#); w.quoted(d.subject)
            w.literal(#","message":"#); w.quoted(d.message)
            w.byte(UInt8(ascii: "}"))
        }
        w.byte(UInt8(ascii: "]"))
    }
}

extension Rect {
    func write(_ w: inout RawWriter) { w.rect(self) }
}

extension Insets {
    func write(_ w: inout RawWriter) { w.insets(self) }
}

extension SizeClassPair {
    func write(_ w: inout RawWriter) {
        w.literal(#"{"horizontal":"#); w.name(horizontal.jsonName)
        w.literal(#","vertical":"#); w.name(vertical.jsonName)
        w.byte(UInt8(ascii: "}"))
    }
}

extension DeviceInfo {
    func write(_ w: inout RawWriter) {
        writeNames(&w)
        w.literal(#","width":"#); w.centi(width)
        w.literal(#","height":"#); w.centi(height)
        w.literal(#","sizeClass":"#); sizeClass.write(&w)
        w.literal(#","window":"#); window.write(&w)
        w.byte(UInt8(ascii: "}"))
    }

    /// The device's opening, its four names: before any number of the body.
    private func writeNames(_ w: inout RawWriter) {
        w.literal(#"{"pose":"#); w.name(pose.jsonName)
        w.literal(#","display":"#); w.name(display.jsonName)
        w.literal(#","orientation":"#); w.name(orientation.jsonName)
        w.literal(#","layoutDirection":"#); w.name(layoutDirection.jsonName)
    }

    func sameNames(_ old: DeviceInfo) -> Bool {
        pose == old.pose && display == old.display && orientation == old.orientation && layoutDirection == old.layoutDirection
    }

    /// Whether each name is as long as `old`'s (ltr and rtl, outer and inner): the head is
    /// then patched, and its names written over the old ones (`overwriteNames`).
    func namesFit(_ old: DeviceInfo) -> Bool {
        pose.jsonName.utf8CodeUnitCount == old.pose.jsonName.utf8CodeUnitCount
            && display.jsonName.utf8CodeUnitCount == old.display.jsonName.utf8CodeUnitCount
            && orientation.jsonName.utf8CodeUnitCount == old.orientation.jsonName.utf8CodeUnitCount
            && layoutDirection.jsonName.utf8CodeUnitCount == old.layoutDirection.jsonName.utf8CodeUnitCount
    }

    /// Writes the names over those that open `body`, which fit them.
    @inline(never) func overwriteNames(in body: RawWriter) {
        let opening: StaticString = #""device":"#
        var w = RawWriter(over: body.base + opening.utf8CodeUnitCount, capacity: body.count - opening.utf8CodeUnitCount)
        writeNames(&w)
        assert(body.base[opening.utf8CodeUnitCount + w.count] == UInt8(ascii: ","), "names that do not fit")
    }
}

extension Bar {
    func write(_ w: inout RawWriter) {
        w.literal(#"{"id":"#); w.quoted(id)
        w.literal(#","container":"#); w.quoted(container)
        w.literal(#","role":"#); w.name(role.jsonName)
        w.literal(#","axis":"#); w.name(axis.jsonName)
        w.literal(#","edge":"#); w.name(edge.jsonName)
        w.literal(#","frame":"#); frame.write(&w)
        w.literal(background ? #","background":"opaque","items":["# : #","background":"none","items":["#)
        for i in items.indices {
            w.literal(i == 0 ? #"{"id":"# : #",{"id":"#); w.quoted(items[i].id)
            w.literal(#","frame":"#); items[i].frame.write(&w)
            w.literal(#","shows":"#); w.name(items[i].shows.jsonName)
            if let b = items[i].badge { w.literal(#","badge":"#); w.int(b) }
            if let tabs = items[i].tabs {
                w.literal(#","tabs":["#)
                for (t, tab) in tabs.enumerated() { if t > 0 { w.byte(UInt8(ascii: ",")) }; w.quoted(tab) }
                w.byte(UInt8(ascii: "]"))
            }
            w.byte(UInt8(ascii: "}"))
        }
        w.literal(#"],"overflow":["#)
        for (i, o) in overflow.enumerated() { if i > 0 { w.byte(UInt8(ascii: ",")) }; w.quoted(o) }
        w.byte(UInt8(ascii: "]"))
        if let t = tabBar { w.literal(#","tabBar":"#); w.name(t.jsonName) }
        w.byte(UInt8(ascii: "}"))
    }
}
