/// What `why` asks about: a control by id, or a field of the layout by its JSON path
/// (`barAxis`, `device.pose`, `bars.0.overflow`, …). With neither, the bar's axis.
public enum WhySubject: Sendable, Equatable, CustomStringConvertible {
    case item(String)
    case field(String)

    public var description: String {
        switch self {
        case .item(let id): "item \(id)"
        case .field(let path): path
        }
    }
}

/// Where a control is in a layout. Two layouts put it in the same place when their
/// `placeKey`s are equal: the same bar role and axis, the menu, hidden (not its position).
public enum ItemPlace: Sendable, Equatable {
    case bar(id: String, role: BarRole, axis: Axis, position: Int)
    /// Shown as one control with other tabs (a compressed tab bar).
    case grouped(bar: String, role: BarRole, into: String)
    case overflow(bar: String, role: BarRole)
    case customBar(axis: String)
    case floating
    /// Declared for a screen that is on show, but in no bar: a horizontal-only item with no
    /// horizontal bar to go to.
    case hidden
    /// Not on any screen this layout shows.
    case absent

    public var description: String {
        switch self {
        case .bar(let id, let role, let axis, let position):
            role == .vertical ? "in the vertical bar \(id), position \(position + 1)" : "in the \(axis.rawValue) \(role.rawValue) bar \(id), position \(position + 1)"
        case .grouped(let bar, let role, let into): "in the \(role.rawValue) bar \(bar), grouped into \(into)"
        case .overflow(let bar, let role): role == .vertical ? "in the overflow menu of the vertical bar \(bar)" : "in the overflow menu of the \(role.rawValue) bar \(bar)"
        case .customBar(let axis): "in a custom bar (\(axis))"
        case .floating: "a floating button"
        case .hidden: "hidden (in no bar)"
        case .absent: "not on a screen this layout shows"
        }
    }

    var placeKey: String {
        switch self {
        case .bar(_, let role, let axis, _): "bar \(role.rawValue) \(axis.rawValue)"
        case .grouped(_, let role, _): "grouped \(role.rawValue)"
        case .overflow(_, let role): "overflow \(role.rawValue)"
        case .customBar(let axis): "custom \(axis)"
        case .floating: "floating"
        case .hidden: "hidden"
        case .absent: "absent"
        }
    }
}

public struct WhyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The rule that decided a subject of one layout: pure, from the layout and what it was built
/// from. Nothing here runs on the event path; `TraceWhy` calls it for one seq on demand.
public enum LayoutWhy {
    public struct Decision: Sendable, Equatable {
        public var rule: LayoutRule
        /// Where the control is, or the field's value as JSON text.
        public var outcome: String
        /// What the outcome is compared by when an input is put back to its earlier value.
        var key: String
    }

    public static func decide(_ subject: WhySubject, app: App, layout: Layout) throws(WhyError) -> Decision {
        switch subject {
        case .item(let id):
            let place = try locate(id, app: app, layout: layout)
            return Decision(rule: rule(for: id, at: place, app: app, layout: layout), outcome: place.description, key: place.placeKey)
        case .field(let path):
            let value = try field(path, of: layout)
            return Decision(rule: rule(forField: path, layout: layout), outcome: value, key: value)
        }
    }

    // MARK: Controls

    static func locate(_ id: String, app: App, layout: Layout) throws(WhyError) -> ItemPlace {
        for bar in layout.bars {
            for (i, item) in bar.items.enumerated() {
                if item.id == id { return .bar(id: bar.id, role: bar.role, axis: bar.axis, position: i) }
                if let tabs = item.tabs, tabs.contains(id) { return .grouped(bar: bar.id, role: bar.role, into: item.id) }
            }
            if bar.overflow.contains(id) { return .overflow(bar: bar.id, role: bar.role) }
        }
        if let custom = layout.custom.first(where: { $0.id == id }) {
            return .customBar(axis: custom.verticalBarEdge.map { "following the \($0.rawValue) edge" } ?? "where the app put it")
        }
        if layout.floating.contains(where: { $0.id == id }) { return .floating }
        guard declared(id, in: app) else {
            throw WhyError("no control \"\(id)\" in the app \(app.name): --item takes the id of a bar item, tab, custom bar or floating button of its manifest")
        }
        if layout.diagnostics.contains(where: { $0.code == .itemHidden && $0.subject == id }) { return .hidden }
        return .absent
    }

    static func declared(_ id: String, in app: App) -> Bool {
        for s in app.screens {
            if s.toolbar.contains(where: { $0.id == id }) || s.overflowMenu.contains(where: { $0.id == id })
                || s.keyboardAccessory.contains(where: { $0.id == id }) || (s.inspector ?? []).contains(where: { $0.id == id })
                || s.sheets.contains(where: { $0.toolbar.contains { $0.id == id } })
                || s.customBars.contains(where: { $0.id == id }) || s.floatingButtons.contains(where: { $0.id == id }) {
                return true
            }
        }
        for c in app.containers {
            if case .tabView(let t) = c, t.tabs.contains(where: { $0.id == id }) { return true }
        }
        return false
    }

    /// The rule behind a control's place: the bar's axis for a control in a container's bar
    /// that follows it, the rule that kept it elsewhere otherwise.
    static func rule(for id: String, at place: ItemPlace, app: App, layout: Layout) -> LayoutRule {
        switch place {
        case .overflow, .grouped: return .overflow
        case .customBar: return .customBars
        case .floating: return .insets
        case .hidden: return .itemAxis
        case .absent: return .containers
        case .bar(_, let role, let axis, _):
            switch role {
            case .vertical: return .barAxis
            case .keyboardAccessory: return .itemAxis
            case .sheet: return .sheets
            case .inspector, .sidebar: return .containers
            case .navigation, .toolbar, .tabBar:
                guard layout.barAxis == .vertical, axis == .horizontal else { return .barAxis }
                // Bars are vertical and this one is not: a column beside the detail, a pinned
                // control moved to the title row for want of room, or a text-only item.
                if layout.diagnostics.contains(where: { $0.code == .columnTooShort }) { return .space }
                if layout.diagnostics.contains(where: { $0.code == .detailAwayFromBarEdge }) { return .containers }
                // A split view's column other than the detail: only the detail's bar goes vertical.
                let screen = containerOf(id, app: app)
                return layout.columns.count > 1 && layout.columns.contains { $0.id == screen && $0.verticalBarEdge == nil } ? .containers : .itemAxis
            }
        }
    }

    /// The id of the screen that declares a control.
    static func containerOf(_ id: String, app: App) -> String? {
        app.screens.first { s in s.toolbar.contains { $0.id == id } || s.overflowMenu.contains { $0.id == id } }?.id
    }

    // MARK: Fields

    static func field(_ path: String, of layout: Layout) throws(WhyError) -> String {
        let body = layout.encodeBody()
        guard let whole = try? JSON.parse([UInt8(ascii: "{")] + body + [UInt8(ascii: "}")]) else {
            throw WhyError("the layout could not be read back")
        }
        var value = whole
        var walked: [String] = []
        for part in path.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
            let here = walked.isEmpty ? "the layout" : walked.joined(separator: ".")
            switch value {
            case .object(let members):
                guard let v = members.first(where: { $0.0 == part })?.1 else {
                    throw WhyError("\(here) has no field \"\(part)\" (it has \(members.map(\.0).joined(separator: ", ")))")
                }
                value = v
            case .array(let elements):
                guard let i = Int(part), elements.indices.contains(i) else {
                    throw WhyError("\(here) is a list of \(elements.count): \"\(part)\" is no index of it")
                }
                value = elements[i]
            default:
                throw WhyError("\(here) is a \(value.typeName): it has no field \"\(part)\"")
            }
            walked.append(part)
        }
        var w = JSONWriter()
        w.value(value)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    static func rule(forField path: String, layout: Layout) -> LayoutRule {
        let parts = path.split(separator: ".").map(String.init)
        switch parts.first ?? "" {
        case "barAxis": return .barAxis
        case "verticalBarEdge", "verticalBarSide": return .barSide
        case "safeArea", "layoutMargins", "floating": return .insets
        case "regions": return .space
        case "columns", "inspector": return .containers
        case "sheet": return .sheets
        case "custom": return .customBars
        case "device":
            switch parts.count > 1 ? parts[1] : "" {
            case "pose", "display": return .hingePose
            case "orientation": return .interfaceOrientation
            case "layoutDirection": return .barSide
            default: return .containers
            }
        case "bars":
            switch parts.count > 2 ? parts[2] : "" {
            case "overflow", "tabBar": return .overflow
            case "background": return .insets
            case "items": return parts.count > 4 && parts[4] == "frame" ? .verticalOrder : .barAxis
            default: return .barAxis
            }
        case "diagnostics":
            guard parts.count > 1, let i = Int(parts[1]), layout.diagnostics.indices.contains(i) else { return .barAxis }
            return rule(for: layout.diagnostics[i].code)
        default: return .barAxis
        }
    }

    /// The rule that makes each diagnostic (docs/rules.md's table of codes).
    static func rule(for code: Diagnostic.Code) -> LayoutRule {
        switch code {
        case .customBarStaysPut, .customBarCollides: .customBars
        case .titleOnlyItem, .titleOnlyTab, .itemHidden, .reservedEllipsis, .missingTitle: .itemAxis
        case .inconsistentOptOut, .detailAwayFromBarEdge: .containers
        case .floatingButtonOnFold, .floatingButtonFromScreenEdge: .insets
        case .badgedItemInOverflow: .overflow
        case .singleControlSheet, .trailingSheetDetents: .sheets
        case .columnTooShort, .keyboardClamped: .space
        }
    }
}
