/// What a rig reading Appium's page source can see of a layout (issue 39's observable
/// classes): exactly the observation `crease.appium.read_page_source` makes of the page
/// source the stand-in device (`crease.wda_standin.page_source_of`) writes for it. Two
/// layouts with the same view are one class: no page source tells them apart, so a tour
/// looks at one of them.
///
/// What the reader sees, and so what the view keeps:
/// - every control of every bar, in bar order: its id, its frame (points, to two decimals,
///   as the layout writes them), the axis of its bar, and its badge;
/// - a bar's axis from its frame alone (taller than wide is vertical: the tree gives no
///   axis), `barAxis` vertical when any bar is, `verticalBarSide` from the first vertical
///   bar's middle against the screen's;
/// - a sidebar as what UIKit makes it, a list (a collection view of rows): its rows are
///   controls on a vertical axis, but a list is not a bar, so it says nothing of `barAxis`
///   or the vertical bar's side (read as a bar, the Atlas sidebar, 280 × 951 pt, made every
///   look of that app a false `barAxis` mismatch);
/// - not: the selected tab, the overflow menu's contents, sheets, columns, what a control
///   shows (title or symbol), backgrounds, safe areas, diagnostics.
///
/// The reader takes a tab bar control whose value is "1" for the selected tab, not a
/// badge (`TreeMapping.selected_values`), so a badge of 1 in a tab bar is not seen either.
public enum PageSourceView {
    public static func observation(of layout: Layout) -> Observation {
        var items: [ObservedItem] = []
        var anyVertical = false, anyBar = false
        var side: Side?
        for bar in layout.bars {
            let list = bar.role == .sidebar
            let vertical = list || bar.frame.h > bar.frame.w
            if !list { anyBar = true }
            if vertical, !list {
                anyVertical = true
                if side == nil { side = bar.frame.x + bar.frame.w / 2 > layout.device.width / 2 ? .right : .left }
            }
            let axis: Axis = vertical ? .vertical : .horizontal
            for item in bar.items {
                var badge: Seen<Int>?
                if let b = item.badge, !(bar.role == .tabBar && b == 1) { badge = .some(b) }
                items.append(ObservedItem(id: item.id, frame: Conformance.rounded(item.frame), axis: axis, badge: badge))
            }
        }
        var o = Observation(items: items, complete: true)
        if anyBar { o.barAxis = anyVertical ? .vertical : .horizontal }
        if let side { o.verticalBarSide = .some(side) }
        return o
    }

    /// The class of a layout: the digest of its view's JSON (crease64v).
    public static func classDigest(of layout: Layout) -> UInt64 {
        classDigest(of: observation(of: layout))
    }

    public static func classDigest(of view: Observation) -> UInt64 { view.digest }
}
