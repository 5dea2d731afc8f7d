import CreaseCore

/// The screen of a frame: the window, columns, safe area, custom bars, regions, the bars
/// and their items, and the shapes they are drawn with.
extension FrameDrawing {
    // MARK: - The screen

    func drawScreen(_ w: inout XMLWriter) {
        let d = layout.device
        w.begin("g", [("id", "screen"), ("transform", "translate(\(num(screenX)) \(num(screenY)))"),
                      ("data-display", d.display.rawValue), ("data-orientation", d.orientation.rawValue)])
        w.leaf("rect", [("class", "outline"), ("x", "-6"), ("y", "-6"), ("width", num(d.width + 12)), ("height", num(d.height + 12)),
                        ("rx", "34"), ("fill", Palette.bezel)])
        w.leaf("rect", [("x", "0"), ("y", "0"), ("width", num(d.width)), ("height", num(d.height)), ("rx", "28"), ("fill", Palette.screen)])
        otherApp(&w)
        for c in layout.columns { column(&w, c) }
        safeArea(&w)
        if let i = layout.inspector {
            w.begin("g", [("class", "inspector"), ("data-presentation", i.presentation.rawValue)])
            box(&w, i.frame, fill: Palette.role(.inspector), opacity: 0.08, stroke: Palette.role(.inspector), dash: nil)
            label(&w, "inspector (\(i.presentation.rawValue))", at: i.frame, color: Palette.role(.inspector))
            w.end()
        }
        for c in layout.custom { custom(&w, c) }
        let under: Set<BarRole> = [.sheet, .keyboardAccessory]
        for bar in layout.bars where !under.contains(bar.role) { self.bar(&w, bar) }
        for f in layout.floating { floating(&w, f) }
        if let s = layout.sheet {
            w.begin("g", [("class", "sheet"), ("data-id", s.id), ("data-placement", s.placement.rawValue), ("data-axis", s.axis.rawValue)])
            w.leaf("rect", [("width", num(d.width)), ("height", num(d.height)), ("rx", "28"), ("fill", "#000000"), ("fill-opacity", "0.18")])
            w.leaf("rect", [("x", num(s.frame.x + 3)), ("y", num(s.frame.y + 4)), ("width", num(s.frame.w)), ("height", num(s.frame.h)),
                            ("rx", "14"), ("fill", "#000000"), ("fill-opacity", "0.15")])
            w.leaf("rect", [("x", num(s.frame.x)), ("y", num(s.frame.y)), ("width", num(s.frame.w)), ("height", num(s.frame.h)),
                            ("rx", "14"), ("fill", Palette.screen), ("stroke", Palette.role(.sheet)), ("stroke-width", "1.5")])
            label(&w, "sheet \(s.id) · \(s.placement.rawValue) · bars \(s.axis.rawValue)", at: s.frame, color: Palette.role(.sheet))
            w.end()
            for bar in layout.bars where bar.role == .sheet { self.bar(&w, bar) }
        }
        for r in layout.regions where r.kind == .keyboard { region(&w, r) }
        for bar in layout.bars where bar.role == .keyboardAccessory { self.bar(&w, bar) }
        for r in layout.regions where r.kind != .keyboard { region(&w, r) }
        if let observed { observation(&w, observed) }
        callouts(&w)
        w.end()
    }

    func otherApp(_ w: inout XMLWriter) {
        let d = layout.device, win = d.window
        let strips = [Rect(x: 0, y: 0, w: win.x, h: d.height), Rect(x: win.maxX, y: 0, w: d.width - win.maxX, h: d.height),
                      Rect(x: win.x, y: 0, w: win.w, h: win.y), Rect(x: win.x, y: win.maxY, w: win.w, h: d.height - win.maxY)]
        for s in strips where !s.isEmpty {
            w.begin("g", [("class", "otherApp")])
            w.leaf("rect", rect(s) + [("fill", Palette.otherApp)])
            centered(&w, "another app", in: s, size: 12, color: Palette.muted)
            w.end()
        }
    }

    func column(_ w: inout XMLWriter, _ c: ColumnInfo) {
        w.begin("g", [("class", "column"), ("data-id", c.id)])
        box(&w, c.frame, fill: "none", opacity: 1, stroke: Palette.column, dash: "2 3")
        var text = "column \(c.id) · \(c.sizeClass.horizontal.rawValue)/\(c.sizeClass.vertical.rawValue)"
        if let e = c.verticalBarEdge { text += " · edge \(e.rawValue)" }
        let y = c.frame.maxY - 40
        w.element("text", [("x", num(c.frame.x + 6)), ("y", num(y)), ("font-size", "9"), ("fill", Palette.column)],
                  text: TextFit.fit(text, width: c.frame.w - 12, size: 9))
        w.end()
    }

    func safeArea(_ w: inout XMLWriter) {
        let win = layout.device.window, s = layout.safeArea
        let (left, right) = layout.device.layoutDirection == .ltr ? (s.leading, s.trailing) : (s.trailing, s.leading)
        let r = Rect(x: win.x + left, y: win.y + s.top, w: win.w - left - right, h: win.h - s.top - s.bottom)
        guard !r.isEmpty else { return }
        w.leaf("rect", [("class", "safeArea")] + rect(r) + [("fill", "none"), ("stroke", Palette.safeArea), ("stroke-width", "1"),
                                                         ("stroke-dasharray", "6 4")])
    }

    func custom(_ w: inout XMLWriter, _ c: CustomInfo) {
        let collides = !c.collides.isEmpty
        w.begin("g", [("class", "custom"), ("data-id", c.id), ("data-collides", c.collides.map(\.rawValue).joined(separator: " "))])
        w.element("title", text: "custom bar \(c.id)" + (collides ? ", overlaps " + c.collides.map(\.rawValue).joined(separator: ", ") : ""))
        w.leaf("rect", rect(c.frame) + [("fill", "url(#custom)"), ("stroke", collides ? Palette.collision : Palette.custom),
                                        ("stroke-width", collides ? "2" : "1.5"), ("stroke-dasharray", "5 3")])
        var text = "custom \(c.id)"
        if collides { text += " · overlaps " + c.collides.map(\.rawValue).joined(separator: ", ") }
        centered(&w, text, in: c.frame, size: 10, color: collides ? Palette.collision : Palette.custom)
        w.end()
    }

    func floating(_ w: inout XMLWriter, _ f: FloatingInfo) {
        w.begin("g", [("class", "floating"), ("data-id", f.id)])
        w.element("title", text: "floating button \(f.id)")
        w.leaf("circle", [("cx", num(f.frame.x + f.frame.w / 2)), ("cy", num(f.frame.y + f.frame.h / 2)),
                          ("r", num(min(f.frame.w, f.frame.h) / 2)), ("fill", Palette.floating), ("fill-opacity", "0.85")])
        centered(&w, f.id, in: f.frame, size: 8, color: "#ffffff")
        w.end()
    }

    func region(_ w: inout XMLWriter, _ r: Region) {
        let f = r.frame
        w.begin("g", [("class", "region"), ("data-kind", r.kind.rawValue)])
        w.element("title", text: "\(r.kind.rawValue) \(num(f.x)),\(num(f.y)) \(num(f.w))×\(num(f.h))")
        switch r.kind {
        case .statusBar:
            w.leaf("rect", rect(f) + [("fill", Palette.region(.statusBar)), ("fill-opacity", "0.35")])
            centered(&w, f.w >= f.h ? "status bar" : "status", in: f, size: 8, color: Palette.ink)
        case .dynamicIsland:
            w.leaf("rect", rect(f) + [("rx", num(min(f.w, f.h) / 2)), ("fill", Palette.region(.dynamicIsland))])
        case .division:
            w.leaf("rect", rect(f) + [("fill", "url(#hatch)")])
            centered(&w, "fold", in: f, size: 9, color: Palette.ink)
        case .keyboard:
            w.leaf("rect", rect(f) + [("fill", Palette.region(.keyboard)), ("fill-opacity", "0.55")])
            centered(&w, "keyboard", in: f, size: 14, color: "#ffffff")
        case .pip:
            w.leaf("rect", rect(f) + [("rx", "8"), ("fill", Palette.region(.pip)), ("fill-opacity", "0.9")])
            centered(&w, "Picture in Picture", in: f, size: 10, color: "#ffffff")
        }
        w.end()
    }

    // MARK: - Bars and items

    func bar(_ w: inout XMLWriter, _ bar: Bar) {
        var attributes: XMLWriter.Attributes = [("class", "bar"), ("data-id", bar.id), ("data-container", bar.container),
                                                ("data-role", bar.role.rawValue), ("data-axis", bar.axis.rawValue), ("data-edge", bar.edge.rawValue),
                                                ("data-background", bar.background ? "opaque" : "none")]
        if let t = bar.tabBar { attributes.append(("data-tab-bar", t.rawValue)) }
        w.begin("g", attributes)
        w.element("title", text: "\(bar.role.rawValue) bar \(bar.id) · \(bar.axis.rawValue) · \(bar.edge.rawValue)"
                  + (bar.tabBar.map { " · tab bar \($0.rawValue)" } ?? ""))
        w.leaf("rect", rect(bar.frame) + [("fill", Palette.role(bar.role)), ("fill-opacity", bar.background ? "0.32" : "0.14"),
                                          ("stroke", Palette.axis(bar.axis)), ("stroke-width", num(Palette.axisWidth(bar.axis)))])
        for item in bar.items { self.item(&w, item, in: bar) }
        w.end()
    }

    func item(_ w: inout XMLWriter, _ item: PlacedItem, in bar: Bar) {
        let f = item.frame
        var attributes: XMLWriter.Attributes = [("class", "item"), ("data-id", item.id), ("data-shows", item.shows.rawValue)]
        if !bar.frame.contains(f) { attributes.append(("data-outside-bar", "true")) }
        if let b = item.badge { attributes.append(("data-badge", String(b))) }
        if let tabs = item.tabs { attributes.append(("data-tabs", tabs.joined(separator: " "))) }
        w.begin("g", attributes)
        let title = catalog.title(item.id), symbol = catalog.symbol(item.id)
        var tip = item.id
        if let title { tip += " · \"\(title)\"" }
        if let symbol { tip += " · \(symbol)" }
        tip += " · shows \(item.shows.rawValue)"
        if let b = item.badge { tip += " · badge \(b)" }
        if let tabs = item.tabs { tip += " · holds " + tabs.map(catalog.name).joined(separator: ", ") }
        let spacer = title == nil && symbol == nil && !item.id.hasPrefix("system.")
        // An item drawn outside its own bar is a glitch worth seeing at a glance.
        let outside = !bar.frame.contains(f)
        if outside { tip += " · OUTSIDE its bar" }
        w.element("title", text: tip)
        var box = rect(f) + [("rx", "6"), ("fill", spacer ? "none" : Palette.screen), ("fill-opacity", "0.92"),
                             ("stroke", outside ? Palette.collision : Palette.role(bar.role)), ("stroke-width", outside ? "2" : "1")]
        if spacer || outside { box.append(("stroke-dasharray", outside ? "4 2" : "2 2")) }
        w.leaf("rect", box)

        // What the cell says: what the device shows (symbol, title or both), the symbol in
        // monospace; an overflow button or a compressed tab control names its list in the panel.
        var lines: [(String, Bool)] = []   // (text, is a symbol name)
        if let m = menus.first(where: { $0.bar.id == bar.id }), item.id == "system.overflow" {
            lines = [("•••", false), (m.pointer.tag, false)]
        } else if let g = tabGroups.first(where: { $0.bar.id == bar.id && $0.item.id == item.id }) {
            lines = [("\(item.tabs?.count ?? 0) tabs", false), (g.pointer.tag, false)]
        } else if spacer {
            lines = [(item.id, false)]
        } else {
            let sym = symbol.map { ($0, true) }, tit = (title ?? item.id, false)
            switch item.shows {
            case .symbol: lines = [sym ?? tit]
            case .title: lines = [tit]
            case .symbolAndTitle: lines = sym.map { [$0, tit] } ?? [tit]
            }
        }
        let size = 8.0, pitch = 10.0
        let fitting = max(1, Int((f.h - 4) / pitch))
        if lines.count > fitting { lines = Array(lines.suffix(fitting)) }
        // A long symbol name breaks after its dots, into the lines the cell has to spare.
        if let i = lines.firstIndex(where: \.1) {
            let parts = TextFit.wrapSymbol(lines[i].0, width: f.w - 4, size: size - 0.5, lines: fitting - lines.count + 1)
            lines.replaceSubrange(i...i, with: parts.map { ($0, true) })
        }
        let top = f.y + f.h / 2 - Double(lines.count - 1) * pitch / 2 + size * 0.35
        for (i, (text, isSymbol)) in lines.enumerated() {
            let color = isSymbol ? Palette.role(bar.role) : spacer ? Palette.muted : Palette.ink
            var a: XMLWriter.Attributes = [("x", num(f.x + f.w / 2)), ("y", num(top + Double(i) * pitch)), ("font-size", num(isSymbol ? size - 0.5 : size)),
                                           ("text-anchor", "middle"), ("fill", color)]
            if isSymbol { a.append(("font-family", Palette.mono)) }
            let fitted = TextFit.fit(text, width: f.w - 3, size: isSymbol ? size - 0.5 : size)
            if !fitted.isEmpty { w.element("text", a, text: fitted) }
        }
        if let b = item.badge {
            let cx = f.maxX - 3, cy = f.y + 3
            w.leaf("circle", [("class", "badge"), ("cx", num(cx)), ("cy", num(cy)), ("r", "7"), ("fill", Palette.badge)])
            w.element("text", [("x", num(cx)), ("y", num(cy + 3)), ("font-size", "8"), ("font-weight", "bold"), ("text-anchor", "middle"),
                               ("fill", "#ffffff")], text: String(b))
        }
        w.end()
    }

    // MARK: - Shapes

    func rect(_ r: Rect) -> XMLWriter.Attributes {
        [("x", num(r.x)), ("y", num(r.y)), ("width", num(r.w)), ("height", num(r.h))]
    }

    func box(_ w: inout XMLWriter, _ r: Rect, fill: String, opacity: Double, stroke: String, dash: String?) {
        var a = rect(r) + [("fill", fill), ("fill-opacity", num(opacity)), ("stroke", stroke), ("stroke-width", "1")]
        if let dash { a.append(("stroke-dasharray", dash)) }
        w.leaf("rect", a)
    }

    /// A caption just inside a box's bottom edge (its top holds bars).
    func label(_ w: inout XMLWriter, _ s: String, at r: Rect, color: String) {
        w.element("text", [("x", num(r.x + 8)), ("y", num(r.maxY - 8)), ("font-size", "10"), ("fill", color)],
                  text: TextFit.fit(s, width: r.w - 16, size: 10))
    }

    /// Text centred in a box, turned upright along a tall narrow box, cut to fit.
    func centered(_ w: inout XMLWriter, _ s: String, in r: Rect, size: Double, color: String) {
        let cx = r.x + r.w / 2, cy = r.y + r.h / 2
        let tall = r.h > r.w * 1.5
        let room = (tall ? r.h : r.w) - 6
        let text = TextFit.fit(s, width: room, size: size)
        guard !text.isEmpty, (tall ? r.w : r.h) >= size else { return }
        var a: XMLWriter.Attributes = [("x", num(cx)), ("y", num(cy + size * 0.35)), ("font-size", num(size)), ("text-anchor", "middle"), ("fill", color)]
        if tall { a.append(("transform", "rotate(-90 \(num(cx)) \(num(cy)))")) }
        w.element("text", a, text: text)
    }
}
