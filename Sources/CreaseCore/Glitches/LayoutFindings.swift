/// What an app declares, where it should show: the `lostItem` check reads it. Built once
/// per app; looked up by a bar's container and role.
struct DeclaredItems: Sendable {
    enum Group: Sendable, Equatable { case screen, inspector, keyboardAccessory, sheet }

    struct Entry: Sendable {
        var container: String
        var group: Group
        /// Button ids (spacers are never shown), in manifest order.
        var ids: [String]
    }

    let entries: [Entry]

    init(app: App) {
        var out: [Entry] = []
        func buttons(_ items: [Item]) -> [String] { items.filter { $0.kind == .button }.map(\.id) }
        for s in app.screens {
            out.append(Entry(container: s.id, group: .screen, ids: buttons(s.toolbar) + buttons(s.overflowMenu)))
            if let inspector = s.inspector { out.append(Entry(container: s.id, group: .inspector, ids: buttons(inspector))) }
            if !s.keyboardAccessory.isEmpty { out.append(Entry(container: s.id, group: .keyboardAccessory, ids: buttons(s.keyboardAccessory))) }
            for sheet in s.sheets { out.append(Entry(container: sheet.id, group: .sheet, ids: buttons(sheet.toolbar))) }
        }
        entries = out
    }

    static func group(of role: BarRole) -> Group? {
        switch role {
        case .vertical, .navigation, .toolbar: .screen
        case .inspector: .inspector
        case .keyboardAccessory: .keyboardAccessory
        case .sheet: .sheet
        case .tabBar, .sidebar: nil
        }
    }

    func entry(container: String, group: Group) -> Int? {
        entries.firstIndex { $0.group == group && $0.container == container }
    }
}

/// A condition one layout shows on its own (a lost, occluded or offscreen thing). `key`
/// tells one condition from another across layouts: the same thing hidden by the same
/// region is one episode however long it lasts.
struct Finding: Sendable, Equatable {
    var kind: GlitchKind
    var subject: String
    var key: String
    var message: String

    /// One condition's identity across layouts.
    var conditionKey: String { kind.rawValue + "|" + key }
}

/// Everything the checker reads from one layout, computed once per distinct layout.
struct LayoutFindings: Sendable {
    var findings: [Finding]
    /// The findings' `kind|key`s, for telling in constant time whether a condition held in
    /// the layout before: comparing each finding with each earlier one was quadratic (a
    /// thousand custom bars, or thousands of title-only items, took the loop for 100s of ms).
    var keys: Set<String>
    /// What is on screen, as interned subject numbers in ascending order (for flash).
    var present: [Int32]
    var verticalEdge: HorizontalEdge?
    var verticalSide: Side?
    var verticalBarId: String?
    var orientation: Orientation
    var display: Display
    var direction: LayoutDirection
    var window: Rect
}

/// Numbers for subjects, so comparing what two layouts show is a merge of sorted integers.
struct SubjectTable: Sendable {
    enum Kind: Int8, Sendable, Hashable { case item, bar, region, sheet }
    private struct Key: Hashable, Sendable { var kind: Kind; var id: String }
    private var numbers: [Key: Int32] = [:]
    private(set) var names: [(kind: Kind, id: String)] = []

    mutating func number(_ kind: Kind, _ id: String) -> Int32 {
        let key = Key(kind: kind, id: id)
        if let n = numbers[key] { return n }
        let n = Int32(names.count)
        numbers[key] = n
        names.append((kind, id))
        return n
    }
}

enum LayoutFindingRules {
    /// Frames print to 1/100 pt: a hundredth is not an overlap and not leaving the window.
    static let tolerance = 0.005

    static func analyze(_ layout: Layout, declared: DeclaredItems?, subjects: inout SubjectTable) -> LayoutFindings {
        var findings: [Finding] = []
        if let declared { lostItems(layout, declared: declared, into: &findings) }
        placement(layout, into: &findings)

        var present: [Int32] = []
        present.reserveCapacity(32)
        for r in layout.regions { present.append(subjects.number(.region, r.kind.rawValue)) }
        for b in layout.bars {
            present.append(subjects.number(.bar, b.id))
            for item in b.items { present.append(subjects.number(.item, item.id)) }
        }
        if let s = layout.sheet { present.append(subjects.number(.sheet, s.id)) }
        present.sort()
        // An id shown twice (system.overflow in two bars) is one subject.
        var unique: [Int32] = []
        unique.reserveCapacity(present.count)
        for n in present where unique.last != n { unique.append(n) }

        return LayoutFindings(findings: findings, keys: Set(findings.map(\.conditionKey)), present: unique, verticalEdge: layout.verticalBarEdge, verticalSide: layout.verticalBarSide,
                              verticalBarId: layout.bars.first { $0.role == .vertical }?.id,
                              orientation: layout.device.orientation, display: layout.device.display,
                              direction: layout.device.layoutDirection, window: layout.device.window)
    }

    /// Declared items of every screen, sheet, inspector and accessory that has a bar in the
    /// layout, that are in no bar and no overflow menu.
    static func lostItems(_ layout: Layout, declared: DeclaredItems, into out: inout [Finding]) {
        var checked: [Int] = []
        // What is shown and why items are hidden, gathered once: looking each declared item
        // up in every bar and diagnostic was quadratic in the number of items.
        var shown: Set<[UInt8]> = []
        for bar in layout.bars {
            for item in bar.items { shown.insert(Array(item.id.utf8)) }
            for id in bar.overflow { shown.insert(Array(id.utf8)) }
        }
        var hiddenBecause: [[UInt8]: String] = [:]
        for d in layout.diagnostics where d.code == .itemHidden && hiddenBecause[Array(d.subject.utf8)] == nil {
            hiddenBecause[Array(d.subject.utf8)] = d.message
        }
        for bar in layout.bars {
            guard let group = DeclaredItems.group(of: bar.role), let e = declared.entry(container: bar.container, group: group),
                  !checked.contains(e) else { continue }
            checked.append(e)
            let entry = declared.entries[e]
            for id in entry.ids where !shown.contains(Array(id.utf8)) {
                let why = hiddenBecause[Array(id.utf8)].map { " (the layout says: \($0))" } ?? ""
                out.append(Finding(kind: .lostItem, subject: id, key: id,
                                   message: "\"\(id)\", declared by \(describe(entry)), is in no bar and no overflow menu\(why)"))
            }
        }
    }

    static func describe(_ entry: DeclaredItems.Entry) -> String {
        switch entry.group {
        case .screen: "screen \"\(entry.container)\""
        case .inspector: "the inspector of \"\(entry.container)\""
        case .keyboardAccessory: "the keyboard accessory of \"\(entry.container)\""
        case .sheet: "sheet \"\(entry.container)\""
        }
    }

    /// Items, custom bars and floating buttons against the reserved regions (and, for custom
    /// bars and floating buttons, which the app places itself, the vertical bar when they
    /// reach under it) and the window.
    static func placement(_ layout: Layout, into out: inout [Finding]) {
        let window = layout.device.window
        for bar in layout.bars {
            for item in bar.items {
                check("item", item.id, item.frame, layout: layout, window: window, obstacles: false, into: &out)
            }
        }
        for c in layout.custom { check("custom bar", c.id, c.frame, layout: layout, window: window, obstacles: true, into: &out) }
        for f in layout.floating { check("floating button", f.id, f.frame, layout: layout, window: window, obstacles: true, into: &out) }
    }

    private static func check(_ what: String, _ id: String, _ frame: Rect, layout: Layout, window: Rect, obstacles: Bool,
                              into out: inout [Finding]) {
        for r in layout.regions where overlaps(frame, r.frame) {
            out.append(Finding(kind: .occluded, subject: id, key: "\(id)|\(r.kind.rawValue)",
                               message: "\(what) \"\(id)\" at \(text(frame)) overlaps the \(regionName(r.kind)) at \(text(r.frame))"))
        }
        if obstacles {
            // Reaching under the column hides part of it; inside the column is where an app
            // that follows the vertical edge lays its own bar out.
            for bar in layout.bars where bar.role == .vertical && overlaps(frame, bar.frame) && !inside(frame, bar.frame) {
                out.append(Finding(kind: .occluded, subject: id, key: "\(id)|\(bar.id)",
                                   message: "\(what) \"\(id)\" at \(text(frame)) overlaps the vertical bar \"\(bar.id)\" at \(text(bar.frame))"))
            }
        }
        if !inside(frame, window) {
            out.append(Finding(kind: .offscreen, subject: id, key: id,
                               message: "\(what) \"\(id)\" at \(text(frame)) leaves the window \(text(window))"))
        }
    }

    static func overlaps(_ a: Rect, _ b: Rect) -> Bool {
        let e = tolerance
        return !a.isEmpty && !b.isEmpty && a.x < b.maxX - e && b.x < a.maxX - e && a.y < b.maxY - e && b.y < a.maxY - e
    }

    static func inside(_ a: Rect, _ w: Rect) -> Bool {
        let e = tolerance
        return a.x >= w.x - e && a.y >= w.y - e && a.maxX <= w.maxX + e && a.maxY <= w.maxY + e
    }

    static func regionName(_ k: RegionKind) -> String {
        switch k {
        case .statusBar: "status bar"
        case .dynamicIsland: "Dynamic Island"
        case .division: "fold division"
        case .keyboard: "keyboard"
        case .pip: "Picture in Picture window"
        }
    }

    /// `(x 0…84, y 388…432)`
    static func text(_ r: Rect) -> String { "(x \(n(r.x))…\(n(r.maxX)), y \(n(r.y))…\(n(r.maxY)))" }

    static func n(_ v: Double) -> String {
        var out: [UInt8] = []
        JSONWriter.appendCenti(v, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
