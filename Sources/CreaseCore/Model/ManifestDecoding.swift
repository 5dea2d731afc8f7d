extension App {
    /// Limits that keep a hostile manifest from costing unbounded time or memory.
    public static let maxIds = 10_000
    public static let maxStackDepth = 64

    public static func decode(json bytes: [UInt8]) throws(InputError) -> App {
        let value: JSONValue
        do { value = try JSON.parse(bytes) } catch {
            throw InputError(.badJSON, "manifest is not valid JSON: \(error.message) at byte \(error.offset)")
        }
        return try decode(value, path: "")
    }

    /// Decodes and validates a manifest. `path` prefixes field names in errors.
    public static func decode(_ value: JSONValue, path: String) throws(InputError) -> App {
        var d = ManifestDecoder(basePath: path)
        let r = try FieldReader(value, path: path, what: "manifest")
        try r.rejectUnknown(allowed: ["name", "root", "supportedOrientations"])
        let name = try r.string("name")
        let supported = try supportedOrientations(r)
        let root = try d.container(try r.required("root"), path: r.fieldPath("root"))
        return App(name: name, root: root, containers: d.containers, screens: d.screens, supportedOrientations: supported, source: value)
    }

    /// `supportedOrientations`: interface orientations, at least one, each once (as
    /// `UISupportedInterfaceOrientations` lists them).
    private static func supportedOrientations(_ r: FieldReader) throws(InputError) -> [Orientation] {
        guard r.optional("supportedOrientations") != nil else { return defaultSupportedOrientations }
        let field = r.fieldPath("supportedOrientations")
        var out: [Orientation] = []
        for item in try r.array("supportedOrientations") {
            guard case .string(let text) = item, let o = Orientation(rawValue: text) else {
                throw InputError(.badValue, "field \"\(field)\" lists interface orientations: \(Orientation.allCases.map(\.rawValue).joined(separator: ", "))", field: field)
            }
            guard !out.contains(o) else { throw InputError(.badValue, "field \"\(field)\" lists \"\(text)\" twice", field: field) }
            out.append(o)
        }
        guard !out.isEmpty else { throw InputError(.badValue, "field \"\(field)\" must list at least one orientation", field: field) }
        return out
    }
}

private struct ManifestDecoder {
    let basePath: String
    var containers: [Container] = []
    var screens: [Screen] = []
    /// By bytes, the ids' identity; as `String`s (canonical equivalence), to refuse two ids
    /// that are one text in two Unicode forms: a person, a screen reader or an accessibility
    /// tree could not tell them apart, and the layout's own comparisons need not either.
    var ids: Set<[UInt8]> = []
    var texts: Set<String> = []

    init(basePath: String) { self.basePath = basePath }

    mutating func claim(_ id: String, at field: String) throws(InputError) {
        guard !id.isEmpty else { throw InputError(.badValue, "ids must not be empty", field: field) }
        guard !id.hasPrefix("system.") else {
            throw InputError(.badValue, "id \"\(id)\" uses the reserved prefix \"system.\"", field: field)
        }
        guard ids.count < App.maxIds else {
            throw InputError(.outOfRange, "a manifest may have at most \(App.maxIds) ids, got more: \"\(id)\" would be id \(ids.count + 1)", field: field)
        }
        guard ids.insert(Array(id.utf8)).inserted else { throw InputError(.duplicateId, "id \"\(id)\" is used twice", field: field) }
        guard texts.insert(id).inserted else {
            throw InputError(.duplicateId, "id \"\(id)\" is another id's text in a different Unicode form (composed or decomposed); give it a name of its own", field: field)
        }
    }

    mutating func container(_ value: JSONValue, path: String) throws(InputError) -> Int {
        let r = try FieldReader(value, path: path, what: "container")
        let kind = try r.string("kind")
        let id = try r.string("id")
        try claim(id, at: r.fieldPath("id"))
        let index = containers.count
        // Reserve the slot first so indices follow document order (pre-order).
        containers.append(.navigationStack(StackSpec(id: id, screens: [])))
        switch kind {
        case "tabView":
            try r.rejectUnknown(allowed: ["kind", "id", "style", "placement", "tabs", "selected"])
            let style = try r.optionalEnumeration("style", TabViewStyle.self) ?? .automatic
            let placement = try r.optionalEnumeration("placement", TabBarPlacement.self) ?? .automatic
            let tabValues = try r.array("tabs")
            guard !tabValues.isEmpty else { throw InputError(.badValue, "a tabView needs at least one tab", field: r.fieldPath("tabs")) }
            var tabs: [Tab] = []
            for (i, t) in tabValues.enumerated() {
                tabs.append(try tab(t, path: "\(r.fieldPath("tabs"))[\(i)]"))
            }
            var selected = 0
            if let sel = try r.optionalString("selected") {
                guard let i = tabs.firstIndex(where: { $0.id.sameBytes(sel) }) else {
                    throw InputError(.unknownId, "selected tab \"\(sel)\" is not one of this tabView's tabs", field: r.fieldPath("selected"))
                }
                selected = i
            }
            containers[index] = .tabView(TabViewSpec(id: id, style: style, placement: placement, tabs: tabs, initialSelection: selected))
        case "navigationStack":
            try r.rejectUnknown(allowed: ["kind", "id", "screens"])
            let screenValues = try r.array("screens")
            guard !screenValues.isEmpty else { throw InputError(.badValue, "a navigationStack needs at least its root screen", field: r.fieldPath("screens")) }
            var indices: [Int] = []
            for (i, s) in screenValues.enumerated() {
                indices.append(try screen(s, path: "\(r.fieldPath("screens"))[\(i)]"))
            }
            containers[index] = .navigationStack(StackSpec(id: id, screens: indices))
        case "splitView":
            try r.rejectUnknown(allowed: ["kind", "id", "sidebar", "content", "detail"])
            let sidebar = try screen(try r.required("sidebar"), path: r.fieldPath("sidebar"))
            var content: Int?
            if let c = r.optional("content") { content = try screen(c, path: r.fieldPath("content")) }
            let detail = try screen(try r.required("detail"), path: r.fieldPath("detail"))
            containers[index] = .splitView(SplitSpec(id: id, sidebar: sidebar, content: content, detail: detail))
        default:
            throw InputError.badValue(r.fieldPath("kind"), kind, allowed: ["tabView", "navigationStack", "splitView"])
        }
        return index
    }

    mutating func tab(_ value: JSONValue, path: String) throws(InputError) -> Tab {
        let r = try FieldReader(value, path: path, what: "tab")
        try r.rejectUnknown(allowed: ["id", "title", "symbol", "badge", "content"])
        let id = try r.string("id")
        try claim(id, at: r.fieldPath("id"))
        let title = try r.string("title")
        let symbol = try r.optionalString("symbol")
        let badge = try r.optionalInteger("badge", min: 0, max: 1_000_000)
        let content = try container(try r.required("content"), path: r.fieldPath("content"))
        if case .tabView = containers[content] {
            throw InputError(.badValue, "a tab's content cannot be another tabView (nested tab bars have no place in the vertical bar)",
                             field: "\(r.fieldPath("content")).kind")
        }
        return Tab(id: id, title: title, symbol: symbol, badge: badge, content: content)
    }

    mutating func screen(_ value: JSONValue, path: String) throws(InputError) -> Int {
        let r = try FieldReader(value, path: path, what: "screen")
        try r.rejectUnknown(allowed: ["id", "title", "toolbar", "overflowMenu", "compression", "verticalBehavior", "sheets",
                                     "inspector", "keyboardAccessory", "customBars", "floatingButtons"])
        let id = try r.string("id")
        try claim(id, at: r.fieldPath("id"))
        let title = try r.optionalString("title")
        let toolbar = try items(r.array("toolbar"), path: r.fieldPath("toolbar"))
        let overflow = try items(r.optionalArray("overflowMenu") ?? [], path: r.fieldPath("overflowMenu"))
        let compression = try r.optionalEnumeration("compression", CompressionBehavior.self) ?? .automatic
        let vertical = try r.optionalEnumeration("verticalBehavior", VerticalBehavior.self) ?? .automatic
        var sheets: [Sheet] = []
        for (i, s) in (try r.optionalArray("sheets") ?? []).enumerated() {
            sheets.append(try sheet(s, path: "\(r.fieldPath("sheets"))[\(i)]"))
        }
        var inspector: [Item]?
        if let ins = r.optional("inspector") {
            let ir = try FieldReader(ins, path: r.fieldPath("inspector"), what: "inspector")
            try ir.rejectUnknown(allowed: ["toolbar"])
            inspector = try items(ir.array("toolbar"), path: ir.fieldPath("toolbar"))
        }
        let accessory = try items(r.optionalArray("keyboardAccessory") ?? [], path: r.fieldPath("keyboardAccessory"))
        var custom: [CustomBar] = []
        for (i, c) in (try r.optionalArray("customBars") ?? []).enumerated() {
            let cpath = "\(r.fieldPath("customBars"))[\(i)]"
            let cr = try FieldReader(c, path: cpath, what: "custom bar")
            try cr.rejectUnknown(allowed: ["id", "kind", "edge", "followsVerticalEdge"])
            let cid = try cr.string("id")
            try claim(cid, at: cr.fieldPath("id"))
            custom.append(CustomBar(id: cid, kind: try cr.enumeration("kind", CustomBarKind.self),
                                    edge: try cr.enumeration("edge", VerticalEnd.self),
                                    followsVerticalEdge: try cr.optionalBool("followsVerticalEdge") ?? false))
        }
        var floating: [FloatingButton] = []
        for (i, f) in (try r.optionalArray("floatingButtons") ?? []).enumerated() {
            let fpath = "\(r.fieldPath("floatingButtons"))[\(i)]"
            let fr = try FieldReader(f, path: fpath, what: "floating button")
            try fr.rejectUnknown(allowed: ["id", "size", "anchor", "corner"])
            let fid = try fr.string("id")
            try claim(fid, at: fr.fieldPath("id"))
            let size = try fr.optionalNumber("size") ?? 56
            guard size >= 28, size <= 200 else { throw InputError.outOfRange(fr.fieldPath("size"), "must be between 28 and 200 points", got: size) }
            floating.append(FloatingButton(id: fid, size: size,
                                           anchor: try fr.optionalEnumeration("anchor", FloatingAnchor.self) ?? .safeArea,
                                           corner: try fr.optionalEnumeration("corner", FloatingCorner.self) ?? .bottomTrailing))
        }
        screens.append(Screen(id: id, title: title, toolbar: toolbar, overflowMenu: overflow, compression: compression,
                              verticalBehavior: vertical, sheets: sheets, inspector: inspector, keyboardAccessory: accessory,
                              customBars: custom, floatingButtons: floating))
        return screens.count - 1
    }

    mutating func sheet(_ value: JSONValue, path: String) throws(InputError) -> Sheet {
        let r = try FieldReader(value, path: path, what: "sheet")
        try r.rejectUnknown(allowed: ["id", "placement", "detents", "verticalBehavior", "toolbar"])
        let id = try r.string("id")
        try claim(id, at: r.fieldPath("id"))
        var detents: [Detent] = []
        for (i, d) in (try r.optionalArray("detents") ?? []).enumerated() {
            let f = "\(r.fieldPath("detents"))[\(i)]"
            guard case .string(let s) = d else { throw InputError.wrongType(f, expected: "a string", got: d) }
            guard let det = Detent(rawValue: s) else { throw InputError.badValue(f, s, allowed: Detent.allCases.map(\.rawValue)) }
            detents.append(det)
        }
        return Sheet(id: id, placement: try r.optionalEnumeration("placement", SheetPlacement.self) ?? .automatic,
                     detents: detents.isEmpty ? [.large] : detents,
                     verticalBehavior: try r.optionalEnumeration("verticalBehavior", VerticalBehavior.self) ?? .automatic,
                     toolbar: try items(r.array("toolbar"), path: r.fieldPath("toolbar")))
    }

    mutating func items(_ values: [JSONValue], path: String) throws(InputError) -> [Item] {
        var out: [Item] = []
        out.reserveCapacity(values.count)
        for (i, v) in values.enumerated() { out.append(try item(v, path: "\(path)[\(i)]")) }
        return out
    }

    mutating func item(_ value: JSONValue, path: String) throws(InputError) -> Item {
        let r = try FieldReader(value, path: path, what: "item")
        try r.rejectUnknown(allowed: ["id", "title", "symbol", "placement", "group", "priority", "badge", "customView", "axisBehavior", "kind"])
        let id = try r.string("id")
        try claim(id, at: r.fieldPath("id"))
        let title = try r.optionalString("title")
        let symbol = try r.optionalString("symbol")
        let kind = try r.optionalEnumeration("kind", ItemKind.self) ?? .button
        let customView = try r.optionalBool("customView") ?? false
        if kind == .button, !customView, title == nil, symbol == nil {
            throw InputError(.missingField, "item \"\(id)\" needs a title or a symbol", field: r.fieldPath("title"))
        }
        var priority = VisibilityPriority.automatic
        if let p = r.optional("priority") {
            switch p {
            case .string("automatic"): priority = VisibilityPriority.automatic
            case .string("high"): priority = VisibilityPriority.high
            case .string("low"): priority = VisibilityPriority.low
            case .string(let s): throw InputError.badValue(r.fieldPath("priority"), s, allowed: ["automatic", "high", "low", "a number"])
            case .number(let n): priority = n == 0 ? 0 : n
            default: throw InputError.wrongType(r.fieldPath("priority"), expected: "\"automatic\", \"high\", \"low\" or a number", got: p)
            }
        }
        return Item(id: id, title: title, symbol: symbol,
                    placement: try r.optionalEnumeration("placement", ItemPlacement.self) ?? .automatic,
                    group: try r.optionalString("group"), priority: priority,
                    badge: try r.optionalInteger("badge", min: 0, max: 1_000_000),
                    customView: customView,
                    axisBehavior: try r.optionalEnumeration("axisBehavior", AxisBehavior.self) ?? .automatic,
                    kind: kind)
    }
}
