/// One thing a bar may hold, before it is placed.
struct BarEntry: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case item, back, tab, fixedSpacer, flexibleSpacer }
    var kind: Kind
    var id: String
    var group: Int
    var priority: Double
    /// Pinned entries (topBarPinnedTrailing, back) never go to the overflow menu in
    /// normal fitting; only the last-resort steps move them.
    var pinned: Bool
    var length: Double      // along the bar's axis
    var thickness: Double   // across it
    var shows: Shows
    var badge: Int?
    var bottom: Bool        // vertical bars: a bottom placement, below the gap
    /// Horizontal bars: entries after the first flexible spacer sit at the trailing end.
    var trailing: Bool = false

    var isSpacer: Bool { kind == .fixedSpacer || kind == .flexibleSpacer }
}

/// A bar's one system overflow menu, in menu order: items that left the bar (in
/// visual order), then `secondaryAction` items, then `overflowMenu` items, then tabs.
struct OverflowMenu: Sendable {
    var displaced: [String] = []
    var secondary: [String] = []
    var declared: [String] = []
    var tabs: [String] = []

    var isEmpty: Bool { displaced.isEmpty && secondary.isEmpty && declared.isEmpty && tabs.isEmpty }
    var ids: [String] {
        var out: [String] = []
        out.reserveCapacity(displaced.count + secondary.count + declared.count + tabs.count)
        out += displaced
        out += secondary
        out += declared
        out += tabs
        return out
    }

    /// Whether `list` holds exactly `ids`, in order (compared without building `ids`).
    func lists(_ list: [String]) -> Bool {
        guard list.count == displaced.count + secondary.count + declared.count + tabs.count else { return false }
        return list.withUnsafeBufferPointer { l in
            OverflowMenu.same(displaced, l, from: 0) && OverflowMenu.same(secondary, l, from: displaced.count)
                && OverflowMenu.same(declared, l, from: displaced.count + secondary.count)
                && OverflowMenu.same(tabs, l, from: l.count - tabs.count)
        }
    }

    private static func same(_ part: [String], _ list: UnsafeBufferPointer<String>, from start: Int) -> Bool {
        part.withUnsafeBufferPointer { p in
            for i in p.indices where p[i] != list[start + i] { return false }
            return true
        }
    }
}

enum EntryBuilder {
    static func item(_ item: Item, group: Int, bottom: Bool, vertical: Bool, profile p: DeviceProfile) -> BarEntry {
        let prominent = item.placement == .confirmationAction || item.placement == .topBarPinnedTrailing
        let kind: BarEntry.Kind = switch item.kind {
        case .button: .item
        case .spacer: .fixedSpacer
        case .flexibleSpacer: .flexibleSpacer
        }
        var length: Double
        var thickness: Double
        if vertical {
            // Seed 002: "Flexible spacers collapse to zero on the vertical axis"; fixed ones keep their minimum.
            length = kind == .flexibleSpacer ? 0 : kind == .fixedSpacer ? p.fixedSpacerLength : (prominent ? p.prominentLength : p.itemLength)
            thickness = prominent ? p.prominentLength : p.itemLength
        } else {
            length = kind == .item ? textWidth(item, profile: p) : kind == .fixedSpacer ? p.fixedSpacerLength : 0
            thickness = p.itemLength
        }
        if kind != .item { thickness = 0 }
        return BarEntry(kind: kind, id: item.id, group: group, priority: item.priority,
                        pinned: item.placement == .topBarPinnedTrailing, length: length, thickness: thickness,
                        shows: item.symbol != nil ? .symbol : .title, badge: item.badge, bottom: bottom)
    }

    /// Width of an item in a horizontal bar: a symbol takes the tap target; text takes its characters.
    static func textWidth(_ item: Item, profile p: DeviceProfile) -> Double {
        if item.symbol != nil { return p.barItemWidth }
        let chars = Double(item.title?.count ?? 0)
        return max(p.barItemWidth, chars * p.textCharWidth + p.textItemPadding)
    }

    static func back(vertical: Bool, profile p: DeviceProfile) -> BarEntry {
        BarEntry(kind: .back, id: "system.back", group: -1, priority: .infinity, pinned: true,
                 length: vertical ? p.itemLength : p.barItemWidth, thickness: p.itemLength, shows: .symbol, badge: nil, bottom: false)
    }

    static func tab(_ tab: Tab, group: Int, profile p: DeviceProfile) -> BarEntry {
        BarEntry(kind: .tab, id: tab.id, group: group, priority: 0, pinned: true, length: p.tabLength, thickness: p.tabWidth,
                 shows: .symbol, badge: tab.badge, bottom: true)
    }
}
