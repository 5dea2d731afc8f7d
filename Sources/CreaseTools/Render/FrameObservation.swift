import CreaseCore

/// A rig's observation drawn over the layout it was held against.
extension FrameDrawing {
    // MARK: - An observation over the layout

    /// Observed frames outlined (dashed); what differs outlined in red on the expected
    /// frame with the differing fields beside it; an expected item the rig did not see, crossed.
    func observation(_ w: inout XMLWriter, _ o: TraceStory.Observed) {
        w.begin("g", [("id", "observation"), ("data-verdict", o.result.verdict.rawValue), ("data-differences", String(o.result.differences.count))])
        for item in o.observation?.items ?? [] {
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
            return observed?.observation?.items?.first { $0.id == id }?.frame
        }
        if subject.hasPrefix("columns[") { return layout.columns.first { $0.id == inner(subject) }?.frame }
        if subject == "sheet" { return layout.sheet?.frame }
        if subject.hasPrefix("overflow[") { return layout.bars.lazy.flatMap(\.items).first { $0.id == "system.overflow" }?.frame }
        if subject == "tabBar" { return layout.bars.first { $0.tabBar != nil }?.frame }
        if subject == "barAxis" || subject == "verticalBarSide" { return layout.bars.first { $0.role == .vertical }?.frame }
        return nil
    }
}
