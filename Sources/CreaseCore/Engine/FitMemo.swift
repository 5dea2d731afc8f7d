/// The fitters' inputs and results from the previous build, in the order the builder
/// fits its bars. A fitter reads the reserved regions only through its band's largest
/// free interval, so a bar whose band, free interval, entries and flags are what they
/// were keeps its placement without fitting again: a toggle of `reduceTransparency`, a
/// Live Activity or PiP away from most bars refits only the bars they reach. `Engine`
/// keeps one across relayouts; `Engine.fromScratch` builds without one.
struct FitMemo: Sendable {
    struct Horizontal: Sendable {
        var input: HorizontalBarFitter.Input
        var free: (Double, Double)
        var output: HorizontalBarFitter.Output

        func matches(_ other: HorizontalBarFitter.Input, free otherFree: (Double, Double)) -> Bool {
            FitMemo.same(free, otherFree) && FitMemo.same(input.band, other.band)
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
            FitMemo.same(free, otherFree) && FitMemo.same(input.band, other.band)
                && input.tabsCompressFirst == other.tabsCompressFirst && input.menuPrefilled == other.menuPrefilled
                && input.entries == other.entries && input.tabs == other.tabs
        }
    }

    var horizontal: [Horizontal] = []
    var columns: [Column] = []

    /// Bit for bit, so a reused placement is the one a fit would print (0 and -0 differ).
    static func same(_ a: (Double, Double), _ b: (Double, Double)) -> Bool {
        a.0.bitPattern == b.0.bitPattern && a.1.bitPattern == b.1.bitPattern
    }

    static func same(_ a: Rect, _ b: Rect) -> Bool {
        a.x.bitPattern == b.x.bitPattern && a.y.bitPattern == b.y.bitPattern
            && a.w.bitPattern == b.w.bitPattern && a.h.bitPattern == b.h.bitPattern
    }
}
