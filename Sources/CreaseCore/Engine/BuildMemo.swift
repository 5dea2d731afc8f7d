/// What the previous build fitted and derived, for the next build to reuse where its
/// inputs are unchanged. `Engine` keeps one across relayouts; `Engine.fromScratch`
/// builds without one.
/// - Fits, in the order the builder fits its bars. A fitter reads the reserved regions
///   only through its band's largest free interval, so a bar whose band, free interval,
///   entries and flags are what they were keeps its placement without fitting again; a
///   horizontal bar that only moved up or down (bottom bars over the keyboard) keeps it
///   moved to its band. A toggle of `reduceTransparency`, a Live Activity or PiP refit
///   only the bars they reach.
/// - A screen's entries and item diagnostics, which depend on the manifest alone, and
///   the badge notes of displaced items, which depend on the toolbar and the ids.
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

    var horizontal: [Horizontal] = []
    var badgeNotes: [BadgeNotes] = []
    var tabViewNotes: TabViewNotes?
    var collisionNotes: [CollisionNote] = []
    var horizontalEntries: [HorizontalEntries] = []
    var columns: [Column] = []

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
