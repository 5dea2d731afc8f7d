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

struct FrameDrawing {
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
}
