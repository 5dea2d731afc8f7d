/// Canonical JSON for layouts: fixed key order, geometry rounded to 1/100 pt and printed
/// without trailing zeros (-0 as 0, as `JSONWriter.appendCenti`), optional members written
/// as null where the layout shows them nullable and omitted where they are optional (`?`).
extension Layout {
    /// The canonical body: every member but `seq` and `digest`, from `"device"` to the
    /// end of `"diagnostics"` (no braces). The digest is taken over these bytes.
    public func encodeBody() -> [UInt8] {
        var encoder = LayoutEncoder()
        return encoder.encode(self)
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

/// Encodes layouts, re-encoding only what changed since the layout it encoded last: each
/// top-level member and each bar whose value equals the last one's is copied from the last
/// body; the rest is written anew. One event usually moves one bar or one region, so the
/// rest of the body is a copy. A fresh encoder writes everything, which is what
/// `Layout.encodeBody` (and so `Engine.fromScratch`) does: the property tests compare the two.
struct LayoutEncoder: Sendable {
    /// The layout encoded last (`hasLast`), kept non-optional so that comparing with it
    /// reads it in place (binding an optional copied the whole layout for each comparison).
    private var last = LayoutEncoder.nothing
    private var hasLast = false
    private var lastBody: [UInt8] = []
    /// Where each member (`Member`, in order, without the comma before it) and each bar of
    /// `last` is in `lastBody`.
    private var memberRanges: [Range<Int>] = []
    private var barRanges: [Range<Int>] = []
    /// The next encoding's ranges, written while the last ones are read, then swapped in:
    /// no arrays allocated per encoding.
    private var nextMemberRanges: [Range<Int>] = []
    private var nextBarRanges: [Range<Int>] = []
    /// The writer's storage, kept from one encoding to the next (a copy of the encoder
    /// that encodes gets storage of its own).
    private var scratch = WriterStorage(capacity: 4096)

    /// The top-level members, in their canonical order.
    enum Member: Int, CaseIterable {
        case device, barAxis, verticalBarEdge, verticalBarSide, safeArea, layoutMargins, regions, bars,
             columns, sheet, inspector, custom, floating, diagnostics

        /// In order, once (`allCases` makes a new array at every use).
        static let ordered = Member.allCases
    }

    private static let nothing = Layout(
        device: DeviceInfo(pose: .closed, display: .outer, orientation: .portrait, layoutDirection: .ltr, width: 0, height: 0,
                           sizeClass: SizeClassPair(horizontal: .compact, vertical: .compact), window: .zero),
        barAxis: .horizontal, verticalBarEdge: nil, verticalBarSide: nil, safeArea: Insets(), layoutMargins: Insets(),
        regions: [], bars: [], columns: [], sheet: nil, inspector: nil, custom: [], floating: [], diagnostics: [])

    mutating func encode(_ layout: Layout) -> [UInt8] {
        if !isKnownUniquelyReferenced(&scratch) { scratch = WriterStorage(capacity: scratch.capacity) }
        var w = RawWriter(storage: scratch.base, capacity: scratch.capacity)
        defer { scratch.adopt(w) }
        var members = nextMemberRanges, bars = nextBarRanges
        nextMemberRanges = []
        nextBarRanges = []
        members.removeAll(keepingCapacity: true)
        bars.removeAll(keepingCapacity: true)
        for member in Member.ordered {
            if member != .device { w.byte(UInt8(ascii: ",")) }
            let start = w.count
            if member == .bars {
                w.literal(#""bars":["#)
                // Through buffer pointers: reading bars out of the arrays copied each one (and
                // retained its strings and arrays) to compare or write it.
                let oldBars = hasLast ? last.bars : []
                layout.bars.withUnsafeBufferPointer { newBars in
                    oldBars.withUnsafeBufferPointer { oldBars in
                        for i in newBars.indices {
                            if i > 0 { w.byte(UInt8(ascii: ",")) }
                            let barStart = w.count
                            let bar = newBars.baseAddress! + i
                            if let j = LayoutEncoder.sameBar(as: bar, at: i, in: oldBars) {
                                w.copy(lastBody, barRanges[j])
                            } else {
                                bar.pointee.write(&w)
                            }
                            bars.append(barStart..<w.count)
                        }
                    }
                }
                w.byte(UInt8(ascii: "]"))
            } else if hasLast, member.same(layout, last) {
                w.copy(lastBody, memberRanges[member.rawValue])
            } else {
                layout.write(member, &w)
            }
            members.append(start..<w.count)
        }
        let body = w.array()
        last = layout
        hasLast = true
        lastBody = body
        nextMemberRanges = memberRanges
        nextBarRanges = barRanges
        memberRanges = members
        barRanges = bars
        return body
    }

    /// Which of the last layout's bars equals this one: the one at the same position, or
    /// the one with the same id.
    private static func sameBar(as bar: UnsafePointer<Bar>, at i: Int, in old: UnsafeBufferPointer<Bar>) -> Int? {
        guard let first = old.baseAddress else { return nil }
        if i < old.count, (first + i).pointee.sameContent(as: bar) { return i }
        for j in old.indices where (first + j).pointee.id == bar.pointee.id {
            return (first + j).pointee.sameContent(as: bar) ? j : nil
        }
        return nil
    }
}

extension Bar {
    /// `==`, field by field, reading the other bar in place: the synthesized `==`, inlined
    /// in the encoder, copied both bars (retaining their strings and arrays) to compare them.
    func sameContent(as o: UnsafePointer<Bar>) -> Bool {
        id == o.pointee.id && frame == o.pointee.frame && items == o.pointee.items && overflow == o.pointee.overflow
            && background == o.pointee.background && container == o.pointee.container && role == o.pointee.role
            && axis == o.pointee.axis && edge == o.pointee.edge && tabBar == o.pointee.tabBar
    }
}

extension LayoutEncoder.Member {
    func same(_ a: borrowing Layout, _ b: borrowing Layout) -> Bool {
        switch self {
        case .device: a.device == b.device
        case .barAxis: a.barAxis == b.barAxis
        case .verticalBarEdge: a.verticalBarEdge == b.verticalBarEdge
        case .verticalBarSide: a.verticalBarSide == b.verticalBarSide
        case .safeArea: a.safeArea == b.safeArea
        case .layoutMargins: a.layoutMargins == b.layoutMargins
        case .regions: a.regions == b.regions
        case .bars: a.bars == b.bars
        case .columns: a.columns == b.columns
        case .sheet: a.sheet == b.sheet
        case .inspector: a.inspector == b.inspector
        case .custom: a.custom == b.custom
        case .floating: a.floating == b.floating
        case .diagnostics: a.diagnostics == b.diagnostics
        }
    }
}

extension Layout {
    /// One top-level member as `"key":value` (its leading comma is the caller's).
    fileprivate func write(_ member: LayoutEncoder.Member, _ w: inout RawWriter) {
        switch member {
        case .device: w.literal(#""device":"#); device.write(&w)
        case .barAxis: w.literal(#""barAxis":"#); w.name(barAxis.jsonName)
        case .verticalBarEdge: w.literal(#""verticalBarEdge":"#); w.name(verticalBarEdge?.jsonName)
        case .verticalBarSide: w.literal(#""verticalBarSide":"#); w.name(verticalBarSide?.jsonName)
        case .safeArea: w.literal(#""safeArea":"#); safeArea.write(&w)
        case .layoutMargins: w.literal(#""layoutMargins":"#); layoutMargins.write(&w)
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
    fileprivate func write(_ w: inout RawWriter) { w.rect(self) }
}

extension Insets {
    fileprivate func write(_ w: inout RawWriter) {
        w.reserve(4 * RawWriter.centiRoom + 42)
        w.advance { p in
            var p = RawWriter.putLiteral(#"{"top":"#, at: p); p = RawWriter.putCenti(top, at: p)
            p = RawWriter.putLiteral(#","leading":"#, at: p); p = RawWriter.putCenti(leading, at: p)
            p = RawWriter.putLiteral(#","bottom":"#, at: p); p = RawWriter.putCenti(bottom, at: p)
            p = RawWriter.putLiteral(#","trailing":"#, at: p); p = RawWriter.putCenti(trailing, at: p)
            p.pointee = UInt8(ascii: "}")
            return p + 1
        }
    }
}

extension SizeClassPair {
    fileprivate func write(_ w: inout RawWriter) {
        w.literal(#"{"horizontal":"#); w.name(horizontal.jsonName)
        w.literal(#","vertical":"#); w.name(vertical.jsonName)
        w.byte(UInt8(ascii: "}"))
    }
}

extension DeviceInfo {
    fileprivate func write(_ w: inout RawWriter) {
        w.literal(#"{"pose":"#); w.name(pose.jsonName)
        w.literal(#","display":"#); w.name(display.jsonName)
        w.literal(#","orientation":"#); w.name(orientation.jsonName)
        w.literal(#","layoutDirection":"#); w.name(layoutDirection.jsonName)
        w.literal(#","width":"#); w.centi(width)
        w.literal(#","height":"#); w.centi(height)
        w.literal(#","sizeClass":"#); sizeClass.write(&w)
        w.literal(#","window":"#); window.write(&w)
        w.byte(UInt8(ascii: "}"))
    }
}

extension Bar {
    fileprivate func write(_ w: inout RawWriter) {
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

/// Storage a `RawWriter` writes into, kept across encodings by `LayoutEncoder`.
final class WriterStorage: @unchecked Sendable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    /// Takes the writer's storage back (it may have grown into a new allocation).
    func adopt(_ w: RawWriter) {
        base = w.base
        capacity = w.capacity
    }

    deinit { base.deallocate() }
}

/// Writes bytes into raw storage, growing it by doubling: no per-token uniqueness or
/// capacity checks of an Array. Its storage is allocated by `init(capacity:)` and freed
/// by `free()`, or lent by a `WriterStorage`, which takes it back with `adopt`.
struct RawWriter {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private(set) var capacity: Int

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    init(storage: UnsafeMutablePointer<UInt8>, capacity: Int) {
        base = storage
        self.capacity = capacity
    }

    func free() { base.deallocate() }

    func array() -> [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    @inline(__always) mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    @inline(never) private mutating func grow(to needed: Int) {
        let bigger = max(needed, capacity * 2)
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
        fresh.update(from: base, count: count)
        base.deallocate()
        base = fresh
        capacity = bigger
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    @inline(__always) mutating func raw(_ p: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n)
        BoundedLine.copy(p, n, to: base + count)
        count += n
    }

    @inline(__always) mutating func literal(_ s: StaticString) { raw(s.utf8Start, s.utf8CodeUnitCount) }

    /// A JSON string whose text needs no escape (an enum's name), or null.
    @inline(__always) mutating func name(_ s: StaticString?) {
        guard let s else { literal("null"); return }
        reserve(s.utf8CodeUnitCount + 2)
        base[count] = UInt8(ascii: "\"")
        count += 1
        raw(s.utf8Start, s.utf8CodeUnitCount)
        base[count] = UInt8(ascii: "\"")
        count += 1
    }

    mutating func copy(_ bytes: [UInt8], _ range: Range<Int>) {
        bytes.withUnsafeBufferPointer { raw($0.baseAddress! + range.lowerBound, range.count) }
    }

    /// A quoted JSON string, escaped as `JSONWriter` escapes; most (ids) need no escape.
    /// Copied and checked in one pass; only a string that needs an escape is written again.
    mutating func quoted(_ s: String) {
        let done: Bool? = s.utf8.withContiguousStorageIfAvailable { utf8 in
            reserve(utf8.count + 2)
            let start = count
            let p = base + count
            p.pointee = UInt8(ascii: "\"")
            var plain = true
            for b in utf8 { plain = plain && b >= 0x20 && b != 0x22 && b != 0x5C }
            guard plain else { return false }
            if let from = utf8.baseAddress { BoundedLine.copy(from, utf8.count, to: p + 1) }
            p[utf8.count + 1] = UInt8(ascii: "\"")
            count = start + utf8.count + 2
            return true
        }
        if done == true { return }
        var escaped: [UInt8] = []
        JSONWriter.appendQuoted(s, to: &escaped)
        escaped.withUnsafeBufferPointer { raw($0.baseAddress!, $0.count) }
    }

    mutating func int(_ v: Int) {
        reserve(20)
        advance { p in
            var p = p
            BoundedLine.putDecimal(v, &p)
            return p
        }
    }

    /// A layout number, byte for byte as `JSONWriter.appendCenti`, with one capacity check.
    mutating func centi(_ v: Double) {
        reserve(RawWriter.centiRoom)
        count = RawWriter.putCenti(v, at: base + count) - base
    }

    /// Room `putCenti` may need: "-", 11 digits, ".", 2 digits on the fast path; the slow
    /// path's longest text is a Double's shortest form, 24 bytes ("-2.2250738585072014e-308").
    static let centiRoom = 32

    /// A frame, with one capacity check for all of it.
    mutating func rect(_ r: Rect) {
        reserve(4 * RawWriter.centiRoom + 21)
        advance { p in
            var p = RawWriter.putLiteral(#"{"x":"#, at: p); p = RawWriter.putCenti(r.x, at: p)
            p = RawWriter.putLiteral(#","y":"#, at: p); p = RawWriter.putCenti(r.y, at: p)
            p = RawWriter.putLiteral(#","w":"#, at: p); p = RawWriter.putCenti(r.w, at: p)
            p = RawWriter.putLiteral(#","h":"#, at: p); p = RawWriter.putCenti(r.h, at: p)
            p.pointee = UInt8(ascii: "}")
            return p + 1
        }
    }

    /// Writes at the end with `body` (which returns the byte after what it wrote), within
    /// room the caller reserved.
    @inline(__always) mutating func advance(_ body: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>) {
        let end = body(base + count)
        count = end - base
        assert(count <= capacity, "wrote past the room reserved")
    }

    @inline(__always) static func putLiteral(_ s: StaticString, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        BoundedLine.copy(s.utf8Start, s.utf8CodeUnitCount, to: p)
        return p + s.utf8CodeUnitCount
    }

    /// Writes a layout number at `p` (room for `centiRoom` bytes is the caller's) and
    /// returns the byte after it.
    @inline(__always) static func putCenti(_ v: Double, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        guard v.isFinite, abs(v) < 1e13 else { return putCentiSlowly(v, at: start) }
        var p = start
        let hundredths = JSONWriter.hundredths(v)
        if hundredths < 0 { p.pointee = UInt8(ascii: "-"); p += 1 }
        let magnitude = UInt(hundredths.magnitude)
        BoundedLine.putDecimal(UInt64(magnitude / 100), &p)
        let fraction = magnitude % 100
        if fraction != 0 {
            p[0] = UInt8(ascii: ".")
            p[1] = UInt8(truncatingIfNeeded: 48 &+ fraction / 10)
            p += 2
            if fraction % 10 != 0 { p.pointee = UInt8(truncatingIfNeeded: 48 &+ fraction % 10); p += 1 }
        }
        return p
    }

    /// Numbers a layout never holds (infinite, or 1e13 and beyond) as `JSONWriter` prints them.
    @inline(never) static func putCentiSlowly(_ v: Double, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var text: [UInt8] = []
        JSONWriter.appendCenti(v, to: &text)
        precondition(text.count <= centiRoom, "a number longer than the room reserved for it")
        text.withUnsafeBufferPointer { BoundedLine.copy($0.baseAddress!, $0.count, to: p) }
        return p + text.count
    }
}
