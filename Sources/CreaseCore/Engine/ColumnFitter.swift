/// Fits a vertical bar: the one side column that merges navigation, toolbar and tab
/// items (rules 5, 6 and 7). Entries are given in visual order (top section, then
/// bottom placements); tabs form a stack at the bottom.
struct ColumnFitter {
    struct Input {
        var band: Rect
        var regions: [Region]
        var entries: [BarEntry]
        var tabs: [BarEntry]
        var tabsCompressFirst: Bool
        /// Whether the menu already holds something (secondary, declared, row overflow, title-only tabs).
        var menuPrefilled: Bool
    }

    struct Output {
        var items: [PlacedItem] = []
        var displaced: [String] = []          // entries that left for the menu, in visual order
        var toRow: [String] = []              // last resort: entries moved to the horizontal row
        var tabsInMenu: [String] = []
        var tabBar: TabBarState?
        var overflowButtonInColumn = false
        var overflowButtonToRow = false
        var lastResort = false                // the column could not hold its minimum
    }

    enum Step { case demote(Int), compressTabs, tightenGap, pinnedToRow(Int), tabsToMenu, overflowToRow }

    let p: DeviceProfile
    let input: Input

    // Fitting state.
    var demoted: [Bool]
    var inRow: [Bool]
    var compressed = false
    var tabsInMenu = false
    var overflowInRow = false
    /// Last resort: the gap between top and bottom placements shrinks to plain item spacing.
    var tightGap = false

    init(profile: DeviceProfile, input: Input) {
        p = profile
        self.input = input
        demoted = Array(repeating: false, count: input.entries.count)
        inRow = Array(repeating: false, count: input.entries.count)
    }

    var menuNonEmpty: Bool { input.menuPrefilled || tabsInMenu || demoted.contains(true) }

    func isShown(_ i: Int) -> Bool { !demoted[i] && !inRow[i] }

    /// Length of one section: entries with item spacing, plus group spacing where the group changes.
    func sectionLength(bottom: Bool) -> Double {
        var total = 0.0
        var count = 0
        var lastGroup = Int.min
        func add(_ length: Double, group: Int) {
            if count > 0 { total += p.itemSpacing + (group != lastGroup ? p.groupSpacing : 0) }
            total += length
            count += 1
            lastGroup = group
        }
        // Called for every step of a fit: entries are read in place (a copy retains each id).
        for i in input.entries.indices where input.entries[i].bottom == bottom && isShown(i) {
            switch input.entries[i].kind {
            case .flexibleSpacer: continue                 // collapses to zero on the vertical axis
            case .fixedSpacer: total += input.entries[i].length   // keeps its minimum, adds no spacing of its own
            default: add(input.entries[i].length, group: input.entries[i].group)
            }
        }
        if !bottom, menuNonEmpty, !overflowInRow { add(p.itemLength, group: Int.max) }
        if bottom, !input.tabs.isEmpty, !tabsInMenu {
            if compressed { add(p.tabLength, group: Int.max - 1) } else { for t in input.tabs.indices { add(input.tabs[t].length, group: Int.max - 1) } }
        }
        return total
    }

    func totalLength() -> Double {
        let top = sectionLength(bottom: false)
        let bottom = sectionLength(bottom: true)
        return top + bottom + (top > 0 && bottom > 0 ? (tightGap ? p.itemSpacing : p.bottomGap) : 0)
    }

    /// The normal steps, in the screen's compression order: toolbar items leave by the
    /// overflow order rule and the tab bar compresses, whichever first the screen asks for.
    func ladder() -> [Step] {
        var movable: [OverflowOrderRule.Candidate] = []
        var movableIndex: [Int] = []
        for (i, e) in input.entries.enumerated() where !e.isSpacer {
            if e.pinned { continue }
            movable.append(.init(position: i, group: e.group, priority: e.priority))
            movableIndex.append(i)
        }
        let toolbar = OverflowOrderRule.removalOrder(movable).map { Step.demote(movableIndex[$0]) }
        let compress: [Step] = input.tabs.isEmpty ? [] : [.compressTabs]
        return input.tabsCompressFirst ? compress + toolbar : toolbar + compress
    }

    /// Last resort, only when the normal steps cannot make the column fit: the gap
    /// tightens, pinned items move to the title row, the tabs join the menu, and the
    /// overflow button itself moves to the title row.
    func lastResort() -> [Step] {
        var steps: [Step] = [.tightenGap]
        for (i, e) in input.entries.enumerated().reversed() where e.pinned && !e.isSpacer { steps.append(.pinnedToRow(i)) }
        if !input.tabs.isEmpty { steps.append(.tabsToMenu) }
        steps.append(.overflowToRow)
        return steps
    }

    mutating func apply(_ step: Step) {
        switch step {
        case .demote(let i): demoted[i] = true
        case .compressTabs: compressed = true
        case .tightenGap: tightGap = true
        case .pinnedToRow(let i): inRow[i] = true
        case .tabsToMenu: tabsInMenu = true
        case .overflowToRow: overflowInRow = true
        }
    }

    mutating func fit() -> Output { fit(free: freeInterval()) }

    /// The only thing the fit reads of the regions: the band's largest free interval.
    func freeInterval() -> (Double, Double) { FreeSpace.largestInterval(in: input.band, axis: .vertical, avoiding: input.regions) }

    mutating func fit(free: (Double, Double)) -> Output {
        var out = Output()
        let room = free.1 - free.0
        if totalLength() > room {
            var demotions: [Int] = []
            for step in ladder() {
                apply(step)
                if case .demote(let i) = step { demotions.append(i) }
                if totalLength() <= room { break }
            }
            if totalLength() <= room {
                // A later step (the tab bar compressing) may have freed room: bring back the
                // items that left last, in reverse order, while they fit. What stays in the
                // menu is still a prefix of the removal order.
                while let last = demotions.last {
                    demoted[last] = false
                    if totalLength() > room { demoted[last] = true; break }
                    demotions.removeLast()
                }
            } else {
                for step in lastResort() {
                    apply(step)
                    if case .tightenGap = step {} else { out.lastResort = true }
                    if totalLength() <= room { break }
                }
            }
        }
        // Place: the top section from the top of the free space, the bottom section from its bottom.
        var y = free.0
        var lastGroup = Int.min
        var placedAny = false
        func place(_ id: String, length: Double, thickness: Double, group: Int, shows: Shows, badge: Int?, tabs: [String]? = nil,
                   into items: inout [PlacedItem]) {
            if thickness == 0 { y += length; return }  // a spacer: its length only, no spacing (see sectionLength)
            if placedAny { y += p.itemSpacing + (group != lastGroup ? p.groupSpacing : 0) }
            let frame = Rect(x: input.band.x + (input.band.w - thickness) / 2, y: y, w: thickness, h: length)
            items.append(PlacedItem(id: id, frame: frame, shows: shows, badge: badge, tabs: tabs))
            y += length
            placedAny = true
            lastGroup = group
        }
        for (i, e) in input.entries.enumerated() where !e.bottom {
            if demoted[i] { out.displaced.append(e.id); continue }
            if inRow[i] { out.toRow.append(e.id); continue }
            place(e.id, length: e.length, thickness: e.thickness, group: e.group, shows: e.shows, badge: e.badge, into: &out.items)
        }
        if menuNonEmpty {
            if overflowInRow {
                out.overflowButtonToRow = true
            } else {
                place("system.overflow", length: p.itemLength, thickness: p.itemLength, group: Int.max, shows: .symbol, badge: nil, into: &out.items)
                out.overflowButtonInColumn = true
            }
        }
        // Bottom section, measured first so it ends at the bottom of the free space.
        let bottomLength = sectionLength(bottom: true)
        y = free.1 - bottomLength
        placedAny = false
        lastGroup = Int.min
        for (i, e) in input.entries.enumerated() where e.bottom {
            if demoted[i] { out.displaced.append(e.id); continue }
            if inRow[i] { out.toRow.append(e.id); continue }
            place(e.id, length: e.length, thickness: e.thickness, group: e.group, shows: e.shows, badge: e.badge, into: &out.items)
        }
        if !input.tabs.isEmpty {
            if tabsInMenu {
                out.tabsInMenu = input.tabs.map(\.id)
                out.tabBar = .compressed
            } else if compressed {
                let badges = input.tabs.compactMap(\.badge)
                place("system.tabs", length: p.tabLength, thickness: p.tabWidth, group: Int.max - 1, shows: .symbol,
                      badge: badges.isEmpty ? nil : badges.reduce(0, +), tabs: input.tabs.map(\.id), into: &out.items)
                out.tabBar = .compressed
            } else {
                for t in input.tabs {
                    place(t.id, length: t.length, thickness: t.thickness, group: Int.max - 1, shows: .symbol, badge: t.badge, into: &out.items)
                }
                out.tabBar = .expanded
            }
        }
        // Displaced entries are reported in visual order (top section, then bottom).
        return out
    }
}
