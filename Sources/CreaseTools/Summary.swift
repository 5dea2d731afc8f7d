import CreaseCore

/// One compact human-readable line per layout push (`{"push":"layout","seq","digest",
/// "layout"}`): what `crease watch` and `crease demo` print. Pure.
///
///     #91  fullyOpen  inner  portrait  vertical leading/left  items 9  overflow 2  [dynamicIsland,division]  1f0c…
public enum LayoutSummary {
    public static func line(push: JSONValue) -> String {
        let layout = push["layout"] ?? .null
        let device = layout["device"] ?? .null
        var parts = ["#\(text(push["seq"]))", text(device["pose"]), text(device["display"]), text(device["orientation"])]
        if device["layoutDirection"] == .string("rtl") { parts.append("rtl") }
        var bar = text(layout["barAxis"])
        if case .string(let edge)? = layout["verticalBarEdge"] { bar += " \(edge)/\(text(layout["verticalBarSide"]))" }
        parts.append(bar)
        var visible = 0, overflow = 0
        var tabBar: String?
        for b in elements(layout["bars"]) {
            visible += elements(b["items"]).count
            overflow += elements(b["overflow"]).count
            if tabBar == nil, case .string(let t)? = b["tabBar"] { tabBar = t }
        }
        parts.append("items \(visible)")
        parts.append("overflow \(overflow)")
        if let tabBar { parts.append("tabs \(tabBar)") }
        if case .object? = layout["sheet"], let sheet = layout["sheet"] {
            parts.append("sheet \(text(sheet["id"])) \(text(sheet["axis"]))")
        }
        if case .object? = layout["inspector"], let inspector = layout["inspector"] {
            parts.append("inspector \(text(inspector["presentation"]))")
        }
        let regions = elements(layout["regions"]).map { text($0["kind"]) }.filter { $0 != "statusBar" }
        if !regions.isEmpty { parts.append("[\(regions.joined(separator: ","))]") }
        let diagnostics = elements(layout["diagnostics"]).map { text($0["code"]) }
        if !diagnostics.isEmpty { parts.append("diag \(diagnostics.joined(separator: ","))") }
        parts.append(text(push["digest"]))
        return parts.joined(separator: "  ")
    }

    private static func elements(_ v: JSONValue?) -> [JSONValue] {
        if case .array(let a)? = v { return a }
        return []
    }

    private static func text(_ v: JSONValue?) -> String {
        switch v {
        case .string(let x)?: x
        case .number(let n)?: String(decoding: JSONWriter.encode(.number(n)), as: UTF8.self)
        case .bool(let b)?: b ? "true" : "false"
        default: "-"
        }
    }
}
