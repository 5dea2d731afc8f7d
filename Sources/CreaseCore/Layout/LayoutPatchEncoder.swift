/// Encodes layouts, re-encoding only what changed since the layout it encoded last. Each
/// top-level member and each bar of the last body is a slot: its bytes, and where each of
/// its layout numbers (the geometry) begins and ends. A member or bar whose shape (all but
/// its numbers) equals the last one's is patched: the last bytes are copied and only the
/// numbers that changed are written in between, so a bar that moved (the bottom bars over
/// the keyboard: every item's y changes) costs a few copies and numbers, with no quoting.
/// What changed shape is written anew, as `Layout.encodeBody` (and so `Engine.fromScratch`)
/// writes everything: the property tests compare the two.
struct LayoutEncoder: Sendable {
    /// The last layout, its bytes, its numbers' places and its slots; shared by copies of
    /// the encoder until one of them encodes.
    private var storage: EncoderStorage

    /// `byteCapacity` and `markCapacity` size the first buffers (they grow as needed).
    init(byteCapacity: Int = 4096, markCapacity: Int = 256) {
        storage = EncoderStorage(byteCapacity: byteCapacity, markCapacity: markCapacity)
    }

    /// A member's or a bar's bytes in a body, and the index of its first number's mark.
    struct Slot {
        var start: Int
        var end: Int
        var firstMark: Int
    }

    /// The top-level members, in their canonical order; `head` is the first six (device,
    /// barAxis, verticalBarEdge, verticalBarSide, safeArea, layoutMargins), one slot: they
    /// change together or not at all, and a slot each cost more than their comparison.
    enum Member: Int, CaseIterable {
        case head, regions, bars, columns, sheet, inspector, custom, floating, diagnostics

        /// In order, once (`allCases` makes a new array at every use).
        static let ordered = Member.allCases
    }

    mutating func encode(_ layout: Layout) -> [UInt8] {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        let kept = storage
        var w = kept.writer()
        // Where each member (`Member`, in order, without the separator before it) and each
        // bar is in the last body, and in the new one.
        let memberSlots = kept.lastMemberSlots, barSlots = kept.lastBarSlots
        var members = kept.memberSlots, bars = kept.barSlots
        members.removeAll()
        bars.removeAll()
        let last = UnsafePointer(kept.last)
        let hasLast = kept.hasLast
        var patch = Patch(old: kept.lastBytes, count: kept.lastByteCount, marks: kept.lastMarks, markCount: kept.lastMarkCount)
        // Slots are numbered in the order of the last body: members before the bars, the
        // bars, members after them. A slot patched right after its predecessor there
        // continues the same copy (the bytes between them are the same separator).
        let oldBarCount = hasLast ? last.pointee.bars.count : 0
        var diagnosticsLeft = false
        for member in Member.ordered {
            if member == .bars {
                // Through buffer pointers: reading bars out of the arrays copied each one (and
                // retained its strings and arrays) to compare or write it.
                layout.bars.withUnsafeBufferPointer { newBars in
                    (hasLast ? last.pointee.bars : []).withUnsafeBufferPointer { oldBars in
                        var patched: UInt64 = 0   // the last bars (the first 64) patched into this body
                        for i in newBars.indices {
                            let separator: StaticString = i == 0 ? #","bars":["# : ","
                            let bar = newBars.baseAddress! + i
                            if let j = LayoutEncoder.match(bar, at: i, in: oldBars), Bar.sameShape(oldBars.baseAddress! + j, bar) {
                                var slot = patch.begin(barSlots[j], order: Member.bars.rawValue + j, after: separator, &w)
                                Bar.patch(oldBars.baseAddress! + j, bar, &patch, &w)
                                slot.end = patch.landing(barSlots[j].end, w)
                                bars.append(slot)
                                if j < 64 { patched |= 1 << UInt64(j) }
                            } else if let slot = kept.recentBars.patch(bar, after: separator, &patch, &w) {
                                bars.append(slot)
                            } else {
                                patch.flush(&w)
                                w.literal(separator)
                                let start = w.count, firstMark = w.markCount
                                bar.pointee.write(&w)
                                bars.append(Slot(start: start, end: w.count, firstMark: firstMark))
                            }
                        }
                        // A bar that leaves (a screen pushed over, a sheet dismissed) often comes back.
                        for j in oldBars.indices where j < 64 && patched & (1 << UInt64(j)) == 0 {
                            kept.recentBars.keep(oldBars[j], slot: barSlots[j], of: kept.lastBytes, marks: kept.lastMarks)
                        }
                    }
                }
                members.append(Slot(start: 0, end: 0, firstMark: 0))   // bars have slots of their own
                continue
            }
            let separator: StaticString = member == .head ? "" : member != .columns ? "," : layout.bars.isEmpty ? #","bars":[],"# : "],"
            let order = member.rawValue < Member.bars.rawValue ? member.rawValue : member.rawValue - 1 + oldBarCount
            if hasLast, let slot = member.patch(last, layout, from: memberSlots[member.rawValue], order: order, after: separator, &patch, &w) {
                members.append(slot)
            } else if member == .diagnostics, hasLast, let slot = kept.recentDiagnostics.copy(layout.diagnostics, after: separator, &patch, &w) {
                diagnosticsLeft = true
                members.append(slot)
            } else {
                if member == .diagnostics { diagnosticsLeft = hasLast }
                patch.flush(&w)
                w.literal(separator)
                let start = w.count, firstMark = w.markCount
                layout.write(member, &w)
                members.append(Slot(start: start, end: w.count, firstMark: firstMark))
            }
        }
        patch.flush(&w)
        if hasLast, !layout.device.sameNames(last.pointee.device) {
            // A head patched though its names changed (they fit: `sameShape`) holds the old
            // ones: they open the body, before any number, where the new ones go. (A head
            // written anew already holds these.)
            layout.device.overwriteNames(in: w)
        }
        if diagnosticsLeft {
            // Diagnostics follow the screens shown: those of a screen popped come back.
            kept.recentDiagnostics.keep(last.pointee.diagnostics, slot: memberSlots[Member.diagnostics.rawValue], of: kept.lastBytes)
        }
        let body = w.array()
        kept.keep(w, members, bars, of: layout)
        return body
    }

    /// Which of the last layout's bars this one continues: the one at the same position
    /// if it has the same id, else the one with the same id.
    private static func match(_ bar: UnsafePointer<Bar>, at i: Int, in old: UnsafeBufferPointer<Bar>) -> Int? {
        guard let first = old.baseAddress else { return nil }
        if i < old.count, (first + i).pointee.id == bar.pointee.id { return i }
        for j in old.indices where (first + j).pointee.id == bar.pointee.id { return j }
        return nil
    }
}

/// Rewrites slots of the last body into the writer: copies their bytes and carries their
/// numbers' marks (shifted to where they land) up to each number that changed, writes that
/// number, and goes on after its old text. Slots patched one after the other as they lay
/// in the last body make one copy. Numbers are visited in the order they were written;
/// equal numbers print equal text (0 and -0 both print 0; NaN is never equal, so it is
/// written again).
struct Patch {
    private let old: UnsafePointer<UInt8>
    private let oldMarks: UnsafePointer<Int>
    private let oldCount: Int, oldMarkCount: Int
    /// Whether old bytes from `cursor` to `end` are still to be copied.
    private var open = false
    /// The first old byte not yet copied, and where the slots patched so far end.
    private var cursor = 0, end = 0
    /// The next old number's mark, and the first one not yet carried to the new marks.
    private var mark = 0, pending = 0
    /// The order (in the last body) of the slot that would continue the open copy.
    private var next = -1

    init(old: UnsafePointer<UInt8>, count: Int, marks: UnsafePointer<Int>, markCount: Int) {
        self.old = old
        oldCount = count
        oldMarks = marks
        oldMarkCount = markCount
    }

    /// Flushes the open copy and starts one at `slot`, after `separator`.
    @inline(never) private mutating func startCopy(at slot: LayoutEncoder.Slot, after separator: StaticString, _ w: inout RawWriter) {
        flush(&w)
        w.literal(separator)
        w.reserve(oldCount &- slot.start &+ RawWriter.centiRoom &* ((oldMarkCount &- slot.firstMark) &>> 1), marks: oldMarkCount &- slot.firstMark)
        cursor = slot.start
        mark = slot.firstMark
        pending = slot.firstMark
        open = true
    }

    /// Where an old byte not yet copied lands in the new body.
    @inline(__always) func landing(_ x: Int, _ w: RawWriter) -> Int { w.count &+ x &- cursor }

    /// Starts patching `slot`, the one at `order` in the last body, which `separator`
    /// precedes in the new body; returns its slot in the new body (its end is the caller's).
    /// A new copy makes room for the rest of the last body with every number at its
    /// longest: the slots that continue it lie there, so rewriting a number checks no room.
    @inline(__always)
    mutating func begin(_ slot: LayoutEncoder.Slot, order: Int, after separator: StaticString, _ w: inout RawWriter) -> LayoutEncoder.Slot {
        if !open || order != next { startCopy(at: slot, after: separator, &w) }
        next = order + 1
        end = slot.end
        return LayoutEncoder.Slot(start: landing(slot.start, w), end: 0, firstMark: w.markCount + slot.firstMark - pending)
    }

    @inline(__always) mutating func number(_ was: Double, _ now: Double, _ w: inout RawWriter) {
        if was != now { rewrite(now, &w) }
        mark &+= 2
    }

    @inline(__always) mutating func rect(_ was: Rect, _ now: Rect, _ w: inout RawWriter) {
        number(was.x, now.x, &w)
        number(was.y, now.y, &w)
        number(was.w, now.w, &w)
        number(was.h, now.h, &w)
    }

    @inline(__always) mutating func insets(_ was: Insets, _ now: Insets, _ w: inout RawWriter) {
        number(was.top, now.top, &w)
        number(was.leading, now.leading, &w)
        number(was.bottom, now.bottom, &w)
        number(was.trailing, now.trailing, &w)
    }

    /// Numbers known to be unchanged (their values are the same storage).
    mutating func skip(numbers n: Int) { mark &+= 2 &* n }

    private mutating func rewrite(_ now: Double, _ w: inout RawWriter) {
        let start = oldMarks[mark]
        w.splice(old + cursor, count: start &- cursor, marks: oldMarks + pending, markCount: mark &- pending, shift: w.count &- cursor, then: now)
        cursor = oldMarks[mark &+ 1]
        pending = mark &+ 2
    }

    private mutating func carry(upTo stop: Int, _ w: inout RawWriter) {
        w.carryMarks(oldMarks + pending, count: mark &- pending, shift: w.count &- cursor)
        w.raw(old + cursor, stop - cursor)
        cursor = stop
        pending = mark
    }

    /// Copies what is still to be copied.
    mutating func flush(_ w: inout RawWriter) {
        guard open else { return }
        carry(upTo: end, &w)
        open = false
    }
}

extension Bar {
    /// Equal but for frames (the bar's and its items'): `Bar.patch` writes those. Fields
    /// listed by hand, read in place (the synthesized `==` copied both bars to compare).
    static func sameShape(_ a: UnsafePointer<Bar>, _ b: UnsafePointer<Bar>) -> Bool {
        a.pointee.id == b.pointee.id && a.pointee.container == b.pointee.container && a.pointee.role == b.pointee.role
            && a.pointee.axis == b.pointee.axis && a.pointee.edge == b.pointee.edge && a.pointee.background == b.pointee.background
            && a.pointee.tabBar == b.pointee.tabBar && a.pointee.overflow == b.pointee.overflow
            && samePairs(a.pointee.items, b.pointee.items) { x, y in
                x.pointee.id == y.pointee.id && x.pointee.shows == y.pointee.shows && x.pointee.badge == y.pointee.badge
                    && x.pointee.tabs == y.pointee.tabs
            }
    }

    /// The numbers of a bar of the same shape, in the order `write` writes them. The items
    /// are read through the bars' pointers at each step: an array read once and held across
    /// the calls that write numbers was retained and released (both arrays, every bar).
    static func patch(_ was: UnsafePointer<Bar>, _ now: UnsafePointer<Bar>, _ p: inout Patch, _ w: inout RawWriter) {
        p.rect(was.pointee.frame, now.pointee.frame, &w)
        let count = now.pointee.items.count
        if sameStorage(was.pointee.items, now.pointee.items) {
            p.skip(numbers: 4 &* count)
            return
        }
        for i in 0..<count { p.rect(was.pointee.items[i].frame, now.pointee.items[i].frame, &w) }
    }
}

/// `eachPair` behind a call that only reads. Arrays of the last layout, read through its
/// pointer, are then the caller's arguments, read in place: `eachPair` inlined in the caller
/// retained and released them to keep their buffers alive while it compared.
@inline(never) @_effects(readonly)
func samePairs<T>(_ a: [T], _ b: [T], _ same: (UnsafePointer<T>, UnsafePointer<T>) -> Bool) -> Bool { eachPair(a, b, same) }

/// Whether two arrays share their storage (the same elements), behind a read-only call (see
/// `samePairs`).
@inline(never) @_effects(readonly)
func sameStorage<T>(_ a: [T], _ b: [T]) -> Bool {
    a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress && x.count == y.count } }
}

/// An element of a layout array whose only numbers are its frame.
protocol Framed {
    var frame: Rect { get }
}

extension PlacedItem: Framed {}
extension Region: Framed {}
extension ColumnInfo: Framed {}
extension CustomInfo: Framed {}
extension FloatingInfo: Framed {}

/// Patches the frames of each pair of elements of an array of the last layout (read through
/// its pointer at each step, as `Bar.patch` reads items) and one of the same shape in the new
/// layout; the same storage holds the same frames. Specialized per element type, with no
/// closure per element (calling one was a sixth of patching a moved item).
@inline(__always)
private func framePairs<T: Framed>(_ old: UnsafePointer<[T]>, _ now: [T], _ p: inout Patch, _ w: inout RawWriter) {
    let count = now.count
    if sameStorage(old.pointee, now) {
        p.skip(numbers: 4 &* count)
        return
    }
    for i in 0..<count { p.rect(old.pointee[i].frame, now[i].frame, &w) }
}

extension LayoutEncoder.Member {
    /// Patches this member from its slot in the last body when its shape is unchanged, and
    /// returns its slot in the new body; nil (nothing written) when it must be written anew.
    func patch(_ old: UnsafePointer<Layout>, _ now: borrowing Layout, from slot: LayoutEncoder.Slot, order: Int,
               after separator: StaticString, _ p: inout Patch, _ w: inout RawWriter) -> LayoutEncoder.Slot? {
        guard sameShape(now, old) else { return nil }
        var patched = p.begin(slot, order: order, after: separator, &w)
        numbers(old, now, &p, &w)
        patched.end = p.landing(slot.end, w)
        return patched
    }

    /// Equal but for numbers, which `numbers` writes.
    @inline(__always) private func sameShape(_ a: borrowing Layout, _ old: UnsafePointer<Layout>) -> Bool {
        switch self {
        case .head:
            (a.device.sameNames(old.pointee.device) || a.device.namesFit(old.pointee.device)) && a.device.sizeClass == old.pointee.device.sizeClass
                && a.barAxis == old.pointee.barAxis && a.verticalBarEdge == old.pointee.verticalBarEdge && a.verticalBarSide == old.pointee.verticalBarSide
        case .regions: samePairs(a.regions, old.pointee.regions) { $0.pointee.kind == $1.pointee.kind }
        case .bars: false
        case .columns:
            samePairs(a.columns, old.pointee.columns) { x, y in
                x.pointee.id == y.pointee.id && x.pointee.sizeClass == y.pointee.sizeClass && x.pointee.verticalBarEdge == y.pointee.verticalBarEdge
            }
        case .sheet:
            switch (a.sheet, old.pointee.sheet) {
            case (nil, nil): true
            case let (x?, y?): x.id == y.id && x.placement == y.placement && x.axis == y.axis
            default: false
            }
        case .inspector:
            switch (a.inspector, old.pointee.inspector) {
            case (nil, nil): true
            case let (x?, y?): x.presentation == y.presentation
            default: false
            }
        case .custom:
            samePairs(a.custom, old.pointee.custom) { x, y in
                x.pointee.id == y.pointee.id && x.pointee.verticalBarEdge == y.pointee.verticalBarEdge && x.pointee.collides == y.pointee.collides
            }
        case .floating: samePairs(a.floating, old.pointee.floating) { $0.pointee.id == $1.pointee.id }
        case .diagnostics:
            samePairs(a.diagnostics, old.pointee.diagnostics, Diagnostic.same)
        }
    }

    /// The numbers of a member of the same shape, in the order `Layout.write` writes them.
    @inline(__always) private func numbers(_ old: UnsafePointer<Layout>, _ now: borrowing Layout, _ p: inout Patch, _ w: inout RawWriter) {
        switch self {
        case .head:
            p.number(old.pointee.device.width, now.device.width, &w)
            p.number(old.pointee.device.height, now.device.height, &w)
            p.rect(old.pointee.device.window, now.device.window, &w)
            p.insets(old.pointee.safeArea, now.safeArea, &w)
            p.insets(old.pointee.layoutMargins, now.layoutMargins, &w)
        case .regions: framePairs(old.pointer(to: \.regions)!, now.regions, &p, &w)
        case .columns: framePairs(old.pointer(to: \.columns)!, now.columns, &p, &w)
        case .sheet: if let x = old.pointee.sheet, let y = now.sheet { p.rect(x.frame, y.frame, &w) }
        case .inspector: if let x = old.pointee.inspector, let y = now.inspector { p.rect(x.frame, y.frame, &w) }
        case .custom: framePairs(old.pointer(to: \.custom)!, now.custom, &p, &w)
        case .floating: framePairs(old.pointer(to: \.floating)!, now.floating, &p, &w)
        case .bars, .diagnostics: break
        }
    }
}
