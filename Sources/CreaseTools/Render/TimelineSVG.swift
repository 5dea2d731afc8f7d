import CreaseCore

/// A run drawn over time: the hinge angle with the pose bands behind it and the pose
/// thresholds across it; lanes for orientation, keyboard, Picture in Picture, Live
/// Activities and layout changes; marks through everything; and the per-event latency
/// below, against the budget. Long runs are reduced per pixel column (the extremes of
/// each column are kept), so a 1 kHz trace still makes a small file.
public enum TimelineSVG {
    /// `span`: the nanoseconds the plot's width stands for, when two runs share one scale
    /// (a trace and its replay on the rig); at least the story's own.
    public static func render(_ story: TraceStory, span: UInt64? = nil) -> String {
        var d = TimelineDrawing(story: story, span: span)
        return d.draw()
    }

    /// The nanoseconds a story's timeline spans on its own.
    public static func span(of story: TraceStory) -> UInt64 { max(story.end - story.start.t, 1_000_000) }
}

/// The drawing of one timeline (its lanes here, the latency plot in TimelineSVG+Latency.swift).
struct TimelineDrawing {
    let story: TraceStory
    static let width = 1200.0
    static let left = 140.0
    static let right = 28.0
    var plotWidth: Double { TimelineDrawing.width - TimelineDrawing.left - TimelineDrawing.right }

    let t0: UInt64
    let span: UInt64

    // Vertical layout, top to bottom.
    static let hingeTop = 78.0
    static let hingeHeight = 220.0
    static let laneHeight = 20.0
    static let laneGap = 6.0
    var lanesTop: Double { TimelineDrawing.hingeTop + TimelineDrawing.hingeHeight + 22 }
    static let lanes = ["orientation", "keyboard", "pip", "liveActivities", "layout", "glitches", "observations", "marks"]
    var latencyTop: Double { lanesTop + Double(TimelineDrawing.lanes.count) * (TimelineDrawing.laneHeight + TimelineDrawing.laneGap) + 26 }
    static let latencyHeight = 130.0
    var axisY: Double { latencyTop + TimelineDrawing.latencyHeight }
    var height: Double { axisY + 80 }

    init(story: TraceStory, span: UInt64? = nil) {
        self.story = story
        t0 = story.start.t
        // At least a millisecond, so a run with one instant still has a width.
        self.span = max(TimelineSVG.span(of: story), span ?? 0)
    }

    func x(_ t: UInt64) -> Double { TimelineDrawing.left + Double(t &- t0) / Double(span) * plotWidth }
    func angleY(_ a: Double) -> Double { TimelineDrawing.hingeTop + (1 - a / 180) * TimelineDrawing.hingeHeight }
    func laneY(_ name: String) -> Double {
        lanesTop + Double(TimelineDrawing.lanes.firstIndex(of: name) ?? 0) * (TimelineDrawing.laneHeight + TimelineDrawing.laneGap)
    }

    /// The story's points with the start in front: the state holds from each point's t to the next one's.
    var all: [TraceStory.Point] { [story.start] + story.points }

    mutating func draw() -> String {
        var w = XMLWriter()
        let W = TimelineDrawing.width
        w.begin("svg", [("xmlns", "http://www.w3.org/2000/svg"), ("width", num(W)), ("height", num(height)),
                        ("viewBox", "0 0 \(num(W)) \(num(height))"), ("font-family", Palette.sans),
                        ("data-events", String(story.points.count)), ("data-span-ns", String(span))])
        w.element("title", text: "\(story.title) · timeline")
        w.leaf("rect", [("width", num(W)), ("height", num(height)), ("fill", "#ffffff")])
        heading(&w)
        grid(&w)
        hinge(&w)
        lanes(&w)
        latency(&w)
        observations(&w)
        glitches(&w)
        marks(&w)
        axis(&w)
        legend(&w)
        return w.finish()
    }

    func heading(_ w: inout XMLWriter) {
        let changes = story.points.filter(\.layoutChanged).count
        w.begin("g", [("id", "heading")])
        w.element("text", [("x", "24"), ("y", "30"), ("font-size", "16"), ("font-weight", "bold"), ("fill", Palette.ink)], text: story.title)
        var facts = "\(story.points.count) events over \(Timescale.seconds(Int64(span))) · \(changes) layout changes · \(story.marks.count) marks"
        if let last = story.points.last { facts += " · seq \(story.start.seq)…\(last.seq)" }
        facts += " · \(story.profile.name)"
        w.element("text", [("x", "24"), ("y", "50"), ("font-size", "12"), ("fill", Palette.muted)], text: facts)
        w.end()
    }

    /// Vertical lines at each time tick, through every panel.
    func grid(_ w: inout XMLWriter) {
        w.begin("g", [("id", "grid"), ("stroke", "#e2e8f0"), ("stroke-width", "1")])
        for t in ticks() {
            w.leaf("line", [("x1", num(x(t))), ("y1", num(TimelineDrawing.hingeTop)), ("x2", num(x(t))), ("y2", num(axisY))])
        }
        w.end()
    }

    // MARK: - The hinge

    func hinge(_ w: inout XMLWriter) {
        let top = TimelineDrawing.hingeTop, h = TimelineDrawing.hingeHeight, L = TimelineDrawing.left
        w.begin("g", [("id", "hinge")])
        w.element("text", [("x", "24"), ("y", num(top - 8)), ("font-size", "12"), ("font-weight", "bold"), ("fill", Palette.ink)], text: "hinge angle and pose")
        for (i, a) in [0.0, 90, 180].enumerated() {
            w.element("text", [("x", num(L - 8)), ("y", num(angleY(a) + 4)), ("font-size", "10"), ("text-anchor", "end"), ("fill", Palette.muted)],
                      text: ["0° shut", "90°", "180° flat"][i])
        }
        // The pose over time: a band per stretch of one pose, one path per pose.
        let stretches = segments(\.pose)
        for pose in Pose.allCases {
            let mine = stretches.filter { $0.value == pose }
            guard !mine.isEmpty else { continue }
            let d = mine.map { "M\(num(x($0.from))) \(num(top))h\(num(max(x($0.to) - x($0.from), 0.5)))v\(num(h))H\(num(x($0.from)))z" }
            w.leaf("path", [("class", "pose-band"), ("data-pose", pose.rawValue), ("data-stretches", String(mine.count)),
                            ("d", d.joined()), ("fill", Palette.pose(pose))])
        }
        // Thresholds: where a pose changes, each with its hysteresis band.
        let p = story.profile
        for (name, threshold) in [("partiallyOpen", p.partialOpenThreshold), ("fullyOpen", p.fullyOpenThreshold)] {
            let y1 = angleY(threshold + p.hingeHysteresis), y2 = angleY(threshold - p.hingeHysteresis)
            w.begin("g", [("class", "threshold"), ("data-angle", num(threshold)), ("data-hysteresis", num(p.hingeHysteresis))])
            w.leaf("rect", [("x", num(L)), ("y", num(y1)), ("width", num(plotWidth)), ("height", num(y2 - y1)), ("fill", "#0f172a"), ("fill-opacity", "0.06")])
            w.leaf("line", [("x1", num(L)), ("y1", num(angleY(threshold))), ("x2", num(L + plotWidth)), ("y2", num(angleY(threshold))),
                            ("stroke", Palette.muted), ("stroke-width", "1"), ("stroke-dasharray", "4 3")])
            w.element("text", [("x", num(L - 8)), ("y", num(angleY(threshold) + 4)), ("font-size", "9"), ("text-anchor", "end"), ("fill", Palette.muted)],
                      text: "\(name) \(num(threshold))°±\(num(p.hingeHysteresis))")
            w.end()
        }
        w.leaf("rect", [("x", num(L)), ("y", num(top)), ("width", num(plotWidth)), ("height", num(h)), ("fill", "none"), ("stroke", "#94a3b8")])
        w.leaf("polyline", [("class", "angle"), ("points", anglePoints()), ("fill", "none"), ("stroke", Palette.angle), ("stroke-width", "1.5"),
                            ("stroke-linejoin", "round")])
        w.end()
    }

    /// The angle as a line. Within one pixel column only the first, lowest, highest and
    /// last samples are kept (in time order), so every excursion stays visible.
    func anglePoints() -> String {
        var out: [(Double, Double)] = []
        var column = -1
        var bucket: [(t: UInt64, a: Double)] = []
        func flush() {
            guard let first = bucket.first, let last = bucket.last else { return }
            var keep = [first]
            if let lo = bucket.min(by: { $0.a < $1.a }), let hi = bucket.max(by: { $0.a < $1.a }) {
                keep += lo.t <= hi.t ? [lo, hi] : [hi, lo]
            }
            keep.append(last)
            for k in keep where out.last.map({ $0 != (x(k.t), angleY(k.a)) }) ?? true { out.append((x(k.t), angleY(k.a))) }
            bucket.removeAll(keepingCapacity: true)
        }
        for p in all {
            let c = Int(x(p.t))
            if c != column { flush(); column = c }
            bucket.append((p.t, p.angle))
        }
        flush()
        // The last angle holds to the end of the run.
        if let last = all.last, story.end > last.t { out.append((x(story.end), angleY(last.angle))) }
        return out.map { "\(num($0.0)),\(num($0.1))" }.joined(separator: " ")
    }

    // MARK: - Lanes

    func lanes(_ w: inout XMLWriter) {
        w.begin("g", [("id", "lanes")])
        lane(&w, "orientation", title: "orientation", segments(\.orientation).map { ($0.from, $0.to, $0.value.rawValue, orientationColor($0.value)) })
        lane(&w, "keyboard", title: "keyboard", segments(\.keyboard).filter(\.value).map { ($0.from, $0.to, "visible", Palette.region(.keyboard)) })
        lane(&w, "pip", title: "Picture in Picture", segments(\.pip).filter(\.value).map { ($0.from, $0.to, "active", Palette.region(.pip)) })
        lane(&w, "liveActivities", title: "Live Activities", segments(\.liveActivities).filter { $0.value > 0 }.map {
            ($0.from, $0.to, String($0.value), "#9333ea")
        })
        // Layout changes: a tick at each new digest.
        let y = laneY("layout"), h = TimelineDrawing.laneHeight
        w.begin("g", [("class", "lane"), ("data-lane", "layout")])
        laneTitle(&w, "layout changes", y: y)
        // One tick per pixel column is all the eye can tell apart.
        let changes = story.points.filter(\.layoutChanged)
        let columns = Self.columns(changes.map { x($0.t) })
        w.leaf("path", [("class", "changes"), ("data-count", String(changes.count)), ("data-ticks", String(columns.count)),
                        ("d", columns.map { "M\(num($0)) \(num(y + 2))v\(num(h - 4))" }.joined()),
                        ("stroke", Palette.layoutChange), ("stroke-width", "1.5")])
        w.end()
        w.end()
    }

    /// The distinct pixel columns of ascending positions, each at its column's middle.
    static func columns(_ xs: [Double]) -> [Double] {
        var out: [Double] = []
        for px in xs {
            let c = px.rounded(.down) + 0.5
            if out.last != c { out.append(c) }
        }
        return out
    }

    func lane(_ w: inout XMLWriter, _ name: String, title: String, _ spans: [(from: UInt64, to: UInt64, label: String, color: String)]) {
        let y = laneY(name), h = TimelineDrawing.laneHeight
        w.begin("g", [("class", "lane"), ("data-lane", name)])
        laneTitle(&w, title, y: y)
        for s in spans {
            let x1 = x(s.from), width = max(x(s.to) - x1, 1)
            w.begin("g", [("class", "span"), ("data-value", s.label), ("data-from", String(s.from)), ("data-to", String(s.to))])
            w.leaf("rect", [("x", num(x1)), ("y", num(y)), ("width", num(width)), ("height", num(h)), ("rx", "3"), ("fill", s.color), ("fill-opacity", "0.8")])
            let text = TextFit.fit(s.label, width: width - 6, size: 10)
            if !text.isEmpty {
                w.element("text", [("x", num(x1 + 4)), ("y", num(y + 14)), ("font-size", "10"), ("fill", "#ffffff")], text: text)
            }
            w.end()
        }
        w.end()
    }

    func laneTitle(_ w: inout XMLWriter, _ s: String, y: Double) {
        w.leaf("rect", [("x", num(TimelineDrawing.left)), ("y", num(y)), ("width", num(plotWidth)), ("height", num(TimelineDrawing.laneHeight)),
                        ("fill", "#f8fafc"), ("stroke", "#e2e8f0")])
        w.element("text", [("x", num(TimelineDrawing.left - 8)), ("y", num(y + 14)), ("font-size", "11"), ("text-anchor", "end"), ("fill", Palette.ink)], text: s)
    }

    func orientationColor(_ o: Orientation) -> String {
        switch o {
        case .portrait: "#0369a1"
        case .portraitUpsideDown: "#0e7490"
        case .landscapeLeft: "#b45309"
        case .landscapeRight: "#be123c"
        }
    }

    /// Stretches of time over which one value of the state holds, from the start to the end of the run.
    func segments<V: Equatable>(_ value: KeyPath<TraceStory.Point, V>) -> [(from: UInt64, to: UInt64, value: V)] {
        var out: [(from: UInt64, to: UInt64, value: V)] = []
        for p in all {
            if let last = out.last, last.value == p[keyPath: value] { continue }
            if !out.isEmpty { out[out.count - 1].to = p.t }
            out.append((p.t, p.t, p[keyPath: value]))
        }
        if !out.isEmpty { out[out.count - 1].to = t0 + span }
        return out
    }

    // MARK: - Observations

    /// A tick per observation in its verdict's colour; each mismatch also a red flag with a
    /// line through every panel, like a mark, so it cannot be missed in a long run.
    func observations(_ w: inout XMLWriter) {
        let y = laneY("observations"), h = TimelineDrawing.laneHeight
        w.begin("g", [("class", "lane"), ("data-lane", "observations")])
        laneTitle(&w, "observations", y: y)
        for verdict in Verdict.allCases {
            let seen = story.observations.filter { $0.result.verdict == verdict }
            let columns = Self.columns(seen.map { x($0.t) })
            w.leaf("path", [("class", "verdicts"), ("data-verdict", verdict.rawValue), ("data-count", String(seen.count)),
                            ("d", columns.map { "M\(num($0)) \(num(y + 2))v\(num(h - 4))" }.joined()),
                            ("stroke", Palette.verdict(verdict)), ("stroke-width", "1.5")])
        }
        for o in story.observations where o.result.verdict == .mismatch {
            let px = x(o.t)
            let first = o.result.differences.first.map { ": " + $0.description } ?? ""
            w.begin("g", [("class", "mismatch"), ("data-seq", String(o.seq)), ("data-differences", String(o.result.differences.count))])
            w.element("title", text: "mismatch at seq \(o.seq), \(Timescale.seconds(Int64(o.t &- t0))), \(o.result.differences.count) differences\(first)")
            w.leaf("line", [("x1", num(px)), ("y1", num(TimelineDrawing.hingeTop)), ("x2", num(px)), ("y2", num(axisY)),
                            ("stroke", Palette.verdict(.mismatch)), ("stroke-width", "1"), ("stroke-opacity", "0.5")])
            w.leaf("path", [("d", "M\(num(px)),\(num(y + 2)) l8,4 l-8,4 z"), ("fill", Palette.verdict(.mismatch))])
            w.end()
        }
        w.end()
    }

    // MARK: - Glitches

    /// One red span per glitch, from its first to its last time, labelled with its kind;
    /// glitches of one kind that start in the same pixel column are drawn once, with their count.
    func glitches(_ w: inout XMLWriter) {
        let y = laneY("glitches"), h = TimelineDrawing.laneHeight
        w.begin("g", [("class", "lane"), ("data-lane", "glitches"), ("data-count", String(story.glitches.count))])
        laneTitle(&w, "glitches", y: y)
        var groups: [(column: Double, glitches: [Glitch])] = []
        for g in story.glitches {
            let column = x(g.firstT).rounded(.down)
            if let i = groups.lastIndex(where: { $0.column == column && $0.glitches[0].kind == g.kind }) {
                groups[i].glitches.append(g)
            } else {
                groups.append((column, [g]))
            }
        }
        for (_, group) in groups {
            let g = group[0]
            let x1 = x(g.firstT), width = max(x(group.map(\.lastT).max() ?? g.lastT) - x1, 2)
            w.begin("g", [("class", "glitch"), ("data-kind", g.kind.rawValue), ("data-subject", g.subject), ("data-seq", "\(g.firstSeq)-\(g.lastSeq)"),
                          ("data-n", String(group.count))])
            let more = group.count > 1 ? " (and \(group.count - 1) more \(g.kind.rawValue) here)" : ""
            w.element("title", text: "\(g.kind.rawValue) \(g.subject), \(g.seqText): \(g.message)\(more)")
            w.leaf("rect", [("x", num(x1)), ("y", num(y + 2)), ("width", num(width)), ("height", num(h - 4)), ("fill", Palette.glitch)])
            w.end()
        }
        w.end()
    }

    // MARK: - Marks, axis, legend

    func marks(_ w: inout XMLWriter) {
        let y = laneY("marks")
        w.begin("g", [("class", "lane"), ("data-lane", "marks")])
        laneTitle(&w, "marks", y: y)
        // Marks that fall in one pixel column are drawn as one (a campaign's 13,568 resets,
        // each a load mark, were 25 MB of the page); its tooltip counts them.
        var columns: [(first: TraceStory.Mark, last: TraceStory.Mark, count: Int)] = []
        for m in story.marks {
            if let c = columns.last, x(c.first.t).rounded(.down) == x(m.t).rounded(.down) {
                columns[columns.count - 1].last = m
                columns[columns.count - 1].count += 1
            } else {
                columns.append((m, m, 1))
            }
        }
        for (i, column) in columns.enumerated() {
            let m = column.first
            let px = x(m.t)
            // A label runs up to the next mark (or the plot's end), and is left to the tooltip if there is no room.
            let next = i + 1 < columns.count ? x(columns[i + 1].first.t) : TimelineDrawing.left + plotWidth
            let room = min(next - px - 14, 240)
            var attributes = [("class", "mark"), ("data-seq", String(m.seq)), ("data-label", m.label)]
            if column.count > 1 { attributes.append(("data-count", String(column.count))) }
            w.begin("g", attributes)
            w.element("title", text: column.count == 1 ? "mark at seq \(m.seq), \(Timescale.seconds(Int64(m.t &- t0))): \(m.label)"
                      : "\(column.count) marks at seq \(m.seq)…\(column.last.seq), from \(Timescale.seconds(Int64(m.t &- t0))): \(m.label) … \(column.last.label)")
            w.leaf("line", [("x1", num(px)), ("y1", num(TimelineDrawing.hingeTop)), ("x2", num(px)), ("y2", num(axisY)), ("stroke", Palette.mark),
                            ("stroke-width", "1"), ("stroke-dasharray", "2 3")])
            w.leaf("path", [("d", "M\(num(px)),\(num(y + 2)) l8,4 l-8,4 z"), ("fill", Palette.mark)])
            let label = TextFit.fit(m.label, width: room, size: 10)
            if !label.isEmpty {
                w.element("text", [("x", num(px + 10)), ("y", num(y + 14)), ("font-size", "10"), ("fill", Palette.mark)], text: label)
            }
            w.end()
        }
        w.end()
    }

    /// Tick times: a step of 1, 2 or 5 times a power of ten, at most ten ticks.
    func ticks() -> [UInt64] {
        var step: UInt64 = 1
        outer: while true {
            for m: UInt64 in [1, 2, 5] where span / (step * m) <= 10 {
                step *= m
                break outer
            }
            step *= 10
        }
        return stride(from: UInt64(0), through: span, by: Int(step)).map { t0 + $0 }
    }

    func axis(_ w: inout XMLWriter) {
        let ts = ticks()
        let step = ts.count > 1 ? ts[1] - ts[0] : span
        // Enough decimals to tell neighbouring ticks apart.
        var decimals = 0
        var unit: UInt64 = 1_000_000_000
        while unit > step, decimals < 9 {
            unit /= 10
            decimals += 1
        }
        w.begin("g", [("id", "axis")])
        w.leaf("line", [("x1", num(TimelineDrawing.left)), ("y1", num(axisY)), ("x2", num(TimelineDrawing.left + plotWidth)), ("y2", num(axisY)),
                        ("stroke", Palette.ink)])
        for t in ts {
            w.leaf("line", [("x1", num(x(t))), ("y1", num(axisY)), ("x2", num(x(t))), ("y2", num(axisY + 5)), ("stroke", Palette.ink)])
            w.element("text", [("class", "tick"), ("x", num(x(t))), ("y", num(axisY + 17)), ("font-size", "10"), ("text-anchor", "middle"), ("fill", Palette.ink)],
                      text: seconds(t - t0, decimals: decimals))
        }
        w.element("text", [("x", "24"), ("y", num(axisY + 17)), ("font-size", "10"), ("fill", Palette.muted)], text: "time since start")
        w.end()
    }

    func seconds(_ ns: UInt64, decimals: Int) -> String {
        let whole = ns / 1_000_000_000
        guard decimals > 0 else { return "\(whole) s" }
        var frac = String(ns % 1_000_000_000)
        frac = String(repeating: "0", count: 9 - frac.count) + frac
        return "\(whole).\(frac.prefix(decimals)) s"
    }

    func legend(_ w: inout XMLWriter) {
        var y = axisY + 40
        var entries: [(XMLWriter.Attributes, String)] = Pose.allCases.map { ([("fill", Palette.pose($0))], $0.rawValue) }
        entries += [
            ([("fill", "#0f172a"), ("fill-opacity", "0.12")], "threshold ± hysteresis"),
            ([("fill", Palette.angle)], "hinge angle"),
            ([("fill", Palette.layoutChange)], "layout change"),
            ([("fill", Palette.glitch)], "glitch"),
            ([("fill", Palette.mark)], "mark"),
            ([("fill", Palette.verdict(.match))], "match"),
            ([("fill", Palette.verdict(.stale))], "stale"),
            ([("fill", Palette.verdict(.mismatch))], "mismatch"),
            ([("fill", Palette.latency)], "send → read"),
            ([("fill", Palette.relayout)], "read → queued"),
            ([("fill", Palette.overBudget)], "over budget"),
        ]
        w.begin("g", [("id", "legend")])
        var lx = TimelineDrawing.left
        for (swatch, label) in entries {
            // A second row when the first is full.
            if lx + 19 + TextFit.width(label, size: 10) > TimelineDrawing.left + plotWidth {
                lx = TimelineDrawing.left
                y += 16
            }
            w.begin("g", [("class", "legend-entry")])
            w.leaf("rect", [("x", num(lx)), ("y", num(y)), ("width", "14"), ("height", "10")] + swatch)
            w.element("text", [("x", num(lx + 19)), ("y", num(y + 9)), ("font-size", "10"), ("fill", Palette.ink)], text: label)
            w.end()
            lx += 19 + TextFit.width(label, size: 10) + 16
        }
        w.end()
    }
}
