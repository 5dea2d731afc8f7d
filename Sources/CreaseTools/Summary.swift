import CreaseCore

/// One compact human-readable line per layout: what `crease demo` and `crease watch` print.
public enum LayoutSummary {
    public static func line(_ layout: Layout, seq: Int, digest: UInt64) -> String {
        let d = layout.device
        var parts = ["#\(seq)", d.pose.rawValue, d.display.rawValue, d.orientation.rawValue]
        if d.layoutDirection == .rtl { parts.append("rtl") }
        var bar = layout.barAxis.rawValue
        if let e = layout.verticalBarEdge, let s = layout.verticalBarSide { bar += " \(e.rawValue)/\(s.rawValue)" }
        parts.append(bar)
        let main = layout.bars.first { $0.role == .vertical } ?? layout.bars.first { $0.role == .navigation }
        let visible = layout.bars.reduce(0) { $0 + $1.items.count }
        let overflow = layout.bars.reduce(0) { $0 + $1.overflow.count }
        parts.append("items \(visible)")
        parts.append("overflow \(overflow)")
        if let tabs = layout.bars.compactMap(\.tabBar).first { parts.append("tabs \(tabs.rawValue)") }
        if let s = layout.sheet { parts.append("sheet \(s.id) \(s.axis.rawValue)") }
        if let i = layout.inspector { parts.append("inspector \(i.presentation.rawValue)") }
        let regions = layout.regions.map(\.kind.rawValue).filter { $0 != "statusBar" }
        if !regions.isEmpty { parts.append("[\(regions.joined(separator: ","))]") }
        if !layout.diagnostics.isEmpty { parts.append("diag \(layout.diagnostics.map(\.code).joined(separator: ","))") }
        _ = main
        parts.append(Digest.hex(digest))
        return parts.joined(separator: "  ")
    }
}
