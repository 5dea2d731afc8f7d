/// The builder's panels: the sidebar, the inspector, a sheet and its bar, the keyboard accessory.
extension LayoutBuilder {
    // MARK: - Sidebar, inspector, sheet, accessory

    mutating func layoutSidebar(_ spec: TabViewSpec, frame: Rect, bottomLimit: Double) {
        var items: [PlacedItem] = []
        var overflow: [String] = []
        var y = p.statusBarHeight + p.navigationBarHeight
        for tab in spec.tabs {
            if y + p.itemLength > bottomLimit || regions.contains(where: { $0.frame.intersects(Rect(x: frame.x + p.barInset, y: y, w: frame.w - 2 * p.barInset, h: p.itemLength)) }) {
                overflow.append(tab.id)
                continue
            }
            items.append(PlacedItem(id: tab.id, frame: Rect(x: frame.x + p.barInset, y: y, w: frame.w - 2 * p.barInset, h: p.itemLength),
                                    shows: tab.symbol == nil ? .title : .symbolAndTitle, badge: tab.badge))
            y += p.itemLength
        }
        bars.append(Bar(id: spec.barIds.sidebar, container: spec.id, role: .sidebar, axis: .vertical,
                        edge: .leading, frame: frame, background: false, items: items, overflow: overflow, tabBar: nil))
    }

    /// Where the inspector goes: a trailing column inside the content, next to (never
    /// replacing) the detail's vertical bar, or a sheet.
    func inspectorFrame(_ presentation: InspectorPresentation, area: Rect, vertical: Bool) -> Rect {
        guard presentation == .column else {
            return Rect(x: g.window.x, y: p.sheetInset, w: g.window.w, h: g.height - p.sheetInset)
        }
        let columnOnRight = g.direction == .ltr
        let barRight = vertical && g.appSide == .right
        let barLeft = vertical && g.appSide == .left
        let w = min(p.inspectorWidth, area.w / 2)
        let x = columnOnRight ? area.maxX - (barRight ? p.columnWidth : 0) - w : area.x + (barLeft ? p.columnWidth : 0)
        return Rect(x: x, y: 0, w: w, h: g.height)
    }

    /// A horizontal band less an inspector column standing at one of its ends.
    func excluding(_ band: Rect, _ column: Rect?) -> Rect {
        guard let c = column, c.x < band.maxX, c.maxX > band.x else { return band }
        if c.x - band.x >= band.maxX - c.maxX {
            return Rect(x: band.x, y: band.y, w: c.x - band.x, h: band.h)
        }
        return Rect(x: c.maxX, y: band.y, w: band.maxX - c.maxX, h: band.h)
    }

    mutating func layoutSheet(_ sheet: Sheet) -> SheetInfo {
        let islandBottom = regions.first { $0.kind == .dynamicIsland }?.frame.maxY
        let frame = SheetRule.frame(sheet, geometry: g, pose: state.pose, islandBottom: islandBottom, profile: p)
        var vertical = SheetRule.barVertical(sheet, geometry: g)
        for item in sheet.toolbar { itemDiagnostics(item, vertical: vertical) }
        if vertical, let bar = verticalSheetBar(sheet, frame: frame) {
            bars.append(bar)
            if sheet.toolbar.filter({ $0.kind == .button }).count == 1 {
                note(.singleControlSheet, sheet.id, "sheet \"\(sheet.id)\" has a single control; a vertical bar costs width for little gain: consider toolbarVerticalBehavior(.disabled)")
            }
        } else {
            if vertical {
                vertical = false
                note(.columnTooShort, sheet.id, "sheet \"\(sheet.id)\" has no room for a vertical bar here, so its items stay horizontal")
            }
            let band = Rect(x: frame.x, y: frame.y, w: frame.w, h: p.navigationBarHeight)
            addHorizontalPanelBar(id: sheet.barId, container: sheet.id, role: .sheet, band: band, items: sheet.toolbar)
        }
        if sheet.placement == .trailing, !sheet.detents.contains(.large) {
            note(.trailingSheetDetents, sheet.id, "trailing sheet \"\(sheet.id)\" lacks the large detent; in the 27.1 beta such sheets sometimes missed their vertical bar: check it open and partly folded")
        }
        return SheetInfo(id: sheet.id, placement: sheet.placement, frame: frame, axis: vertical ? .vertical : .horizontal)
    }

    /// The sheet's own vertical bar, or nil when the column cannot hold even its minimum
    /// (then the sheet keeps horizontal bars rather than hide anything).
    mutating func verticalSheetBar(_ sheet: Sheet, frame: Rect) -> Bar? {
        var menu = OverflowMenu()
        let parts = ItemAxisRule.partition(sheet.toolbar)
        let columnItems = parts.column
        let hiddenHere = parts.titleRow.filter { $0.kind == .button }
        menu.secondary = parts.menu
        let side = SheetRule.side(of: sheet.placement, direction: g.direction) ?? g.appSide
        let band = Rect(x: side == .right ? frame.maxX - p.columnWidth : frame.x, y: frame.y, w: p.columnWidth, h: frame.h)
        let entries = VerticalOrderRule.order(columnItems).map {
            EntryBuilder.item($0.item, group: $0.group, bottom: $0.item.placement.isBottom, vertical: true, profile: p)
        }
        let out = fitColumn(.init(band: band, regions: regions, entries: entries, tabs: [],
                                  tabsCompressFirst: false, menuPrefilled: !menu.isEmpty))
        guard !out.lastResort else { return nil }
        // A sheet has no title row: a horizontal-only item has no horizontal bar here.
        for item in hiddenHere {
            note(.itemHidden, item.id, "\"\(item.id)\" can only be horizontal and sheet \"\(sheet.id)\" has a vertical bar only, so it is hidden")
        }
        menu.displaced = out.displaced
        let edge = BarSideRule.edge(for: side, direction: g.direction)
        return Bar(id: sheet.barId, container: sheet.id, role: .sheet, axis: .vertical, edge: edge == .leading ? .leading : .trailing,
                   frame: band, background: readReduceTransparency(), items: out.items,
                   overflow: out.overflowButtonInColumn ? overflowIds(menu) : [], tabBar: nil)
    }

    /// A horizontal bar holding a panel's items (inspector, horizontal sheet): leading
    /// navigation items, the rest trailing, its own overflow menu.
    mutating func addHorizontalPanelBar(id: String, container: String, role: BarRole, band requested: Rect, items: [Item]) {
        // A panel that reaches the top of the screen keeps its bar below the status bar.
        var band = requested
        band.y = max(band.y, p.statusBarHeight)
        var menu = OverflowMenu()
        var entries: [BarEntry] = []
        for (position, item) in items.enumerated() {
            if item.placement == .secondaryAction { menu.secondary.append(item.id); continue }
            var e = EntryBuilder.item(item, group: position, bottom: false, vertical: false, profile: p)
            e.trailing = NavigationBarRule.isTrailing(item.placement)
            entries.append(e)
        }
        let out = fitHorizontal(.init(band: band, regions: regions, entries: entries, centerWidth: 0,
                                                               hostsOverflowButton: true, menuPrefilled: !menu.isEmpty, direction: g.direction))
        menu.displaced = out.displaced
        bars.append(Bar(id: id, container: container, role: role, axis: .horizontal, edge: .top, frame: band, background: false,
                        items: out.items, overflow: out.hasOverflowButton ? overflowIds(menu) : [], tabBar: nil))
    }

    /// Seed 002: "Keyboard accessory bars stay horizontal", attached to the keyboard.
    mutating func layoutAccessory(_ screen: Screen, band: Rect) {
        let entries = accessoryEntries(screen.keyboardAccessory)
        let out = fitHorizontal(.init(band: band, regions: regions, entries: entries, centerWidth: 0,
                                                               hostsOverflowButton: true, menuPrefilled: false, direction: g.direction))
        bars.append(Bar(id: screen.barIds.keyboardAccessory, container: screen.id, role: .keyboardAccessory, axis: .horizontal, edge: .bottom,
                        frame: band, background: false, items: out.items, overflow: out.hasOverflowButton ? out.displaced : [], tabBar: nil))
    }

    /// A keyboard accessory's entries: they depend on its items alone, so a memo hands back
    /// the ones made for the same items (storage), and the fit finds them the same storage.
    mutating func accessoryEntries(_ items: [Item]) -> [BarEntry] {
        if let i = pools.accessoryEntries.firstIndex(where: { BuildMemo.identical($0.pointee.items, items) }) {
            return pools.accessoryEntries.entries[i].entries
        }
        var entries: [BarEntry] = []
        var afterFlexible = false
        for (position, item) in items.enumerated() {
            if item.kind == .flexibleSpacer { afterFlexible = true }
            var e = EntryBuilder.item(item, group: position, bottom: false, vertical: false, profile: p)
            e.trailing = afterFlexible
            entries.append(e)
        }
        if remembers { pools.accessoryEntries.add(.init(items: items, entries: entries)) }
        return entries
    }
}
