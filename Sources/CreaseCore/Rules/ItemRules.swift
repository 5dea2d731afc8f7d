/// Rule 4, seeds 000 and 002: "Items with an icon, like back or share, go vertical.
/// Text-only items, like Edit, stay horizontal." Custom views stay horizontal by
/// default; `axisBehavior` overrides. Apple's docs: `.automatic` lets image items
/// take either axis while text and custom-view items are horizontal only, and a
/// `.horizontalOnly` item "is hidden if no horizontal bar exists".
public enum ItemAxisRule {
    public enum Capability: Sendable, Equatable { case eitherAxis, horizontalOnly, verticalPreferred }

    public static func capability(of item: Item) -> Capability {
        switch item.axisBehavior {
        case .horizontalOnly: return .horizontalOnly
        case .verticalPreferred: return .verticalPreferred
        case .automatic: return item.customView || item.symbol == nil ? .horizontalOnly : .eitherAxis
        }
    }

    /// Seed 002: "a title-only tab item won't be shown vertically."
    public static func tabCanBeVertical(_ tab: Tab) -> Bool { tab.symbol != nil }

    /// Where an item of a screen goes when that screen's bars are vertical.
    public enum VerticalHome: Sendable, Equatable { case column, titleRow, menu }

    /// A toolbar split by where each item goes when bars are vertical, keeping declaration order.
    public struct VerticalPartition: Sendable {
        public var menu: [String] = []
        public var column: [Item] = []
        public var titleRow: [Item] = []
    }

    public static func partition(_ items: [Item]) -> VerticalPartition {
        var p = VerticalPartition()
        for item in items {
            switch verticalHome(of: item) {
            case .menu: p.menu.append(item.id)
            case .column: p.column.append(item)
            case .titleRow: p.titleRow.append(item)
            }
        }
        return p
    }

    public static func verticalHome(of item: Item) -> VerticalHome {
        // Spacers shape the column they sit in; they have no axis of their own.
        if item.isSpacer { return .column }
        // Seed 003 / duo-facts: `.secondaryAction` items start in the overflow menu.
        if item.placement == .secondaryAction { return .menu }
        // The principal item is the title's own place in the horizontal row.
        if item.placement == .principal { return .titleRow }
        return capability(of: item) == .horizontalOnly ? .titleRow : .column
    }
}

/// Rule 5, seed 002: "A vertical bar reads top to bottom: 1. Primary navigation: back
/// or close. 2. Prominent actions, such as Done. 3. Everything else, in its original
/// groups, with a spacer between top and bottom placements."
public enum VerticalOrderRule {
    public enum Rank: Int, Sendable, Comparable {
        case primaryNavigation = 0, prominent = 1, other = 2, bottom = 3
        public static func < (a: Rank, b: Rank) -> Bool { a.rawValue < b.rawValue }
    }

    public static func rank(of item: Item) -> Rank {
        switch item.placement {
        case .cancellationAction: .primaryNavigation
        case .confirmationAction, .topBarPinnedTrailing: .prominent
        case .bottomBar, .status: .bottom
        default: .other
        }
    }

    /// Orders items for a vertical bar: by rank, then by group (a group sits where its
    /// first member was declared), then by declaration order. Returns (item, group ordinal).
    public static func order(_ items: [Item]) -> [(item: Item, group: Int)] {
        // A group is (rank, name); ungrouped items are groups of their own. Groups are
        // numbered by first appearance with a linear scan, which keeps it deterministic.
        // The sort moves plain keys; the items (four strings each) are read once, at the end.
        var groupKeys: [(rank: Rank, name: String?)] = []
        var keyed: [(rank: Rank, group: Int, position: Int)] = []
        keyed.reserveCapacity(items.count)
        for position in items.indices {
            let r = rank(of: items[position])
            let g: Int
            if let name = items[position].group, let existing = groupKeys.firstIndex(where: { $0.rank == r && $0.name == name }) {
                g = existing
            } else {
                g = groupKeys.count
                groupKeys.append((r, items[position].group))
            }
            keyed.append((r, g, position))
        }
        keyed.sort { a, b in
            if a.rank != b.rank { return a.rank < b.rank }
            if a.group != b.group { return a.group < b.group }
            return a.position < b.position
        }
        return keyed.map { (items[$0.position], $0.group) }
    }
}

/// Rule 7, seed 003: "its items move into the overflow menu one by one: by default,
/// from the bottom up. To change that order, the app gives items a visibility priority,
/// high, low, or custom, first to whole groups, then, if needed, to single items within
/// a group."
public enum OverflowOrderRule {
    public struct Candidate: Sendable {
        public var position: Int     // visual position, top-down (or leading-trailing)
        public var group: Int
        public var priority: Double
        public init(position: Int, group: Int, priority: Double) {
            self.position = position; self.group = group; self.priority = priority
        }
    }

    /// The order in which candidates leave the bar (indices into `candidates`).
    /// A group's priority is its highest member's; lower-priority groups leave first,
    /// then lower-priority items within a group; ties leave bottom-up.
    public static func removalOrder(_ candidates: [Candidate]) -> [Int] {
        let groups = (candidates.map(\.group).max() ?? -1) + 1
        var groupPriority = [Double](repeating: -.infinity, count: groups)
        var groupLast = [Int](repeating: -1, count: groups)
        for c in candidates {
            groupPriority[c.group] = max(groupPriority[c.group], c.priority)
            groupLast[c.group] = max(groupLast[c.group], c.position)
        }
        return candidates.indices.sorted { i, j in
            let a = candidates[i], b = candidates[j]
            let ga = groupPriority[a.group], gb = groupPriority[b.group]
            if ga != gb { return ga < gb }
            if a.group != b.group { return groupLast[a.group] > groupLast[b.group] }
            if a.priority != b.priority { return a.priority < b.priority }
            return a.position > b.position
        }
    }
}

/// Rule 7, seed 003: "On a screen people browse … the toolbar compresses first … That's
/// the default behavior." "On a screen where people finish a task … have the tab bar
/// compress first. It shrinks to a single control."
public enum CompressionRule {
    public static func tabBarCompressesFirst(_ behavior: CompressionBehavior) -> Bool {
        behavior == .prefersToolbarItems
    }
}

/// Horizontal navigation bars: back, close and navigation items lead; the rest trail.
enum NavigationBarRule {
    static func isTrailing(_ placement: ItemPlacement) -> Bool {
        switch placement {
        case .cancellationAction, .navigation, .topBarLeading, .principal: false
        default: true
        }
    }
}

/// Seed 003: "Keep the ellipsis (three dots) for that menu, and give any other menu a symbol of its own."
enum SymbolRule {
    static func isReservedEllipsis(_ symbol: String) -> Bool {
        // The first byte settles most symbols without a string comparison.
        symbol.utf8.first == UInt8(ascii: "e") && (symbol == "ellipsis" || symbol.hasPrefix("ellipsis."))
    }
}
