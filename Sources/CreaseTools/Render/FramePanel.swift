import CreaseCore

/// The diagnostics: numbered callouts on the screen, and the panel beside it that lists
/// them with the overflow menus and pointers.
extension FrameDrawing {
    // MARK: - Diagnostics on the screen

    func callouts(_ w: inout XMLWriter) {
        var placed: [Rect] = []
        for (i, diag) in layout.diagnostics.enumerated() {
            guard let f = DiagnosticAnchor.frame(of: diag.subject, in: layout, catalog: catalog) else { continue }
            let stacked = placed.filter { $0 == f }.count
            placed.append(f)
            let cx = min(max(f.x + 8, 10) + Double(stacked) * 18, layout.device.width - 10)
            let cy = min(max(f.y + 8, 10), layout.device.height - 10)
            w.begin("g", [("class", "callout"), ("data-n", String(i + 1)), ("data-code", diag.code.rawValue), ("data-subject", diag.subject)])
            w.element("title", text: "\(i + 1). \(diag.code.rawValue): \(diag.message)")
            w.leaf("circle", [("cx", num(cx)), ("cy", num(cy)), ("r", "8"), ("fill", Palette.callout), ("stroke", "#ffffff"), ("stroke-width", "1.5")])
            w.element("text", [("x", num(cx)), ("y", num(cy + 3.5)), ("font-size", "10"), ("font-weight", "bold"), ("text-anchor", "middle"),
                               ("fill", "#ffffff")], text: String(i + 1))
            w.end()
        }
    }


    // MARK: - The panel beside the screen

    /// Writes the panel and returns its bottom.
    mutating func drawPanel(_ w: inout XMLWriter, top: Double) -> Double {
        let x = panelX, lh = FrameDrawing.lineHeight, width = FrameDrawing.panelWidth
        var y = top
        func heading(_ w: inout XMLWriter, _ s: String) {
            y += 6
            w.element("text", [("x", num(x)), ("y", num(y + 11)), ("font-size", "12"), ("font-weight", "bold"), ("fill", Palette.ink)], text: s)
            y += lh + 2
        }

        if let o = observed?.result {
            w.begin("g", [("id", "differences"), ("data-verdict", o.verdict.rawValue)])
            heading(&w, "Observation: \(o.verdict.rawValue)" + (o.differences.isEmpty ? ", no differences" : ""))
            for d in o.differences {
                w.begin("g", [("class", "difference-entry"), ("data-path", d.path)])
                for line in TextFit.wrap(d.description, width: width - 10, size: 10) {
                    w.element("text", [("x", num(x + 10)), ("y", num(y + 10)), ("font-size", "10"), ("fill", Palette.verdict(o.verdict))], text: line)
                    y += 13
                }
                w.end()
            }
            w.end()
        }

        for i in menus.indices {
            let bar = menus[i].bar
            menus[i].pointer.y = y + 11
            w.begin("g", [("class", "menu"), ("data-bar", bar.id)])
            heading(&w, "\(menus[i].pointer.tag): overflow of \(bar.id)")
            for id in bar.overflow { menuRow(&w, id: id, x: x, y: &y) }
            w.end()
        }
        for i in tabGroups.indices {
            let g = tabGroups[i]
            tabGroups[i].pointer.y = y + 11
            w.begin("g", [("class", "tabs"), ("data-bar", g.bar.id)])
            heading(&w, "\(g.pointer.tag): compressed tab bar in \(g.bar.id)")
            for id in g.item.tabs ?? [] { menuRow(&w, id: id, x: x, y: &y) }
            w.end()
        }

        w.begin("g", [("id", "bars")])
        heading(&w, layout.bars.isEmpty ? "No bars" : "Bars")
        for bar in layout.bars {
            w.begin("g", [("class", "bar-entry"), ("data-id", bar.id)])
            w.leaf("rect", [("x", num(x)), ("y", num(y + 2)), ("width", "16"), ("height", "32"), ("fill", Palette.role(bar.role)),
                            ("fill-opacity", "0.3"), ("stroke", Palette.axis(bar.axis)), ("stroke-width", num(Palette.axisWidth(bar.axis)))])
            w.element("text", [("x", num(x + 22)), ("y", num(y + 10)), ("font-size", "10"), ("font-weight", "bold"), ("fill", Palette.ink)],
                      text: TextFit.fit(bar.id, width: width - 22, size: 10))
            var facts = ["\(bar.role.rawValue) role, \(bar.axis.rawValue) axis, \(bar.edge.rawValue) edge",
                         bar.items.count == 1 ? "1 item" : "\(bar.items.count) items"]
            if let m = menus.first(where: { $0.bar.id == bar.id }) { facts[1] += ", \(bar.overflow.count) in \(m.pointer.tag)" }
            if let t = bar.tabBar { facts[1] += ", tabs \(t.rawValue)" }
            if bar.background { facts[1] += ", opaque background" }
            for (i, line) in facts.enumerated() {
                w.element("text", [("x", num(x + 22)), ("y", num(y + 22 + Double(i) * 11)), ("font-size", "9"), ("fill", Palette.muted)],
                          text: TextFit.fit(line, width: width - 22, size: 9))
            }
            w.end()
            y += 40
        }
        w.end()

        w.begin("g", [("id", "diagnostics")])
        heading(&w, layout.diagnostics.isEmpty ? "No diagnostics" : "Diagnostics")
        for (i, diag) in layout.diagnostics.enumerated() {
            let drawn = DiagnosticAnchor.frame(of: diag.subject, in: layout, catalog: catalog) != nil
            w.begin("g", [("class", "diagnostic"), ("data-n", String(i + 1)), ("data-code", diag.code.rawValue), ("data-subject", diag.subject)])
            w.leaf("circle", [("cx", num(x + 8)), ("cy", num(y + 7)), ("r", "8"), ("fill", Palette.callout)])
            w.element("text", [("x", num(x + 8)), ("y", num(y + 10.5)), ("font-size", "10"), ("font-weight", "bold"), ("text-anchor", "middle"),
                               ("fill", "#ffffff")], text: String(i + 1))
            w.element("text", [("x", num(x + 22)), ("y", num(y + 11)), ("font-size", "11"), ("font-weight", "bold"), ("fill", Palette.ink)],
                      text: TextFit.fit("\(diag.code.rawValue) · \(diag.subject)" + (drawn ? "" : " (not on screen)"), width: width - 22, size: 11))
            y += lh
            for line in TextFit.wrap(diag.message, width: width - 22, size: 10) {
                w.element("text", [("x", num(x + 22)), ("y", num(y + 10)), ("font-size", "10"), ("fill", Palette.muted)], text: line)
                y += 13
            }
            y += 4
            w.end()
        }
        w.end()

        w.begin("g", [("id", "legend")])
        heading(&w, "Legend")
        typealias Entry = (swatch: XMLWriter.Attributes, label: String)
        var sections: [(kind: String, title: String, entries: [Entry])] = []
        sections.append(("role", "fill: the bar's role", Palette.allRoles.map {
            ([("fill", Palette.role($0)), ("fill-opacity", "0.3"), ("stroke", Palette.role($0))], $0.rawValue)
        }))
        sections.append(("axis", "outline: the bar's axis", [Axis.vertical, .horizontal].map {
            ([("fill", "none"), ("stroke", Palette.axis($0)), ("stroke-width", num(Palette.axisWidth($0)))], $0.rawValue)
        }))
        sections.append(("region", "regions", RegionKind.allCases.map {
            ([("fill", $0 == .division ? "url(#hatch)" : Palette.region($0)), ("fill-opacity", $0 == .statusBar ? "0.35" : "0.8")], $0.rawValue)
        }))
        sections.append(("other", "other", [
            ([("fill", "none"), ("stroke", Palette.safeArea), ("stroke-dasharray", "4 2")], "safe area"),
            ([("fill", "none"), ("stroke", Palette.column), ("stroke-dasharray", "2 2")], "column"),
            ([("fill", "url(#custom)"), ("stroke", Palette.custom), ("stroke-dasharray", "3 2")], "custom bar"),
            ([("fill", "url(#custom)"), ("stroke", Palette.collision), ("stroke-dasharray", "3 2")], "custom bar, colliding"),
            ([("fill", Palette.screen), ("stroke", Palette.role(.sheet))], "sheet"),
            ([("fill", Palette.floating), ("rx", "6")], "floating button"),
            ([("fill", Palette.otherApp)], "another app (Split View)"),
            ([("fill", Palette.badge), ("rx", "6")], "badge"),
            ([("fill", Palette.callout), ("rx", "6")], "diagnostic (numbered)"),
            ([("fill", Palette.screen), ("stroke", Palette.collision), ("stroke-width", "2"), ("stroke-dasharray", "4 2")], "item outside its bar"),
            ([("fill", "none"), ("stroke", Palette.observed), ("stroke-width", "1.5"), ("stroke-dasharray", "3 2")], "observed frame"),
            ([("fill", Palette.difference), ("fill-opacity", "0.12"), ("stroke", Palette.difference), ("stroke-width", "2")], "differs from observed"),
        ]))
        let columnWidth = width / 2
        for section in sections {
            w.element("text", [("x", num(x)), ("y", num(y + 10)), ("font-size", "10"), ("font-style", "italic"), ("fill", Palette.muted)], text: section.title)
            y += 14
            for (i, e) in section.entries.enumerated() {
                let cx = x + Double(i % 2) * columnWidth, cy = y + Double(i / 2) * lh
                w.begin("g", [("class", "legend-entry"), ("data-kind", section.kind)])
                w.leaf("rect", [("x", num(cx)), ("y", num(cy + 1)), ("width", "22"), ("height", "11")] + e.swatch)
                w.element("text", [("x", num(cx + 28)), ("y", num(cy + 10.5)), ("font-size", "10"), ("fill", Palette.ink)],
                          text: TextFit.fit(e.label, width: columnWidth - 30, size: 10))
                w.end()
            }
            y += Double((section.entries.count + 1) / 2) * lh + 4
        }
        w.element("text", [("x", num(x)), ("y", num(y + 10)), ("font-size", "9"), ("fill", Palette.muted)],
                  text: "cells show a symbol name (monospace), a title, or both; 1 pt = 1 unit")
        y += 16
        w.end()
        return y
    }

    func menuRow(_ w: inout XMLWriter, id: String, x: Double, y: inout Double) {
        var a: XMLWriter.Attributes = [("class", "entry"), ("data-id", id)]
        let badge = catalog.badge(id)
        if let badge { a.append(("data-badge", String(badge))) }
        w.begin("g", a)
        w.element("text", [("x", num(x + 10)), ("y", num(y + 11)), ("font-size", "11"), ("fill", Palette.ink)],
                  text: TextFit.fit(catalog.name(id), width: 150, size: 11))
        if let s = catalog.symbol(id) {
            w.element("text", [("x", num(x + 170)), ("y", num(y + 11)), ("font-size", "9"), ("font-family", Palette.mono), ("fill", Palette.muted)],
                      text: TextFit.fit(s, width: FrameDrawing.panelWidth - 200, size: 9))
        }
        if let badge {
            w.leaf("circle", [("cx", num(x + FrameDrawing.panelWidth - 10)), ("cy", num(y + 7)), ("r", "7"), ("fill", Palette.badge)])
            w.element("text", [("x", num(x + FrameDrawing.panelWidth - 10)), ("y", num(y + 10)), ("font-size", "8"), ("font-weight", "bold"),
                               ("text-anchor", "middle"), ("fill", "#ffffff")], text: String(badge))
        }
        w.end()
        y += FrameDrawing.lineHeight
    }

    /// Dashed leaders from an overflow button or a compressed tab control to its list.
    func drawPointers(_ w: inout XMLWriter) {
        let pointers = menus.map(\.pointer) + tabGroups.map(\.pointer)
        guard !pointers.isEmpty else { return }
        w.begin("g", [("id", "pointers"), ("fill", "none"), ("stroke", Palette.muted), ("stroke-width", "1"), ("stroke-dasharray", "3 3")])
        for p in pointers {
            let sx = screenX + p.from.maxX, sy = screenY + p.from.y + p.from.h / 2
            let ex = panelX - 6, ey = p.y - 4
            let bend = screenX + layout.device.width + FrameDrawing.panelGap / 2
            w.leaf("polyline", [("points", "\(num(sx)),\(num(sy)) \(num(bend)),\(num(sy)) \(num(bend)),\(num(ey)) \(num(ex)),\(num(ey))")])
        }
        w.end()
    }
}
