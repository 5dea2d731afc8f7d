import Foundation

/// `crease bench --svg FILE`: every distribution group as a percentile plot, the way
/// HDR histograms are drawn: across, the percentile on a log scale of 1/(1-q) (50 %,
/// 90 %, 99 %, 99.9 % ... evenly spaced); up, the latency on a log scale. A dashed line
/// marks one 120 Hz frame where it is in range.
enum BenchSVG {
    static let width = 920.0
    static let panelHeight = 300.0
    static let margin = (left: 70.0, right: 330.0, top: 34.0, bottom: 40.0)
    static let colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]

    static func render(_ report: BenchReport) -> String {
        let groups = report.scenarios.flatMap(\.groups).filter { g in g.rows.contains { !$0.curve.isEmpty } }
        let height = max(1, Double(groups.count)) * panelHeight + 40
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="20" font-size="13" font-weight="bold">\(escape("crease bench: \(report.machine.cpuModel), \(report.machine.cores) cores, \(report.machine.buildConfiguration) build"))</text>

            """
        for (i, g) in groups.enumerated() {
            out += panel(g, top: 40 + Double(i) * panelHeight)
        }
        out += "</svg>\n"
        return out
    }

    /// x: 0 for q = 0, log10(1/(1-q)) after; the max is drawn at the count's resolution.
    static func x(_ q: Double, count: Int) -> Double {
        q >= 1 ? log10(Double(max(count, 2))) : log10(1 / (1 - q))
    }

    static func panel(_ g: DistributionGroup, top: Double) -> String {
        let rows = g.rows.filter { !$0.curve.isEmpty }
        let plotW = width - margin.left - margin.right
        let plotH = panelHeight - margin.top - margin.bottom
        let maxX = max(2, rows.map { x(1, count: $0.count) }.max() ?? 2).rounded(.up)
        let values = rows.flatMap { $0.curve.map { max(1, Double($0.ns)) } }
        let lo = log10(values.min() ?? 1).rounded(.down)
        let hi = max(lo + 1, log10(values.max() ?? 10).rounded(.up))
        func px(_ xv: Double) -> Double { margin.left + xv / maxX * plotW }
        func py(_ ns: Double) -> Double { top + margin.top + plotH - (log10(max(1, ns)) - lo) / (hi - lo) * plotH }

        var s = "<g>\n"
        s += "<text x=\"\(margin.left)\" y=\"\(f(top + 20))\" font-size=\"12\" font-weight=\"bold\">\(escape(g.title))</text>\n"
        s += "<rect x=\"\(margin.left)\" y=\"\(f(top + margin.top))\" width=\"\(f(plotW))\" height=\"\(f(plotH))\" fill=\"none\" stroke=\"#888\"/>\n"
        // Percentile ticks.
        for k in 0...Int(maxX) {
            let label = k == 0 ? "0%" : percentLabel(k)
            let xx = px(Double(k))
            s += "<line x1=\"\(f(xx))\" y1=\"\(f(top + margin.top))\" x2=\"\(f(xx))\" y2=\"\(f(top + margin.top + plotH))\" stroke=\"#eee\"/>\n"
            s += "<text x=\"\(f(xx))\" y=\"\(f(top + margin.top + plotH + 14))\" text-anchor=\"middle\">\(label)</text>\n"
        }
        s += "<text x=\"\(f(margin.left + plotW / 2))\" y=\"\(f(top + panelHeight - 6))\" text-anchor=\"middle\">percentile</text>\n"
        // Latency ticks, one per decade.
        for e in Int(lo)...Int(hi) {
            let yy = py(pow(10, Double(e)))
            s += "<line x1=\"\(margin.left)\" y1=\"\(f(yy))\" x2=\"\(f(margin.left + plotW))\" y2=\"\(f(yy))\" stroke=\"#eee\"/>\n"
            s += "<text x=\"\(f(margin.left - 6))\" y=\"\(f(yy + 4))\" text-anchor=\"end\">\(durationLabel(e))</text>\n"
        }
        let frameLog = log10(BenchReport.frameNs)
        if frameLog >= lo, frameLog <= hi {
            let yy = py(BenchReport.frameNs)
            s += "<line x1=\"\(margin.left)\" y1=\"\(f(yy))\" x2=\"\(f(margin.left + plotW))\" y2=\"\(f(yy))\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n"
            s += "<text x=\"\(f(margin.left + plotW - 4))\" y=\"\(f(yy - 4))\" text-anchor=\"end\" fill=\"#666\">120 Hz frame</text>\n"
        }
        for (i, d) in rows.enumerated() {
            let color = colors[i % colors.count]
            let points = d.curve.map { "\(f(px(x($0.quantile, count: d.count)))),\(f(py(Double($0.ns))))" }.joined(separator: " ")
            s += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.8\" points=\"\(points)\"/>\n"
            let ly = top + margin.top + 12 + Double(i) * 16
            let lx = width - margin.right + 12
            s += "<line x1=\"\(f(lx))\" y1=\"\(f(ly - 4))\" x2=\"\(f(lx + 16))\" y2=\"\(f(ly - 4))\" stroke=\"\(color)\" stroke-width=\"2\"/>\n"
            s += "<text x=\"\(f(lx + 20))\" y=\"\(f(ly))\">\(escape(d.label))</text>\n"
        }
        s += "</g>\n"
        return s
    }

    static func percentLabel(_ nines: Int) -> String {
        // 1 -> 90%, 2 -> 99%, 3 -> 99.9% ...
        nines <= 2 ? "\(100 - Int(pow(10, Double(2 - nines))))%" : "99." + String(repeating: "9", count: nines - 2) + "%"
    }

    static func durationLabel(_ decade: Int) -> String {
        switch decade {
        case ..<3: return "\(Int(pow(10, Double(decade)))) ns"
        case 3..<6: return "\(Int(pow(10, Double(decade - 3)))) us"
        case 6..<9: return "\(Int(pow(10, Double(decade - 6)))) ms"
        default: return "\(Int(pow(10, Double(decade - 9)))) s"
        }
    }

    static func f(_ v: Double) -> String { Format.fixed(v, 1).replacingOccurrences(of: ",", with: "") }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
