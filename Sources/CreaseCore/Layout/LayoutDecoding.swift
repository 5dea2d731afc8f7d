/// Reads a layout line back into values: the inverse of `LayoutEncoding`, so layouts
/// that came from anywhere (a device, a file, another build) can be checked. Strict like
/// every decoder here: unknown members are errors naming the field, so a typo or a newer
/// format is reported instead of read wrongly.
extension Layout {
    /// A layout line as Crease prints it: `seq`, `digest`, then the body. `extra` names
    /// further top-level members the caller reads itself (`t` in `crease glitches`).
    public static func decodeLine(_ value: JSONValue, extra: [String] = []) throws(InputError) -> (seq: Int, digest: String, layout: Layout) {
        let r = try FieldReader(value, path: "", what: "layout")
        try r.rejectUnknown(allowed: ["seq", "digest"] + bodyMembers + extra)
        return (try r.integer("seq", min: 0, max: 1 << 53), try r.string("digest"), try decode(r))
    }

    static let bodyMembers = ["device", "barAxis", "verticalBarEdge", "verticalBarSide", "safeArea", "layoutMargins", "regions",
                              "bars", "columns", "sheet", "inspector", "custom", "floating", "diagnostics"]

    static func decode(_ r: FieldReader) throws(InputError) -> Layout {
        let d = try FieldReader(try r.required("device"), path: "device", what: "device")
        try d.rejectUnknown(allowed: ["pose", "display", "orientation", "layoutDirection", "width", "height", "sizeClass", "window"])
        let device = DeviceInfo(pose: try d.enumeration("pose", Pose.self), display: try d.enumeration("display", Display.self),
                                orientation: try d.enumeration("orientation", Orientation.self),
                                layoutDirection: try d.enumeration("layoutDirection", LayoutDirection.self),
                                width: try coordinate(d, "width"), height: try coordinate(d, "height"),
                                sizeClass: try sizeClass(d, "sizeClass"), window: try rect(d, "window"))
        var regions: [Region] = []
        for (i, v) in try r.array("regions").enumerated() {
            let e = try FieldReader(v, path: "regions[\(i)]", what: "region")
            try e.rejectUnknown(allowed: ["kind", "frame"])
            regions.append(Region(kind: try e.enumeration("kind", RegionKind.self), frame: try rect(e, "frame")))
        }
        var bars: [Bar] = []
        for (i, v) in try r.array("bars").enumerated() { bars.append(try bar(v, path: "bars[\(i)]")) }
        var columns: [ColumnInfo] = []
        for (i, v) in try r.array("columns").enumerated() {
            let c = try FieldReader(v, path: "columns[\(i)]", what: "column")
            try c.rejectUnknown(allowed: ["id", "frame", "sizeClass", "verticalBarEdge"])
            columns.append(ColumnInfo(id: try c.string("id"), frame: try rect(c, "frame"), sizeClass: try sizeClass(c, "sizeClass"),
                                      verticalBarEdge: try c.optionalEnumeration("verticalBarEdge", HorizontalEdge.self)))
        }
        var sheet: SheetInfo?
        if let v = r.optional("sheet") {
            let s = try FieldReader(v, path: "sheet", what: "sheet")
            try s.rejectUnknown(allowed: ["id", "placement", "frame", "axis"])
            sheet = SheetInfo(id: try s.string("id"), placement: try s.enumeration("placement", SheetPlacement.self),
                              frame: try rect(s, "frame"), axis: try s.enumeration("axis", Axis.self))
        }
        var inspector: InspectorInfo?
        if let v = r.optional("inspector") {
            let s = try FieldReader(v, path: "inspector", what: "inspector")
            try s.rejectUnknown(allowed: ["presentation", "frame"])
            inspector = InspectorInfo(presentation: try s.enumeration("presentation", InspectorPresentation.self), frame: try rect(s, "frame"))
        }
        var custom: [CustomInfo] = []
        for (i, v) in try r.array("custom").enumerated() {
            let c = try FieldReader(v, path: "custom[\(i)]", what: "custom bar")
            try c.rejectUnknown(allowed: ["id", "frame", "verticalBarEdge", "collides"])
            var collides: [RegionKind] = []
            for (k, kind) in try c.array("collides").enumerated() {
                guard case .string(let s) = kind, let region = RegionKind(rawValue: s) else {
                    throw InputError(.badValue, "custom[\(i)].collides[\(k)] must name a region kind", field: "custom[\(i)].collides[\(k)]")
                }
                collides.append(region)
            }
            custom.append(CustomInfo(id: try c.string("id"), frame: try rect(c, "frame"),
                                     verticalBarEdge: try c.optionalEnumeration("verticalBarEdge", HorizontalEdge.self), collides: collides))
        }
        var floating: [FloatingInfo] = []
        for (i, v) in try r.array("floating").enumerated() {
            let f = try FieldReader(v, path: "floating[\(i)]", what: "floating button")
            try f.rejectUnknown(allowed: ["id", "frame"])
            floating.append(FloatingInfo(id: try f.string("id"), frame: try rect(f, "frame")))
        }
        var diagnostics: [Diagnostic] = []
        for (i, v) in try r.array("diagnostics").enumerated() {
            let g = try FieldReader(v, path: "diagnostics[\(i)]", what: "diagnostic")
            try g.rejectUnknown(allowed: ["code", "subject", "message"])
            diagnostics.append(Diagnostic(code: try g.enumeration("code", Diagnostic.Code.self), subject: try g.string("subject"), message: try g.string("message")))
        }
        return Layout(device: device, barAxis: try r.enumeration("barAxis", Axis.self),
                      verticalBarEdge: try r.optionalEnumeration("verticalBarEdge", HorizontalEdge.self),
                      verticalBarSide: try r.optionalEnumeration("verticalBarSide", Side.self),
                      safeArea: try insets(r, "safeArea"), layoutMargins: try insets(r, "layoutMargins"),
                      regions: regions, bars: bars, columns: columns, sheet: sheet, inspector: inspector,
                      custom: custom, floating: floating, diagnostics: diagnostics)
    }

    private static func bar(_ v: JSONValue, path: String) throws(InputError) -> Bar {
        let b = try FieldReader(v, path: path, what: "bar")
        try b.rejectUnknown(allowed: ["id", "container", "role", "axis", "edge", "frame", "background", "items", "overflow", "tabBar"])
        var items: [PlacedItem] = []
        for (i, v) in try b.array("items").enumerated() {
            let it = try FieldReader(v, path: "\(path).items[\(i)]", what: "item")
            try it.rejectUnknown(allowed: ["id", "frame", "shows", "badge", "tabs"])
            items.append(PlacedItem(id: try it.string("id"), frame: try rect(it, "frame"), shows: try it.enumeration("shows", Shows.self),
                                    badge: try it.optionalInteger("badge", min: Int.min >> 11, max: Int.max >> 11),
                                    tabs: try strings(it.optionalArray("tabs"), path: it.fieldPath("tabs"))))
        }
        let background = try b.string("background")
        guard background == "opaque" || background == "none" else {
            throw InputError.badValue(b.fieldPath("background"), background, allowed: ["opaque", "none"])
        }
        return Bar(id: try b.string("id"), container: try b.string("container"), role: try b.enumeration("role", BarRole.self),
                   axis: try b.enumeration("axis", Axis.self), edge: try b.enumeration("edge", BarEdge.self), frame: try rect(b, "frame"),
                   background: background == "opaque", items: items,
                   overflow: try strings(b.array("overflow"), path: b.fieldPath("overflow")) ?? [],
                   tabBar: try b.optionalEnumeration("tabBar", TabBarState.self))
    }

    private static func strings(_ values: [JSONValue]?, path: String) throws(InputError) -> [String]? {
        guard let values else { return nil }
        var out: [String] = []
        out.reserveCapacity(values.count)
        for (i, v) in values.enumerated() {
            guard case .string(let s) = v else { throw InputError.wrongType("\(path)[\(i)]", expected: "a string", got: v) }
            out.append(s)
        }
        return out
    }

    private static func rect(_ r: FieldReader, _ name: String) throws(InputError) -> Rect {
        let f = try FieldReader(try r.required(name), path: r.fieldPath(name), what: name)
        try f.rejectUnknown(allowed: ["x", "y", "w", "h"])
        return Rect(x: try coordinate(f, "x"), y: try coordinate(f, "y"), w: try coordinate(f, "w"), h: try coordinate(f, "h"))
    }

    /// A layout's numbers are points on a screen: a layout read back that holds 1e300
    /// would overflow whatever draws or compares it, so it is refused here.
    private static func coordinate(_ r: FieldReader, _ name: String) throws(InputError) -> Double {
        let v = try r.number(name)
        guard abs(v) <= 100_000 else { throw InputError.outOfRange(r.fieldPath(name), "must be within ±100000 points", got: v) }
        return v
    }

    private static func insets(_ r: FieldReader, _ name: String) throws(InputError) -> Insets {
        let f = try FieldReader(try r.required(name), path: r.fieldPath(name), what: name)
        try f.rejectUnknown(allowed: ["top", "leading", "bottom", "trailing"])
        return Insets(top: try coordinate(f, "top"), leading: try coordinate(f, "leading"), bottom: try coordinate(f, "bottom"),
                      trailing: try coordinate(f, "trailing"))
    }

    private static func sizeClass(_ r: FieldReader, _ name: String) throws(InputError) -> SizeClassPair {
        let f = try FieldReader(try r.required(name), path: r.fieldPath(name), what: name)
        try f.rejectUnknown(allowed: ["horizontal", "vertical"])
        return SizeClassPair(horizontal: try f.enumeration("horizontal", SizeClass.self), vertical: try f.enumeration("vertical", SizeClass.self))
    }
}
