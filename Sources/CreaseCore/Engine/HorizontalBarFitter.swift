/// Fits a horizontal bar (navigation bar, bottom toolbar, sheet or inspector bar,
/// keyboard accessory): leading entries from the leading end, trailing entries
/// against the trailing end, an optional centre (the title) between them. Entries
/// that do not fit leave for the overflow menu by the overflow order rule.
struct HorizontalBarFitter {
    struct Input {
        var band: Rect
        var regions: [Region]
        var entries: [BarEntry]          // in leading-to-trailing order; `trailing` marks the trailing cluster
        var centerWidth: Double          // the title or principal item; shrinks (truncates) before pinned items leave
        var hostsOverflowButton: Bool    // whether this bar shows `system.overflow` when the menu is not empty
        var menuPrefilled: Bool
        var direction: LayoutDirection
    }

    struct Output {
        var items: [PlacedItem] = []
        var displaced: [String] = []
        var hasOverflowButton = false
    }

    let p: DeviceProfile
    let input: Input

    init(profile: DeviceProfile, input: Input) {
        p = profile
        self.input = input
    }

    func fit() -> Output { fit(free: freeInterval()) }

    /// Where every placed item's frame starts across the band: centred in it. Nothing else
    /// of a fit depends on the band's `y`.
    var itemY: Double { HorizontalBarFitter.itemY(band: input.band, profile: p) }

    static func itemY(band: Rect, profile p: DeviceProfile) -> Double { band.y + (band.h - p.itemLength) / 2 }

    /// The only thing the fit reads of the regions: the band's largest free interval.
    func freeInterval() -> (Double, Double) { HorizontalBarFitter.freeInterval(input) }

    static func freeInterval(_ input: Input) -> (Double, Double) {
        FreeSpace.largestInterval(in: input.band, axis: .horizontal, avoiding: input.regions)
    }

    func fit(free: (Double, Double)) -> Output {
        var out = Output()
        // Room for every entry and the overflow button up front: no array grows while placing.
        out.items.reserveCapacity(input.entries.count + 1)
        let room = max(0, free.1 - free.0 - 2 * p.barInset)
        var demoted = Array(repeating: false, count: input.entries.count)
        var anyDemoted = false
        var center = input.centerWidth
        // Called once per entry that leaves: it reads the lengths in place rather than copying
        // each entry, and sums in entry order so the result is the same to the last bit.
        func needed() -> Double {
            var total = center
            var count = 0
            for i in input.entries.indices where !demoted[i] { total += input.entries[i].length; count += 1 }
            if input.menuPrefilled || anyDemoted, input.hostsOverflowButton { total += p.barItemWidth; count += 1 }
            return total + Double(max(0, count - 1)) * p.itemSpacing
        }
        if needed() > room {
            var movable: [OverflowOrderRule.Candidate] = []
            var movableIndex: [Int] = []
            for (i, e) in input.entries.enumerated() where !e.isSpacer && !e.pinned {
                movable.append(.init(position: i, group: e.group, priority: e.priority))
                movableIndex.append(i)
            }
            for k in OverflowOrderRule.removalOrder(movable) {
                demoted[movableIndex[k]] = true
                anyDemoted = true
                if needed() <= room { break }
            }
            if needed() > room { center = 0 }  // the title truncates before anything pinned moves
            // Last resort: pinned entries leave too, trailing-most last, rather than overlap anything.
            for i in input.entries.indices.reversed() where input.entries[i].pinned && needed() > room {
                demoted[i] = true
                anyDemoted = true
            }
        }
        // Leading cluster from the leading end, trailing cluster against the trailing end.
        let leadingStart = free.0 + p.barInset
        let trailingEnd = free.1 - p.barInset
        var offset = 0.0
        let y = itemY
        func x(forLeadingOffset off: Double, width: Double) -> Double {
            input.direction == .ltr ? leadingStart + off : trailingEnd - off - width
        }
        var trailingEntries: [Int] = []
        trailingEntries.reserveCapacity(input.entries.count)
        for (i, e) in input.entries.enumerated() {
            if demoted[i] { out.displaced.append(e.id); continue }
            if e.trailing { trailingEntries.append(i); continue }
            if e.kind == .item || e.kind == .back {
                out.items.append(PlacedItem(id: e.id, frame: Rect(x: x(forLeadingOffset: offset, width: e.length), y: y, w: e.length, h: p.itemLength),
                                            shows: e.shows, badge: e.badge))
            }
            offset += e.length + p.itemSpacing
        }
        // The trailing cluster, laid out backwards from the trailing end; the overflow
        // button sits just before any pinned items, which stay trailing-most.
        var fromTrailing = 0.0
        var trailingPlaced: [PlacedItem] = []
        trailingPlaced.reserveCapacity(input.entries.count + 1)
        func placeTrailing(_ id: String, width: Double, shows: Shows, badge: Int?) {
            let leadingOffset = (trailingEnd - leadingStart) - fromTrailing - width
            trailingPlaced.append(PlacedItem(id: id, frame: Rect(x: x(forLeadingOffset: leadingOffset, width: width), y: y, w: width, h: p.itemLength),
                                             shows: shows, badge: badge))
            fromTrailing += width + p.itemSpacing
        }
        let pinned = trailingEntries.filter { input.entries[$0].pinned }
        let unpinned = trailingEntries.filter { !input.entries[$0].pinned }
        for i in pinned.reversed() { let e = input.entries[i]; placeTrailing(e.id, width: e.length, shows: e.shows, badge: e.badge) }
        if (input.menuPrefilled || anyDemoted) && input.hostsOverflowButton {
            placeTrailing("system.overflow", width: p.barItemWidth, shows: .symbol, badge: nil)
            out.hasOverflowButton = true
        }
        for i in unpinned.reversed() {
            let e = input.entries[i]
            if e.kind == .item || e.kind == .back { placeTrailing(e.id, width: e.length, shows: e.shows, badge: e.badge) }
            else { fromTrailing += e.length + p.itemSpacing }
        }
        for i in trailingPlaced.indices.reversed() { out.items.append(trailingPlaced[i]) }
        return out
    }
}
