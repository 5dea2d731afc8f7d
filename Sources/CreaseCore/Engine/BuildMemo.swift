/// What earlier builds fitted and derived, for later builds to reuse where the inputs
/// are the same. The engine's builder keeps two (the last build's, read, and the one
/// being filled, whose storage is the build before's); `Engine.fromScratch` builds
/// remembering nothing.
/// - Fits: the previous build's in order, and a pool of earlier ones. A fitter reads the
///   reserved regions only through its band's largest free interval, so a bar whose band,
///   free interval, entries and flags are ones a fit has seen keeps that placement without
///   fitting again; a horizontal bar that only moved up or down (bottom bars over the
///   keyboard) keeps it moved to its band. A Live Activity or PiP refits only the bars it
///   reaches.
/// - A screen's entries and item diagnostics, which depend on the manifest alone, and
///   the badge notes of displaced items, which depend on the toolbar and the ids (pooled).
/// - The last layout's arrays and the primary screen, taken again where they are the same.
/// - Whether the build read `reduceTransparency`.
struct BuildMemo: Sendable {
    struct Horizontal: Sendable {
        var input: HorizontalBarFitter.Input
        var free: (Double, Double)
        var output: HorizontalBarFitter.Output

        func matches(_ other: HorizontalBarFitter.Input, free otherFree: (Double, Double)) -> Bool {
            BuildMemo.same(free, otherFree) && input.band.x.bitPattern == other.band.x.bitPattern
                && input.band.w.bitPattern == other.band.w.bitPattern && input.band.h.bitPattern == other.band.h.bitPattern
                && input.centerWidth.bitPattern == other.centerWidth.bitPattern
                && input.hostsOverflowButton == other.hostsOverflowButton && input.menuPrefilled == other.menuPrefilled
                && input.direction == other.direction && input.entries == other.entries
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

        func isFor(_ screen: Screen, back: Bool) -> Bool {
            self.back == back && BuildMemo.identical(toolbar, screen.toolbar) && BuildMemo.identical(overflowMenu, screen.overflowMenu)
        }
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

    /// This build's fits, in the order it fitted its bars: the next build looks at the
    /// same position first.
    var horizontal: [Horizontal] = []
    var columns: [Column] = []
    /// Whatever earlier builds computed, bounded, carried from build to build by moving
    /// (never copied): fits a build meets again (a tab switched back, a fold undone, a
    /// sheet dismissed) and what each screen derives from the manifest. Only what was
    /// computed anew is added, so a build that reuses everything adds nothing.
    var pools = Pools()
    var tabViewNotes: TabViewNotes?

    /// The primary screen of this memo's build, at `primaryIndex` in `primaryIn` (the app's
    /// screens, held so no other array can have their address while the memo keeps them).
    /// Apart, so that checking them reads no copy of the screen.
    var primary: Screen?
    var primaryIndex = -1
    var primaryIn: [Screen] = []

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

    /// Storage kept from build to build, empty, for the bars and diagnostics a build fills
    /// before settling them (`settled`).
    var spare = Spare()

    struct Spare: Sendable {
        var bars: [Bar] = []
        var diagnostics: [Diagnostic] = []
    }

    struct Pools: Sendable {
        var horizontal = Pool<Horizontal>(capacity: 16)
        var columns = Pool<Column>(capacity: 8)
        var horizontalEntries = Pool<HorizontalEntries>(capacity: 32)
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

        func firstIndex(where matches: (borrowing Entry) -> Bool) -> Int? {
            for i in entries.indices where matches(entries[i]) { return i }
            return nil
        }
    }

    /// An earlier column fit with these inputs: the previous build's at position `k`, else one in the pool.
    func columnFit(for input: ColumnFitter.Input, free: (Double, Double), atPrevious k: Int, in previous: BuildMemo) -> Column? {
        if k < previous.columns.count, previous.columns[k].matches(input, free: free) { return previous.columns[k] }
        return pools.columns.firstIndex(where: { $0.matches(input, free: free) }).map { pools.columns.entries[$0] }
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

    /// The last build's element at this position when `same` says it is the one to add;
    /// nil, and nothing added, when it is not (then the caller adds its own with `appendNew`).
    mutating func reuse(_ same: (borrowing Element) -> Bool) -> Element? {
        guard !diverged, kept < last.count, same(last[kept]) else { return nil }
        kept += 1
        return last[kept - 1]
    }

    mutating func appendNew(_ element: Element) {
        if !diverged {
            diverged = true
            fresh.reserveCapacity(capacity)
            if kept > 0 { fresh += last[..<kept] }
        }
        fresh.append(element)
    }

    var array: [Element] { diverged ? fresh : kept == last.count ? last : Array(last[..<kept]) }
}
