import CreaseCore

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
