import CreaseCore

/// The latency plot under the lanes: each event's latency as a stem per pixel column (the
/// column's worst), red over the budget, and the daemon's own relayout latency as ticks.
extension TimelineDrawing {
    func latency(_ w: inout XMLWriter) {
        let top = latencyTop, h = TimelineDrawing.latencyHeight, L = TimelineDrawing.left
        w.begin("g", [("id", "latency")])
        w.element("text", [("x", "24"), ("y", num(top + 12)), ("font-size", "12"), ("font-weight", "bold"), ("fill", Palette.ink)], text: "latency")
        for (i, line) in TextFit.wrap(story.latencyMeaning, width: L - 34, size: 9).prefix(4).enumerated() {
            w.element("text", [("x", "24"), ("y", num(top + 40 + Double(i) * 11)), ("font-size", "9"), ("fill", Palette.muted)], text: line)
        }
        w.leaf("rect", [("x", num(L)), ("y", num(top)), ("width", num(plotWidth)), ("height", num(h)), ("fill", "#f8fafc"), ("stroke", "#94a3b8")])
        // Times and latencies only: a copy of each point (its caption with it) was most of
        // the report's memory on a 96,000-event trace.
        let measured = story.points.compactMap { p in p.latencyNs.map { (p.t, $0) } }
        let relayouts = story.points.compactMap { p in p.relayoutNs.map { (p.t, $0) } }
        guard !measured.isEmpty || !relayouts.isEmpty else {
            w.element("text", [("class", "none"), ("x", num(L + plotWidth / 2)), ("y", num(top + h / 2)), ("font-size", "12"), ("text-anchor", "middle"),
                               ("fill", Palette.muted)], text: "this run records no per-event latency")
            if let b = story.budgetNs { budgetLine(&w, b, y: nil) }
            w.end()
            return
        }
        let highest = (measured + relayouts).map(\.1).max() ?? 0
        let ceiling = Double(max(highest, (story.budgetNs ?? 0) * 5 / 4, 1))
        func y(_ ns: UInt64) -> Double { top + h - Double(ns) / ceiling * (h - 4) }
        for (i, v) in [0, ceiling / 2, ceiling].enumerated() {
            w.element("text", [("x", num(L - 8)), ("y", num(top + h - Double(i) * (h - 4) / 2 + 3)), ("font-size", "9"), ("text-anchor", "end"),
                               ("fill", Palette.muted)], text: micros(v))
        }
        // One stem per pixel column: the column's worst event, red when over the budget.
        func worstPerColumn(_ values: [(UInt64, UInt64)]) -> [(x: Double, ns: UInt64)] {
            var columns: [(x: Double, ns: UInt64)] = []
            for (t, ns) in values {
                let px = x(t).rounded(.down)
                if let last = columns.last, last.x == px {
                    if ns > last.ns { columns[columns.count - 1].ns = ns }
                } else {
                    columns.append((px, ns))
                }
            }
            return columns
        }
        let columns = worstPerColumn(measured)
        let budget = story.budgetNs ?? .max
        let over = measured.filter { $0.1 > budget }.count
        w.begin("g", [("class", "stems"), ("data-measured", String(measured.count)), ("data-over-budget", String(over))])
        for (kind, color, bad) in [("within", Palette.latency, false), ("over", Palette.overBudget, true)] {
            let mine = columns.filter { ($0.ns > budget) == bad }
            guard !mine.isEmpty else { continue }
            w.leaf("path", [("class", kind), ("data-columns", String(mine.count)), ("stroke", color), ("stroke-width", "1"),
                            ("d", mine.map { "M\(num($0.x + 0.5)) \(num(top + h))V\(num(y($0.ns)))" }.joined())])
        }
        w.end()
        // The daemon's own latency per event, a tick per column over the stems.
        let relayoutColumns = worstPerColumn(relayouts)
        let relayoutOver = relayouts.filter { $0.1 > budget }.count
        if !relayoutColumns.isEmpty {
            w.leaf("path", [("class", "relayout"), ("data-measured", String(relayouts.count)), ("data-over-budget", String(relayoutOver)),
                            ("stroke", Palette.relayout), ("stroke-width", "2"),
                            ("d", relayoutColumns.map { "M\(num($0.x - 1)) \(num(y($0.ns)))h3" }.joined())])
        }
        if let b = story.budgetNs { budgetLine(&w, b, y: y(b)) }
        var parts: [String] = []
        if !measured.isEmpty {
            parts.append("\(measured.count) measured · max \(micros(Double(measured.map(\.1).max() ?? 0)))")
            if story.budgetNs != nil { parts[parts.count - 1] += " · \(over) over budget" }
        }
        if !relayouts.isEmpty {
            parts.append("relayout \(relayouts.count) · max \(micros(Double(relayouts.map(\.1).max() ?? 0)))")
            if story.budgetNs != nil { parts[parts.count - 1] += " · \(relayoutOver) over budget" }
        }
        let summary = parts.joined(separator: "; ")
        w.element("text", [("class", "summary"), ("x", num(L + 6)), ("y", num(top + 14)), ("font-size", "10"), ("fill", Palette.ink)], text: summary)
        w.end()
    }

    /// The budget across the latency panel (or named in its corner when nothing was measured).
    func budgetLine(_ w: inout XMLWriter, _ ns: UInt64, y: Double?) {
        let L = TimelineDrawing.left
        w.begin("g", [("class", "budget"), ("data-ns", String(ns))])
        if let y {
            w.leaf("line", [("x1", num(L)), ("y1", num(y)), ("x2", num(L + plotWidth)), ("y2", num(y)), ("stroke", Palette.overBudget),
                            ("stroke-width", "1.5"), ("stroke-dasharray", "6 3")])
        }
        w.element("text", [("x", num(L + plotWidth - 4)), ("y", num((y ?? latencyTop + 14) - 4)), ("font-size", "10"), ("text-anchor", "end"),
                           ("fill", Palette.overBudget)], text: "budget \(micros(Double(ns)))")
        w.end()
    }

    func micros(_ ns: Double) -> String {
        let us = ns / 1000
        return (us >= 100 ? num(us.rounded()) : num((us * 10).rounded() / 10)) + " µs"
    }
}
