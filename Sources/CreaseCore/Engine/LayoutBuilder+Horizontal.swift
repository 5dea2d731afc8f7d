/// The builder's horizontal case: navigation bar, bottom toolbar, tab bar.
extension LayoutBuilder {
    /// Lays out a screen whose bars are horizontal. Returns whether a navigation bar exists.
    mutating func layoutHorizontal(_ screen: Screen, area fullArea: Rect, back: Bool, tabs: [Tab], tabBarOwner: (container: String, bar: String), bottomLimit: Double,
                                   beside inspector: Rect? = nil) -> Bool {
        let area = excluding(fullArea, inspector)
        let (top, bottom, secondary, declared) = horizontalEntries(screen, back: back)
        var menu = OverflowMenu()
        menu.secondary = secondary
        menu.declared = declared

        var y = bottomLimit
        // Tab bar along the bottom; tabs past its width join the menu from the trailing end.
        if !tabs.isEmpty {
            y -= p.tabBarHeight
            let frame = Rect(x: area.x, y: y, w: area.w, h: p.tabBarHeight)
            let placed = placeTabs(tabs, frame: frame)
            menu.tabs = placed.menuTabs
            bars.append(Bar(id: tabBarOwner.bar, container: tabBarOwner.container, role: .tabBar, axis: .horizontal, edge: .bottom,
                            frame: frame, background: false, items: placed.items, overflow: [], tabBar: .expanded))
        }
        var toolbarBar: Bar?
        if !bottom.isEmpty {
            y -= p.toolbarHeight
            let frame = Rect(x: area.x, y: y, w: area.w, h: p.toolbarHeight)
            let out = fitHorizontal(.init(band: frame, regions: regions, entries: bottom, centerWidth: 0,
                                                                   hostsOverflowButton: false, menuPrefilled: false, direction: g.direction))
            menu.displaced = out.displaced   // nothing displaced before it
            toolbarBar = Bar(id: screen.barIds.toolbar, container: screen.id, role: .toolbar, axis: .horizontal, edge: .bottom,
                             frame: frame, background: false, items: out.items, overflow: [], tabBar: nil)
        }
        let navExists = screen.title != nil || !top.isEmpty || !menu.isEmpty
        if navExists {
            let frame = Rect(x: area.x, y: p.statusBarHeight, w: area.w, h: p.navigationBarHeight)
            let out = fitHorizontal(.init(band: frame, regions: regions, entries: top, centerWidth: titleReserve(screen),
                                                                   hostsOverflowButton: true, menuPrefilled: !menu.isEmpty, direction: g.direction))
            // The common cases (one side or both empty) make no new array.
            menu.displaced = menu.displaced.isEmpty ? out.displaced : out.displaced + menu.displaced
            badgeDiagnostics(menu.displaced, screen: screen)
            bars.append(Bar(id: screen.barIds.navigation, container: screen.id, role: .navigation, axis: .horizontal, edge: .top,
                            frame: frame, background: false, items: out.items, overflow: out.hasOverflowButton ? overflowIds(menu) : [], tabBar: nil))
        }
        if let toolbarBar { bars.append(toolbarBar) }
        return navExists
    }

    /// The tab bar's items and the tabs past its width: an earlier build's when the tabs, the
    /// bar's free width, its frame and the direction are the same (moved with the bar over a keyboard).
    mutating func placeTabs(_ tabs: [Tab], frame: Rect) -> (items: [PlacedItem], menuTabs: [String]) {
        // Tabs share the bar's free width equally (a partly folded fold splits it).
        let free = FreeSpace.largestInterval(in: frame, axis: .horizontal, avoiding: regions)
        let direction = g.direction
        if remembers, let i = pools.tabBars.firstIndex(where: { BuildMemo.TabBar.matches($0, tabs, frame: frame, free: free, direction: direction) }) {
            return pools.tabBars.update(i) { placed in
                placed.move(toY: frame.y)
                return (placed.items, placed.menuTabs)
            }
        }
        let fit = max(1, Int((free.1 - free.0) / p.minTabWidth))
        let shown = min(fit, tabs.count)
        let w = (free.1 - free.0) / Double(shown)
        var items: [PlacedItem] = []
        items.reserveCapacity(shown)
        // By index: iterating the tabs copied each one (retaining its strings).
        for i in 0..<shown {
            let slot = direction == .ltr ? Double(i) : Double(shown - 1 - i)
            let shows: Shows = tabs[i].symbol == nil ? .title : .symbolAndTitle
            items.append(PlacedItem(id: tabs[i].id, frame: Rect(x: free.0 + slot * w, y: frame.y, w: w, h: frame.h), shows: shows, badge: tabs[i].badge))
        }
        let menuTabs = tabs.dropFirst(fit).map(\.id)
        if remembers {
            pools.tabBars.add(.init(tabs: tabs, frame: frame, free: free, direction: direction, items: items, menuTabs: menuTabs))
        }
        return (items, menuTabs)
    }

    /// A screen's horizontal entries and their item diagnostics: they depend on the
    /// manifest alone, so a memo hands back the previous build's for the same arrays.
    mutating func horizontalEntries(_ screen: Screen, back: Bool)
        -> (top: [BarEntry], bottom: [BarEntry], secondary: [String], declared: [String]) {
        let toolbar = screen.toolbar, overflowMenu = screen.overflowMenu
        if let i = pools.horizontalEntries.firstIndex(where: { BuildMemo.HorizontalEntries.isFor($0, toolbar, overflowMenu, back: back) }) {
            // Field by field: the whole entry copied (and then released) the manifest arrays it holds too.
            return pools.horizontalEntries.entries.withUnsafeBufferPointer { entries in
                noteAgain(entries[i].diagnostics)
                return (entries[i].top, entries[i].bottom, entries[i].secondary, entries[i].declared)
            }
        }
        let mark = diagnostics.count
        var parts = BuildMemo.HorizontalEntries(toolbar: screen.toolbar, overflowMenu: screen.overflowMenu, back: back)
        if back { parts.top.append(EntryBuilder.back(vertical: false, profile: p)) }
        var afterFlexible = false
        for (position, item) in screen.toolbar.enumerated() {
            itemDiagnostics(item, vertical: false)
            if item.placement == .secondaryAction { parts.secondary.append(item.id); continue }
            var e = EntryBuilder.item(item, group: position, bottom: item.placement.isBottom, vertical: false, profile: p)
            if item.placement.isBottom {
                if item.kind == .flexibleSpacer { afterFlexible = true }
                e.trailing = afterFlexible
                parts.bottom.append(e)
            } else {
                e.trailing = NavigationBarRule.isTrailing(item.placement)
                parts.top.append(e)
            }
        }
        parts.declared = screen.overflowMenu.map(\.id)
        for item in screen.overflowMenu { itemDiagnostics(item, vertical: false) }
        if remembers {
            parts.diagnostics = diagnostics.suffix(from: mark)
            pools.horizontalEntries.add(parts)
        }
        return (parts.top, parts.bottom, parts.secondary, parts.declared)
    }

    func titleReserve(_ screen: Screen) -> Double {
        guard let length = screen.titleLength else { return 0 }
        return Double(length) * p.titleCharWidth + p.textItemPadding
    }
}
