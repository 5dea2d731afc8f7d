/// The builder's vertical case: the side column and the title row.
extension LayoutBuilder {
    /// Lays out a screen whose bars are vertical. Returns whether a title row exists.
    mutating func layoutVertical(_ screen: Screen, area: Rect, back: Bool, tabs: [Tab], edge: HorizontalEdge,
                                 beside inspector: Rect? = nil) -> Bool {
        var menu = OverflowMenu()
        let parts = ItemAxisRule.partition(screen.toolbar)
        let columnItems = parts.column, rowItems = parts.titleRow
        menu.secondary = parts.menu
        for item in screen.toolbar { itemDiagnostics(item, vertical: true) }
        menu.declared = screen.overflowMenu.map(\.id)
        for item in screen.overflowMenu { itemDiagnostics(item, vertical: true) }

        let band = Rect(x: g.appSide == .right ? area.maxX - p.columnWidth : area.x, y: 0, w: p.columnWidth, h: g.height)
        let rowBand = excluding(Rect(x: g.appSide == .right ? area.x : area.x + p.columnWidth, y: p.statusBarHeight,
                                     w: area.w - p.columnWidth, h: p.navigationBarHeight), inspector)
        let titleWidth = titleReserve(screen)

        // The row first: what it cannot hold joins the menu before the column is fitted.
        var rowExists = screen.title != nil
        var rowEntries: [BarEntry] = []
        for item in rowItems {
            if !rowExists && item.kind == .button {
                note(.itemHidden, item.id, "\"\(item.id)\" can only be horizontal and this screen has no horizontal bar (no title row), so it is hidden")
                continue
            }
            var e = EntryBuilder.item(item, group: rowEntries.count, bottom: false, vertical: false, profile: p)
            e.trailing = true
            rowEntries.append(e)
        }
        if rowExists {
            let out = fitHorizontal(.init(band: rowBand, regions: regions, entries: rowEntries, centerWidth: titleWidth,
                                                                   hostsOverflowButton: false, menuPrefilled: false, direction: g.direction))
            menu.displaced += out.displaced
        }

        // Tabs: title-only tabs are never vertical; they wait in the menu.
        var tabEntries: [BarEntry] = []
        for tab in tabs {
            if ItemAxisRule.tabCanBeVertical(tab) {
                tabEntries.append(EntryBuilder.tab(tab, group: Int.max - 1, profile: p))
            } else {
                menu.tabs.append(tab.id)
                note(.titleOnlyTab, tab.id, "tab \"\(tab.id)\" has no symbol, so it cannot be shown in the vertical bar; it is in the overflow menu (give it a systemImage)")
            }
            if let s = tab.symbol, SymbolRule.isReservedEllipsis(s) {
                note(.reservedEllipsis, tab.id, "the ellipsis symbol is reserved for the system overflow menu; give \"\(tab.id)\" a symbol of its own")
            }
        }

        // The column.
        var entries: [BarEntry] = []
        if back { entries.append(EntryBuilder.back(vertical: true, profile: p)) }
        for (item, group) in VerticalOrderRule.order(columnItems) {
            entries.append(EntryBuilder.item(item, group: group, bottom: item.placement.isBottom, vertical: true, profile: p))
        }
        let column = fitColumn(.init(band: band, regions: regions, entries: entries, tabs: tabEntries,
                                     tabsCompressFirst: CompressionRule.tabBarCompressesFirst(screen.compression),
                                     menuPrefilled: !menu.isEmpty))
        menu.displaced = column.displaced + menu.displaced
        menu.tabs += column.tabsInMenu
        if column.lastResort {
            note(.columnTooShort, screen.id, "the vertical bar has too little room for its pinned items; some moved to the title row or the overflow menu")
        }

        // Last resort: pinned items or the overflow button move to the title row, which then exists even without a title.
        var rowBar: Bar?
        if rowExists || !column.toRow.isEmpty || column.overflowButtonToRow {
            rowExists = true
            var extra: [BarEntry] = []
            for id in column.toRow {
                if id == "system.back" { extra.append(EntryBuilder.back(vertical: false, profile: p)); continue }
                if let item = columnItems.first(where: { $0.id == id }) {
                    var e = EntryBuilder.item(item, group: -2, bottom: false, vertical: false, profile: p)
                    e.pinned = true
                    extra.append(e)
                }
            }
            let out = fitHorizontal(.init(band: rowBand, regions: regions, entries: extra + rowEntries,
                                                                   centerWidth: titleWidth, hostsOverflowButton: column.overflowButtonToRow,
                                                                   menuPrefilled: !menu.isEmpty, direction: g.direction))
            rowBar = Bar(id: screen.barIds.navigation, container: screen.id, role: .navigation, axis: .horizontal, edge: .top,
                         frame: rowBand, background: false, items: out.items, overflow: column.overflowButtonToRow ? overflowIds(menu) : [], tabBar: nil)
        }
        badgeDiagnostics(menu.displaced, screen: screen)
        if let rowBar { bars.append(rowBar) }
        bars.append(Bar(id: screen.barIds.vertical, container: screen.id, role: .vertical, axis: .vertical, edge: edge == .leading ? .leading : .trailing,
                        frame: band, background: readReduceTransparency(), items: column.items,
                        overflow: column.overflowButtonInColumn ? overflowIds(menu) : [], tabBar: column.tabBar))
        return rowExists
    }
}
