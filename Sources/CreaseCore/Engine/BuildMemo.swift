/// What earlier builds fitted and derived, for later builds to reuse where the inputs
/// are the same. The engine's builder keeps one: a build reads the last build's and
/// replaces it in place as it goes; `Engine.fromScratch` builds remembering nothing.
/// - Fits: the previous build's in order (vertical columns here; horizontal fits in the
///   builder's `horizontalFits`), each replaced in place by this build's at its position,
///   and a pool of earlier ones. A fitter reads the
///   reserved regions only through its band's largest free interval, so a bar whose band,
///   free interval, entries and flags are ones a fit has seen keeps that placement without
///   fitting again; a horizontal bar that only moved up or down (bottom bars over the
///   keyboard) keeps it moved to its band. A Live Activity or PiP refits only the bars it
///   reaches.
/// - A screen's entries and item diagnostics, which depend on the manifest alone, and
///   the badge notes of displaced items, which depend on the toolbar and the ids (pooled,
///   in `Pools`, which the builder keeps beside the memo).
/// - The last layout's arrays, taken again where they are the same.
/// - Whether the build read `reduceTransparency`.
struct BuildMemo: Sendable {
    /// A horizontal fit and what it read: the band (its `y` only through the items' `y`),
    /// the band's largest free interval (all a fit reads of the regions) and the rest of the
    /// input. Not the regions themselves: the entry holds no array it does not compare.
    struct Horizontal: Sendable {
        var band: Rect
        var free: (Double, Double)
        var entries: [BarEntry]
        var centerWidth: Double
        var hostsOverflowButton: Bool
        var menuPrefilled: Bool
        var direction: LayoutDirection
        var output: HorizontalBarFitter.Output

        init(_ input: borrowing HorizontalBarFitter.Input, free: (Double, Double), output: HorizontalBarFitter.Output) {
            band = input.band
            self.free = free
            entries = input.entries
            centerWidth = input.centerWidth
            hostsOverflowButton = input.hostsOverflowButton
            menuPrefilled = input.menuPrefilled
            direction = input.direction
            self.output = output
        }

        /// Whether a fit of `other` places its items as `fit` did, but perhaps at another `y`.
        /// Read through a pointer: a method on an array element copied the whole entry first.
        /// The entries are usually the same storage (a screen's entries are memoized), which
        /// `==` settles without comparing them.
        static func matches(_ fit: UnsafePointer<Horizontal>, _ other: borrowing HorizontalBarFitter.Input, free: (Double, Double)) -> Bool {
            BuildMemo.same(fit.pointee.free, free) && fit.pointee.band.x.bitPattern == other.band.x.bitPattern
                && fit.pointee.band.w.bitPattern == other.band.w.bitPattern && fit.pointee.band.h.bitPattern == other.band.h.bitPattern
                && fit.pointee.centerWidth.bitPattern == other.centerWidth.bitPattern
                && fit.pointee.hostsOverflowButton == other.hostsOverflowButton && fit.pointee.menuPrefilled == other.menuPrefilled
                && fit.pointee.direction == other.direction && fit.pointee.entries == other.entries
        }

        /// The output moved to the band at `y` (items centred across it at `itemY`).
        mutating func move(toBandY y: Double, itemY: Double) {
            guard band.y.bitPattern != y.bitPattern else { return }
            band.y = y
            // One copy of the shared array, then plain stores (indexing checked uniqueness at every item).
            output.items.withUnsafeMutableBufferPointer { items in
                for i in items.indices { items[i].frame.y = itemY }
            }
        }
    }

    /// The tab bar's items for its tabs, frame and free width (the items' frames depend on
    /// nothing else), and the tabs past its width, which join the menu.
    struct TabBar: Sendable {
        var tabs: [Tab]   // held, as in `HorizontalEntries`
        var frame: Rect
        var free: (Double, Double)
        var direction: LayoutDirection
        var items: [PlacedItem]
        var menuTabs: [String]

        /// Whether `placed` holds the items for `tabs` in `frame`, but perhaps at another `y`
        /// (read in place, as `Horizontal.matches`).
        static func matches(_ placed: UnsafePointer<TabBar>, _ tabs: [Tab], frame: Rect, free: (Double, Double), direction: LayoutDirection) -> Bool {
            BuildMemo.same(placed.pointee.free, free) && placed.pointee.frame.x.bitPattern == frame.x.bitPattern
                && placed.pointee.frame.w.bitPattern == frame.w.bitPattern && placed.pointee.frame.h.bitPattern == frame.h.bitPattern
                && placed.pointee.direction == direction && BuildMemo.identical(placed.pointee.tabs, tabs)
        }

        /// The items moved with the bar to `y` (they span its height).
        mutating func move(toY y: Double) {
            guard frame.y.bitPattern != y.bitPattern else { return }
            frame.y = y
            items.withUnsafeMutableBufferPointer { items in
                for i in items.indices { items[i].frame.y = y }
            }
        }
    }

    struct Column: Sendable {
        var input: ColumnFitter.Input
        var free: (Double, Double)
        var output: ColumnFitter.Output

        func matches(_ other: ColumnFitter.Input, free otherFree: (Double, Double)) -> Bool {
            BuildMemo.same(free, otherFree) && BuildMemo.same(input.band, other.band)
                && input.tabsCompressFirst == other.tabsCompressFirst && input.menuPrefilled == other.menuPrefilled
                && input.entries == other.entries && input.tabs == other.tabs
        }
    }

    /// A screen's entries for horizontal bars and the diagnostics of its items, which
    /// depend on nothing but the manifest (and the engine's fixed profile).
    struct HorizontalEntries: Sendable {
        /// Held, so no other array can have these buffers' addresses while the memo keeps them.
        var toolbar: [Item]
        var overflowMenu: [Item]
        var back: Bool
        var top: [BarEntry] = []
        var bottom: [BarEntry] = []
        var secondary: [String] = []
        var declared: [String] = []
        var diagnostics: [Diagnostic] = []

        /// Whether `entries` are for a screen with this toolbar and overflow menu (read in place).
        static func isFor(_ entries: UnsafePointer<HorizontalEntries>, _ toolbar: [Item], _ overflowMenu: [Item], back: Bool) -> Bool {
            entries.pointee.back == back && BuildMemo.identical(entries.pointee.toolbar, toolbar)
                && BuildMemo.identical(entries.pointee.overflowMenu, overflowMenu)
        }
    }

    /// A keyboard accessory's entries, which depend on its items alone.
    struct AccessoryEntries: Sendable {
        var items: [Item]   // held, as in `HorizontalEntries`
        var entries: [BarEntry]
    }

    /// The badge notes for a toolbar's displaced ids.
    struct BadgeNotes: Sendable {
        var toolbar: [Item]   // held, as in `HorizontalEntries`
        var displaced: [String]
        var diagnostics: [Diagnostic]
    }

    /// Whether the build read `reduceTransparency`: when it did not (no vertical bar), a
    /// toggle of it leaves the layout as it is.
    var readReduceTransparency = false
    /// The tab view's opt-out note, which reads the manifest alone.
    struct TabViewNotes: Sendable {
        var containers: [Container]   // held, as in `HorizontalEntries`
        var tabView: Int
        var diagnostics: [Diagnostic]
    }

    /// A custom bar's overlap note, for the bar and the kinds of region it overlaps.
    struct CollisionNote: Sendable {
        var subject: String
        var collides: [RegionKind]
        var note: Diagnostic
    }

    /// The column fits in the order the last build fitted its columns, each replaced by this
    /// build's as it fits (the builder's `columnsFitted`): the next build looks at the same
    /// position first.
    var columns: [Column] = []

    /// The arrays of the layout this memo's build made. A build whose bars, custom bars,
    /// floating buttons or diagnostics come out equal takes these (shared storage: nothing
    /// allocated, and the encoder and the recent-layouts cache compare and free them cheaply).
    var built = Built()

    struct Built: Sendable {
        var bars: [Bar] = []
        var custom: [CustomInfo] = []
        var floating: [FloatingInfo] = []
        var diagnostics: [Diagnostic] = []
    }

    /// Storage kept from build to build, empty, for the bars a build fills before settling
    /// them (`settled`).
    var spare = Spare()

    struct Spare: Sendable {
        var bars: [Bar] = []
    }

    /// Whatever earlier builds computed, bounded, kept by the builder from build to build
    /// (not replaced as a build goes, like the memo): fits a build meets again (a tab
    /// switched back, a fold undone, a sheet dismissed), tab bars, and what each screen
    /// derives from the manifest. Only what was computed anew is added, so a build that
    /// reuses everything adds nothing.
    struct Pools: Sendable {
        var horizontal = Pool<Horizontal>(capacity: 16)
        var columns = Pool<Column>(capacity: 8)
        var tabBars = Pool<TabBar>(capacity: 4)
        var horizontalEntries = Pool<HorizontalEntries>(capacity: 32)
        var accessoryEntries = Pool<AccessoryEntries>(capacity: 8)
        var badgeNotes = Pool<BadgeNotes>(capacity: 32)
        var collisionNotes = Pool<CollisionNote>(capacity: 16)
    }

    /// A bounded set of entries: once full, each new one replaces the oldest. Entries are
    /// keyed by inputs or by manifest storage they hold, so any entry that matches a lookup
    /// gives the same answer as any other: the search order does not matter.
    struct Pool<Entry: Sendable>: Sendable {
        private(set) var entries: [Entry] = []
        private var oldest = 0
        let capacity: Int

        init(capacity: Int) { self.capacity = capacity }

        mutating func add(_ entry: Entry) {
            if entries.count < capacity {
                entries.append(entry)
            } else {
                entries[oldest] = entry
                oldest = (oldest + 1) % capacity
            }
        }

        /// Changes entry `i` where it lies (an entry taken again and moved, say).
        mutating func update<R>(_ i: Int, _ change: (inout Entry) -> R) -> R { change(&entries[i]) }

        /// Entries are read in place: `entries[i]` copied each one (retaining its arrays) to test it.
        func firstIndex(where matches: (UnsafePointer<Entry>) -> Bool) -> Int? {
            entries.withUnsafeBufferPointer { all in
                guard let first = all.baseAddress else { return nil }
                for i in all.indices where matches(first + i) { return i }
                return nil
            }
        }
    }

    /// `filled` as the layout's array, or `built` (the last build's) when they are equal; then
    /// `filled` is emptied and kept in `spare` for the next build to fill again.
    static func settled<Element>(_ filled: inout [Element], _ built: [Element], spare: inout [Element],
                                 same: (UnsafePointer<Element>, UnsafePointer<Element>) -> Bool) -> [Element] {
        if eachPair(filled, built, same) {
            filled.removeAll(keepingCapacity: true)
            swap(&filled, &spare)
            return built
        }
        defer { filled = [] }
        return filled
    }

    /// The same array storage: equal contents, without comparing them (a new manifest's
    /// arrays are new storage, so they never match).
    static func identical<Element>(_ a: [Element], _ b: [Element]) -> Bool {
        a.count == b.count && (a.isEmpty || a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } })
    }

    /// Bit for bit, so a reused placement is the one a fit would print (0 and -0 differ).
    static func same(_ a: (Double, Double), _ b: (Double, Double)) -> Bool {
        a.0.bitPattern == b.0.bitPattern && a.1.bitPattern == b.1.bitPattern
    }

    static func same(_ a: Rect, _ b: Rect) -> Bool {
        a.x.bitPattern == b.x.bitPattern && a.y.bitPattern == b.y.bitPattern
            && a.w.bitPattern == b.w.bitPattern && a.h.bitPattern == b.h.bitPattern
    }
}

/// A list a build makes in order that usually comes out equal to the last build's: while
/// each element is the last build's at its position, nothing is allocated and the result
/// is the last build's array (shared storage).
struct Reused<Element> {
    private let last: [Element]
    private var kept = 0
    /// Once an element differs (`diverged`): the list so far, in storage of its own.
    private var fresh: [Element] = []
    private var diverged = false
    private let capacity: Int

    /// `capacity`: how many elements the list will have (reserved once it diverges).
    init(_ last: [Element], capacity: Int) {
        self.last = last
        self.capacity = capacity
    }

    /// Whether the last build's element at this position, which `same` reads in place, is
    /// the one to add (then it is added: `lastKept`); when not, nothing is added (the caller
    /// adds its own with `appendNew`).
    @inline(__always)
    mutating func reuse(_ same: (UnsafePointer<Element>) -> Bool) -> Bool {
        guard !diverged, kept < last.count, last.withUnsafeBufferPointer({ same($0.baseAddress! + kept) }) else { return false }
        kept += 1
        return true
    }

    /// The element `reuse` added last.
    var lastKept: Element { last[kept - 1] }

    mutating func appendNew(_ element: Element) {
        if !diverged {
            diverged = true
            fresh.reserveCapacity(capacity)
            if kept > 0 { fresh += last[..<kept] }
        }
        fresh.append(element)
    }

    var array: [Element] { diverged ? fresh : kept == last.count ? last : Array(last[..<kept]) }

    var count: Int { diverged ? fresh.count : kept }

    subscript(i: Int) -> Element { diverged ? fresh[i] : last[i] }

    /// The elements from `start` on, in an array of their own.
    func suffix(from start: Int) -> [Element] { diverged ? Array(fresh[start...]) : Array(last[start..<kept]) }
}

extension Reused where Element == Diagnostic {
    /// Adds a note: the last build's at this position when it reads the same (notes taken
    /// from a memo are its strings, so comparing them stops at their storage).
    mutating func append(_ note: Diagnostic) {
        withUnsafePointer(to: note) { append($0) }
    }

    /// `append`, reading the note in place (a note taken again from a memo is not copied unless added).
    @inline(__always)
    mutating func append(_ note: UnsafePointer<Diagnostic>) {
        if !reuse({ Diagnostic.same($0, note) }) {
            appendNew(note.pointee)
        }
    }
}

extension Reused: Sendable where Element: Sendable {}
