import CreaseCore

/// What a frame's heading says besides the layout itself.
public struct FrameCaption: Sendable, Equatable {
    public var seq: Int
    public var digest: UInt64
    /// Nanoseconds since the trace started, when the frame comes from a trace.
    public var time: Int64?
    /// The event that caused this layout, when there is one.
    public var event: String?
    /// Glitches this layout shows (frames of a run), one line each under the heading.
    public var glitches: [Glitch]

    public init(seq: Int, digest: UInt64, time: Int64? = nil, event: String? = nil, glitches: [Glitch] = []) {
        self.seq = seq
        self.digest = digest
        self.time = time
        self.event = event
        self.glitches = glitches
    }
}

/// A layout drawn as the device would show it: the screen in its current orientation at
/// true scale (one point is one SVG unit), with a panel beside it for what has no place
/// on the screen (overflow menus, the tabs of a compressed tab control, diagnostics) and
/// a legend. Every element that stands for a layout value carries its id or kind in a
/// `data-` attribute so tests and scripts can find it.
public enum FrameSVG {
    /// `observed`: a rig's observation to draw over the layout it was held against.
    public static func render(_ layout: Layout, app: App, caption: FrameCaption, observed: TraceStory.Observed? = nil) -> String {
        var d = FrameDrawing(layout: layout, catalog: ItemCatalog(app: app), appName: app.name, caption: caption, observed: observed)
        return d.draw()
    }
}

/// Where a diagnostic's callout goes: the frame of the thing its subject names.
enum DiagnosticAnchor {
    static func frame(of subject: String, in layout: Layout, catalog: ItemCatalog) -> Rect? {
        for bar in layout.bars {
            if let item = bar.items.first(where: { $0.id == subject }) { return item.frame }
        }
        for bar in layout.bars where bar.overflow.contains(subject) {
            return bar.items.first { $0.id == "system.overflow" }?.frame ?? bar.frame
        }
        for bar in layout.bars {
            if let item = bar.items.first(where: { $0.tabs?.contains(subject) == true }) { return item.frame }
        }
        if let c = layout.custom.first(where: { $0.id == subject }) { return c.frame }
        if let f = layout.floating.first(where: { $0.id == subject }) { return f.frame }
        if let s = layout.sheet, s.id == subject { return s.frame }
        if let c = layout.columns.first(where: { $0.id == subject }) { return c.frame }
        let bars = layout.bars.filter { $0.id == subject || $0.container == subject }
        if let b = bars.first(where: { $0.role == .vertical }) ?? bars.first { return b.frame }
        if let r = layout.regions.first(where: { $0.kind.rawValue == subject }) { return r.frame }
        // A tab view: where its first shown tab is.
        for tab in catalog.tabs(ofTabView: subject) {
            if let f = frame(of: tab, in: layout, catalog: catalog) { return f }
        }
        return nil
    }
}

private struct FrameDrawing {
    let layout: Layout
    let catalog: ItemCatalog
    let appName: String
    let caption: FrameCaption
    let observed: TraceStory.Observed?

    static let margin = 24.0
    static let panelWidth = 360.0
    static let panelGap = 40.0
    static let lineHeight = 15.0

    let heading: [String]
    let screenX = margin
    /// Below the heading.
    let screenY: Double
    var panelX: Double { screenX + layout.device.width + FrameDrawing.panelGap }

    /// Things listed in the panel that a mark on the screen points to.
    struct Pointer {
        var from: Rect
        var tag: String
        var y = 0.0
    }
    var menus: [(bar: Bar, pointer: Pointer)] = []
    var tabGroups: [(bar: Bar, item: PlacedItem, pointer: Pointer)] = []

    init(layout: Layout, catalog: ItemCatalog, appName: String, caption: FrameCaption, observed: TraceStory.Observed?) {
        self.layout = layout
        self.catalog = catalog
        self.appName = appName
        self.caption = caption
        self.observed = observed
        heading = FrameDrawing.headingLines(layout, appName: appName, caption: caption, observed: observed)
        screenY = FrameDrawing.margin + Double(heading.count) * 18 + 14
        for bar in layout.bars where !bar.overflow.isEmpty {
            let button = bar.items.first { $0.id == "system.overflow" }
            menus.append((bar, Pointer(from: button?.frame ?? bar.frame, tag: "menu \(menus.count + 1)")))
        }
        for bar in layout.bars {
            for item in bar.items where item.tabs != nil {
                tabGroups.append((bar, item, Pointer(from: item.frame, tag: "tabs \(tabGroups.count + 1)")))
            }
        }
    }

    mutating func draw() -> String {
        var panel = XMLWriter(declaration: false)
        let panelBottom = drawPanel(&panel, top: screenY)
        let width = panelX + FrameDrawing.panelWidth + FrameDrawing.margin
        let height = max(screenY + layout.device.height + FrameDrawing.margin, panelBottom + FrameDrawing.margin)

        var w = XMLWriter()
        w.begin("svg", [("xmlns", "http://www.w3.org/2000/svg"), ("width", num(width)), ("height", num(height)),
                        ("viewBox", "0 0 \(num(width)) \(num(height))"), ("font-family", Palette.sans),
                        ("data-seq", String(caption.seq)), ("data-digest", Digest.hex(caption.digest))])
        w.element("title", text: "\(appName) · seq \(caption.seq) · \(Digest.hex(caption.digest))")
        defs(&w)
        w.leaf("rect", [("width", num(width)), ("height", num(height)), ("fill", Palette.page)])
        w.begin("g", [("id", "heading")])
        let firstGlitch = heading.count - caption.glitches.count
        for (i, line) in heading.enumerated() {
            let isGlitch = i >= firstGlitch
            w.element("text", [("x", num(FrameDrawing.margin)), ("y", num(FrameDrawing.margin + 14 + Double(i) * 18)),
                               ("font-size", i == 0 ? "16" : "12"), ("font-weight", i == 0 || isGlitch ? "bold" : "normal"),
                               ("fill", i == 0 ? Palette.ink : isGlitch ? Palette.glitch : Palette.muted)]
                               + (isGlitch ? [("class", "glitch"), ("data-kind", caption.glitches[i - firstGlitch].kind.rawValue)] : []), text: line)
        }
        w.end()
        drawScreen(&w)
        w.begin("g", [("id", "panel")])
        w.append(panel)
        w.end()
        drawPointers(&w)
        return w.finish()
    }

    static func headingLines(_ layout: Layout, appName: String, caption: FrameCaption, observed: TraceStory.Observed?) -> [String] {
        let d = layout.device
        var lines = ["\(appName) · seq \(caption.seq) · digest \(Digest.hex(caption.digest))"]
        var bars = "bars \(layout.barAxis.rawValue)"
        if let e = layout.verticalBarEdge, let s = layout.verticalBarSide { bars += ", vertical edge \(e.rawValue) (\(s.rawValue))" }
        lines.append("\(d.display.rawValue) display · \(d.pose.rawValue) · \(d.orientation.rawValue) · \(d.layoutDirection.rawValue) · "
                     + "\(num(d.width))×\(num(d.height)) pt · \(d.sizeClass.horizontal.rawValue)/\(d.sizeClass.vertical.rawValue) · \(bars)")
        if caption.time != nil || caption.event != nil {
            var parts: [String] = []
            if let t = caption.time { parts.append("t \(Timescale.seconds(t))") }
            if let e = caption.event { parts.append("after \(e)") }
            lines.append(parts.joined(separator: " · "))
        }
        if let o = observed?.result {
            var text = "observation: \(o.verdict.rawValue) against the layout of seq \(o.layoutSeq)"
            if let m = o.matchedSeq, m != o.layoutSeq { text += ", agrees with seq \(m)" }
            lines.append(text + " · \(o.differences.count) difference\(o.differences.count == 1 ? "" : "s")")
        }
        for g in caption.glitches { lines.append(TextFit.fit("⚠ \(g.kind.rawValue) \(g.subject) (\(g.seqText)): \(g.message)", width: 1100, size: 12)) }
        return lines
    }

    func defs(_ w: inout XMLWriter) {
        w.begin("defs")
        w.begin("pattern", [("id", "hatch"), ("width", "8"), ("height", "8"), ("patternUnits", "userSpaceOnUse"),
                            ("patternTransform", "rotate(45)")])
        w.leaf("rect", [("width", "8"), ("height", "8"), ("fill", Palette.region(.division)), ("fill-opacity", "0.25")])
        w.leaf("line", [("x1", "0"), ("y1", "0"), ("x2", "0"), ("y2", "8"), ("stroke", Palette.region(.division)), ("stroke-width", "3")])
        w.end()
        w.begin("pattern", [("id", "custom"), ("width", "6"), ("height", "6"), ("patternUnits", "userSpaceOnUse"),
                            ("patternTransform", "rotate(-45)")])
        w.leaf("rect", [("width", "6"), ("height", "6"), ("fill", Palette.custom), ("fill-opacity", "0.12")])
        w.leaf("line", [("x1", "0"), ("y1", "0"), ("x2", "0"), ("y2", "6"), ("stroke", Palette.custom), ("stroke-width", "1.5"), ("stroke-opacity", "0.6")])
        w.end()
        w.end()
    }

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

    // MARK: - An observation over the layout

    /// Observed frames outlined (dashed); what differs outlined in red on the expected
    /// frame with the differing fields beside it; an expected item the rig did not see, crossed.
    func observation(_ w: inout XMLWriter, _ o: TraceStory.Observed) {
        w.begin("g", [("id", "observation"), ("data-verdict", o.result.verdict.rawValue), ("data-differences", String(o.result.differences.count))])
        for item in o.observation.items ?? [] {
            guard let f = item.frame else { continue }
            w.begin("g", [("class", "observed"), ("data-id", item.id)])
            w.element("title", text: "observed \(item.id) \(num(f.x)),\(num(f.y)) \(num(f.w))×\(num(f.h))")
            w.leaf("rect", rect(f) + [("fill", "none"), ("stroke", Palette.observed), ("stroke-width", "1.5"), ("stroke-dasharray", "3 2")])
            w.end()
        }
        // One marker per subject (an item, a column, a member), on the expected frame where there is one.
        var subjects: [String] = []
        for d in o.result.differences where !subjects.contains(d.subject) { subjects.append(d.subject) }
        for subject in subjects {
            let lines = o.result.differences.filter { $0.subject == subject }
            let anchor = differenceAnchor(subject)
            w.begin("g", [("class", "difference"), ("data-subject", subject)])
            w.element("title", text: lines.map(\.description).joined(separator: "\n"))
            let f = anchor ?? Rect(x: 8, y: 8, w: 0, h: 0)
            if anchor != nil {
                w.leaf("rect", rect(f) + [("fill", Palette.difference), ("fill-opacity", "0.12"), ("stroke", Palette.difference), ("stroke-width", "2")])
                if lines.contains(where: { $0.observed == .null }) {
                    w.leaf("path", [("d", "M\(num(f.x)),\(num(f.y)) L\(num(f.maxX)),\(num(f.maxY)) M\(num(f.maxX)),\(num(f.y)) L\(num(f.x)),\(num(f.maxY))"),
                                    ("stroke", Palette.difference), ("stroke-width", "1.5")])
                }
            }
            w.end()
        }
        w.end()
    }

    /// The expected frame a difference is about, or the observed one for something unexpected.
    func differenceAnchor(_ subject: String) -> Rect? {
        func inner(_ s: String) -> String {
            var id = String(s.dropFirst(s.hasPrefix("items[") ? 6 : 8).dropLast())
            if let hash = id.lastIndex(of: "#") { id = String(id[..<hash]) }
            return id
        }
        if subject.hasPrefix("items[") {
            let id = inner(subject)
            if let f = layout.bars.lazy.flatMap(\.items).first(where: { $0.id == id })?.frame { return f }
            return observed?.observation.items?.first { $0.id == id }?.frame
        }
        if subject.hasPrefix("columns[") { return layout.columns.first { $0.id == inner(subject) }?.frame }
        if subject == "sheet" { return layout.sheet?.frame }
        if subject.hasPrefix("overflow[") { return layout.bars.lazy.flatMap(\.items).first { $0.id == "system.overflow" }?.frame }
        if subject == "tabBar" { return layout.bars.first { $0.tabBar != nil }?.frame }
        if subject == "barAxis" || subject == "verticalBarSide" { return layout.bars.first { $0.role == .vertical }?.frame }
        return nil
    }

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

/// Times printed for people: seconds with millisecond precision, without Foundation's
/// locale-dependent formatting.
enum Timescale {
    static func seconds(_ ns: Int64) -> String { decimals3(Double(ns) / 1e9) + " s" }

    static func decimals3(_ v: Double) -> String {
        let thousandths = Int64((v * 1000).rounded())
        let a = abs(thousandths), frac = String(a % 1000)
        return (thousandths < 0 ? "-" : "") + String(a / 1000) + "." + String(repeating: "0", count: 3 - frac.count) + frac
    }
}
