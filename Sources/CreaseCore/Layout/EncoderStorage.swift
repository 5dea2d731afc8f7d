/// What a `LayoutEncoder` keeps from one encoding to the next: the last layout, its bytes
/// and its numbers' marks, and the buffers the next encoding writes into (the two pairs of
/// buffers swap after each encoding: nothing is allocated per encoding but the body).
final class EncoderStorage: @unchecked Sendable {
    // Only the encoder that holds it uniquely touches it, one access at a time: no
    // run-time exclusivity checks (they were a tenth of the member loop).
    @exclusivity(unchecked) private var bytes: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var byteCapacity: Int
    @exclusivity(unchecked) private var marks: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var markCapacity: Int
    @exclusivity(unchecked) private(set) var lastBytes: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var lastByteCapacity: Int
    @exclusivity(unchecked) private(set) var lastByteCount = 0
    @exclusivity(unchecked) private(set) var lastMarks: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var lastMarkCapacity: Int
    @exclusivity(unchecked) private(set) var lastMarkCount = 0
    /// The layout encoded last, when `hasLast` (in place: comparing with it copies nothing).
    let last: UnsafeMutablePointer<Layout>
    @exclusivity(unchecked) private(set) var hasLast = false
    /// Bars and diagnostics that left the layout lately, with their encodings.
    @exclusivity(unchecked) var recentBars = RecentBars()
    @exclusivity(unchecked) var recentDiagnostics = RecentDiagnostics()
    /// The last body's slots, and lists for the next encoding's (they swap like the buffers).
    @exclusivity(unchecked) private(set) var lastMemberSlots = SlotList(capacity: LayoutEncoder.Member.ordered.count)
    @exclusivity(unchecked) private(set) var lastBarSlots = SlotList(capacity: 16)
    @exclusivity(unchecked) private(set) var memberSlots = SlotList(capacity: LayoutEncoder.Member.ordered.count)
    @exclusivity(unchecked) private(set) var barSlots = SlotList(capacity: 16)

    init(byteCapacity: Int = 4096, markCapacity: Int = 256) {
        bytes = .allocate(capacity: byteCapacity)
        lastBytes = .allocate(capacity: byteCapacity)
        self.byteCapacity = byteCapacity
        lastByteCapacity = byteCapacity
        marks = .allocate(capacity: markCapacity)
        lastMarks = .allocate(capacity: markCapacity)
        self.markCapacity = markCapacity
        lastMarkCapacity = markCapacity
        last = .allocate(capacity: 1)
        last.initialize(to: EncoderStorage.nothing)
    }

    private static let nothing = Layout(
        device: DeviceInfo(pose: .closed, display: .outer, orientation: .portrait, layoutDirection: .ltr, width: 0, height: 0,
                           sizeClass: SizeClassPair(horizontal: .compact, vertical: .compact), window: .zero),
        barAxis: .horizontal, verticalBarEdge: nil, verticalBarSide: nil, safeArea: Insets(), layoutMargins: Insets(),
        regions: [], bars: [], columns: [], sheet: nil, inspector: nil, custom: [], floating: [], diagnostics: [])

    /// Storage of its own for a copy of the encoder, with the same last encoding.
    func copy() -> EncoderStorage {
        let c = EncoderStorage(byteCapacity: max(byteCapacity, lastByteCapacity), markCapacity: max(markCapacity, lastMarkCapacity))
        c.lastBytes.update(from: lastBytes, count: lastByteCount)
        c.lastByteCount = lastByteCount
        c.lastMarks.update(from: lastMarks, count: lastMarkCount)
        c.lastMarkCount = lastMarkCount
        c.last.pointee = last.pointee
        c.hasLast = hasLast
        c.recentBars = recentBars
        c.recentDiagnostics = recentDiagnostics
        c.lastMemberSlots.append(contentsOf: lastMemberSlots)
        c.lastBarSlots.append(contentsOf: lastBarSlots)
        return c
    }

    /// A writer into the next encoding's buffers, marking numbers.
    func writer() -> RawWriter {
        RawWriter(storage: bytes, capacity: byteCapacity, marks: marks, markCapacity: markCapacity)
    }

    /// Keeps what `w` wrote (it may have grown into new buffers) as the last encoding, of
    /// `layout`, and lends the last encoding's buffers to the next writer.
    func keep(_ w: RawWriter, _ members: SlotList, _ bars: SlotList, of layout: Layout) {
        memberSlots = lastMemberSlots
        barSlots = lastBarSlots
        lastMemberSlots = members
        lastBarSlots = bars
        bytes = lastBytes
        byteCapacity = lastByteCapacity
        lastBytes = w.base
        lastByteCapacity = w.capacity
        lastByteCount = w.count
        marks = lastMarks
        markCapacity = lastMarkCapacity
        lastMarks = w.marks!
        lastMarkCapacity = w.markCapacity
        lastMarkCount = w.markCount
        take(layout)
        hasLast = true
    }

    /// Makes `layout` the last one field by field, leaving the arrays whose storage is the
    /// last one's (the builder hands back its last arrays where equal): assigning the whole
    /// layout retained and released every string and array in it.
    private func take(_ layout: borrowing Layout) {
        let l = last
        l.pointee.device = layout.device
        l.pointee.barAxis = layout.barAxis
        l.pointee.verticalBarEdge = layout.verticalBarEdge
        l.pointee.verticalBarSide = layout.verticalBarSide
        l.pointee.safeArea = layout.safeArea
        l.pointee.layoutMargins = layout.layoutMargins
        EncoderStorage.take(layout.regions, into: &l.pointee.regions)
        EncoderStorage.take(layout.bars, into: &l.pointee.bars)
        EncoderStorage.take(layout.columns, into: &l.pointee.columns)
        l.pointee.sheet = layout.sheet
        l.pointee.inspector = layout.inspector
        EncoderStorage.take(layout.custom, into: &l.pointee.custom)
        EncoderStorage.take(layout.floating, into: &l.pointee.floating)
        EncoderStorage.take(layout.diagnostics, into: &l.pointee.diagnostics)
        // Compared as bytes: a layout holding NaN is not `==` to itself.
        assert(l.pointee.encodeBody() == layout.encodeBody(), "a member of Layout not taken")
    }

    @inline(__always) private static func take<T>(_ new: [T], into kept: inout [T]) {
        let same = new.withUnsafeBufferPointer { n in kept.withUnsafeBufferPointer { $0.baseAddress == n.baseAddress && $0.count == n.count } }
        if !same { kept = new }
    }

    deinit {
        bytes.deallocate()
        lastBytes.deallocate()
        marks.deallocate()
        lastMarks.deallocate()
        last.deinitialize(count: 1)
        last.deallocate()
        for list in [lastMemberSlots, lastBarSlots, memberSlots, barSlots] { list.free() }
    }
}

/// The last few bars that left the layout, each with its encoding and its numbers' marks
/// (from the start of its bytes): a bar that comes back in the same shape is patched from
/// them instead of written anew. Searched linearly by id; the oldest goes first.
struct RecentBars {
    private var bars: [Bar] = []
    private var encodings: [(bytes: [UInt8], marks: [Int])] = []
    static let capacity = 8

    /// Keeps a bar of the last body (its bytes from `slot` in `body`).
    mutating func keep(_ bar: Bar, slot: LayoutEncoder.Slot, of body: UnsafePointer<UInt8>, marks: UnsafePointer<Int>) {
        // Back and forth between two screens keeps the same bars: compared, not copied again.
        if bars.contains(where: { $0 == bar }) { return }
        let numbers = 4 * (1 + bar.items.count)
        let bytes = Array(UnsafeBufferPointer(start: body + slot.start, count: slot.end - slot.start))
        let rebased = (0..<2 * numbers).map { marks[slot.firstMark + $0] - slot.start }
        if let k = bars.firstIndex(where: { $0.id == bar.id }) {
            bars.remove(at: k)
            encodings.remove(at: k)
        } else if bars.count == RecentBars.capacity {
            bars.removeFirst()
            encodings.removeFirst()
        }
        bars.append(bar)
        encodings.append((bytes, rebased))
    }

    /// Writes `bar` patched from a kept bar of the same id and shape (after `separator`,
    /// once `main` is flushed) and returns its slot; nil when none is kept.
    func patch(_ bar: UnsafePointer<Bar>, after separator: StaticString, _ main: inout Patch, _ w: inout RawWriter) -> LayoutEncoder.Slot? {
        bars.withUnsafeBufferPointer { kept in
            guard let k = kept.indices.first(where: { (kept.baseAddress! + $0).pointee.id == bar.pointee.id }),
                  Bar.sameShape(kept.baseAddress! + k, bar) else { return nil }
            main.flush(&w)
            return encodings[k].bytes.withUnsafeBufferPointer { bytes in
                encodings[k].marks.withUnsafeBufferPointer { marks in
                    var p = Patch(old: bytes.baseAddress!, count: bytes.count, marks: marks.baseAddress!, markCount: marks.count)
                    var slot = p.begin(LayoutEncoder.Slot(start: 0, end: bytes.count, firstMark: 0), order: -1, after: separator, &w)
                    Bar.patch(kept.baseAddress! + k, bar, &p, &w)
                    slot.end = p.landing(bytes.count, w)
                    p.flush(&w)
                    return slot
                }
            }
        }
    }
}

/// The last few diagnostics arrays that left the layout, with their encodings: equal ones
/// are copied instead of quoted anew. Searched linearly; the oldest goes first.
struct RecentDiagnostics {
    private var kept: [(diagnostics: [Diagnostic], bytes: [UInt8])] = []
    static let capacity = 4

    /// Keeps the last body's diagnostics (their bytes from `slot` in `body`).
    mutating func keep(_ diagnostics: [Diagnostic], slot: LayoutEncoder.Slot, of body: UnsafePointer<UInt8>) {
        // Back and forth between two screens keeps the same two: compared, not copied again.
        if kept.contains(where: { $0.diagnostics == diagnostics }) { return }
        if kept.count == RecentDiagnostics.capacity { kept.removeFirst() }
        kept.append((diagnostics, Array(UnsafeBufferPointer(start: body + slot.start, count: slot.end - slot.start))))
    }

    /// Copies the encoding of diagnostics equal to `diagnostics` (after `separator`, once
    /// `main` is flushed) and returns its slot; nil when none is kept.
    func copy(_ diagnostics: [Diagnostic], after separator: StaticString, _ main: inout Patch, _ w: inout RawWriter) -> LayoutEncoder.Slot? {
        guard let k = kept.indices.last(where: { kept[$0].diagnostics == diagnostics }) else { return nil }
        main.flush(&w)
        w.literal(separator)
        let start = w.count
        kept[k].bytes.withUnsafeBufferPointer { w.raw($0.baseAddress!, $0.count) }
        return LayoutEncoder.Slot(start: start, end: w.count, firstMark: w.markCount)
    }
}

/// A growable list of slots in raw storage (no uniqueness check per append), owned by an
/// `EncoderStorage`.
struct SlotList {
    private var base: UnsafeMutablePointer<LayoutEncoder.Slot>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    subscript(i: Int) -> LayoutEncoder.Slot { base[i] }

    @inline(__always) mutating func append(_ slot: LayoutEncoder.Slot) {
        if count == capacity { grow(to: capacity * 2) }
        base[count] = slot
        count += 1
    }

    mutating func append(contentsOf other: SlotList) {
        if count + other.count > capacity { grow(to: count + other.count) }
        (base + count).update(from: other.base, count: other.count)
        count += other.count
    }

    mutating func removeAll() { count = 0 }

    @inline(never) private mutating func grow(to bigger: Int) {
        let fresh = UnsafeMutablePointer<LayoutEncoder.Slot>.allocate(capacity: bigger)
        fresh.update(from: base, count: count)
        base.deallocate()
        base = fresh
        capacity = bigger
    }

    func free() { base.deallocate() }
}
