/// One field where what the rig saw differs from a layout, named by a path a person can
/// read: item and column ids, never array indices (`items[share].frame.y`,
/// `overflow[filter]`, `columns[detail].verticalBarEdge`). A value is `null` on the side
/// where the thing is absent.
public struct ConformanceDifference: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var expected: JSONValue
    public var observed: JSONValue

    public init(path: String, expected: JSONValue, observed: JSONValue) {
        self.path = path
        self.expected = expected
        self.observed = observed
    }

    /// The item, column or member the path is about (`items[share]`, `barAxis`).
    public var subject: String {
        if let close = path.firstIndex(of: "]") { return String(path[...close]) }
        return String(path.prefix { $0 != "." })
    }

    public var description: String { "\(path): expected \(Conformance.text(expected)), observed \(Conformance.text(observed))" }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("path"); w.string(path)
        w.key("expected"); w.value(expected)
        w.key("observed"); w.value(observed)
        w.endObject()
    }

    static func decode(_ value: JSONValue, path: String) throws(InputError) -> ConformanceDifference {
        let r = try FieldReader(value, path: path, what: "difference")
        try r.rejectUnknown(allowed: ["path", "expected", "observed"])
        guard let expected = r.members.first(where: { $0.0 == "expected" })?.1 else { throw InputError.missing(r.fieldPath("expected"), in: "difference") }
        guard let observed = r.members.first(where: { $0.0 == "observed" })?.1 else { throw InputError.missing(r.fieldPath("observed"), in: "difference") }
        return ConformanceDifference(path: try r.string("path"), expected: expected, observed: observed)
    }
}

/// Compares an observation with a layout: only what the observation gives.
public enum Conformance {
    /// Every differing field, in a fixed order: the top-level members, then items in the
    /// observation's order (missing ones after, in layout order), overflow, tab bar, sheet, columns.
    public static func differences(_ observed: Observation, tolerance: Double, layout: Layout) -> [ConformanceDifference] {
        var c = Collector(stopAtFirst: false)
        compare(observed, tolerance: tolerance, layout: layout, into: &c)
        return c.found
    }

    /// Whether the observation agrees with the layout (stops at the first difference).
    public static func matches(_ observed: Observation, tolerance: Double, layout: Layout) -> Bool {
        var c = Collector(stopAtFirst: true)
        compare(observed, tolerance: tolerance, layout: layout, into: &c)
        return c.found.isEmpty
    }

    struct Collector {
        let stopAtFirst: Bool
        var found: [ConformanceDifference] = []
        var done: Bool { stopAtFirst && !found.isEmpty }
        mutating func add(_ path: String, _ expected: JSONValue, _ observed: JSONValue) {
            guard !done else { return }
            found.append(ConformanceDifference(path: path, expected: expected, observed: observed))
        }
    }

    static func compare(_ o: Observation, tolerance: Double, layout: Layout, into c: inout Collector) {
        if let axis = o.barAxis, axis != layout.barAxis {
            c.add("barAxis", .string(layout.barAxis.rawValue), .string(axis.rawValue))
        }
        if let side = o.verticalBarSide, side.value != layout.verticalBarSide {
            c.add("verticalBarSide", string(layout.verticalBarSide?.rawValue), string(side.value?.rawValue))
        }
        if let items = o.items { compareItems(items, complete: o.complete, tolerance: tolerance, layout: layout, into: &c) }
        if let overflow = o.overflow, !c.done {
            let expected = layout.bars.flatMap(\.overflow)
            for id in expected where !overflow.contains(id) { c.add("overflow[\(id)]", .string(id), .null) }
            for id in overflow where !expected.contains(id) { c.add("overflow[\(id)]", .null, .string(id)) }
        }
        if let tabBar = o.tabBar {
            let expected = layout.bars.lazy.compactMap(\.tabBar).first
            if tabBar.value != expected { c.add("tabBar", string(expected?.rawValue), string(tabBar.value?.rawValue)) }
        }
        if let sheet = o.sheet { compareSheet(sheet, tolerance: tolerance, layout: layout, into: &c) }
        if let columns = o.columns { compareColumns(columns, tolerance: tolerance, layout: layout, into: &c) }
    }

    // MARK: items

    /// The controls on screen in layout order, with the axis of the bar each sits in.
    struct ExpectedItem {
        var item: PlacedItem
        var axis: Axis
    }

    static func compareItems(_ observed: [ObservedItem], complete: Bool, tolerance: Double, layout: Layout, into c: inout Collector) {
        var expected: [ExpectedItem] = []
        for bar in layout.bars { for item in bar.items { expected.append(ExpectedItem(item: item, axis: bar.axis)) } }
        var paired = [Bool](repeating: false, count: expected.count)
        // How often each id was observed, counted once: a line may hold thousands of items,
        // and the loop must not spend quadratic time on them. Looked up, never iterated.
        // Keyed by the ids' bytes, as ids are compared everywhere.
        var observedCount: [[UInt8]: Int] = [:]
        for o in observed { observedCount[Array(o.id.utf8), default: 0] += 1 }
        var unpairedCount: [[UInt8]: Int] = [:]
        // An id may appear more than once (each sheet has its own overflow button): the
        // path then numbers the occurrences in layout order, `items[system.overflow#2]`.
        // Indexed once, so matching thousands of items is not quadratic.
        var byId: [[UInt8]: [Int]] = [:]
        for i in expected.indices { byId[Array(expected[i].item.id.utf8), default: []].append(i) }
        func occurrences(_ id: String) -> [Int] { byId[Array(id.utf8)] ?? [] }
        func name(_ id: String, _ k: Int, _ n: Int) -> String { n > 1 ? "items[\(id)#\(k)]" : "items[\(id)]" }

        for seen in observed {
            guard !c.done else { return }
            let candidates = occurrences(seen.id)
            let n = max(candidates.count, observedCount[Array(seen.id.utf8)] ?? 0)
            // The nearest unpaired occurrence when the rig gave a frame, else the first.
            var best: Int?
            var bestDistance = Double.infinity
            for i in candidates where !paired[i] {
                let d = seen.frame.map { distance($0, rounded(expected[i].item.frame)) } ?? 0
                if d < bestDistance { best = i; bestDistance = d }
            }
            guard let i = best else {
                let extra = (unpairedCount[Array(seen.id.utf8)] ?? 0) + 1
                unpairedCount[Array(seen.id.utf8)] = extra
                c.add(name(seen.id, candidates.count + extra, n), .null, json(seen))
                continue
            }
            paired[i] = true
            let path = name(seen.id, candidates.firstIndex(of: i)! + 1, n)
            let e = expected[i]
            if let f = seen.frame { compareFrame(path + ".frame", expected: e.item.frame, observed: f, tolerance: tolerance, into: &c) }
            if let axis = seen.axis, axis != e.axis { c.add(path + ".axis", .string(e.axis.rawValue), .string(axis.rawValue)) }
            if let shows = seen.shows, shows != e.item.shows { c.add(path + ".shows", .string(e.item.shows.rawValue), .string(shows.rawValue)) }
            if let badge = seen.badge, badge.value != e.item.badge {
                c.add(path + ".badge", e.item.badge.map { .number(Double($0)) } ?? .null, badge.value.map { .number(Double($0)) } ?? .null)
            }
        }
        guard complete else { return }
        for i in expected.indices where !paired[i] {
            let id = expected[i].item.id
            let candidates = occurrences(id)
            let n = max(candidates.count, observedCount[Array(id.utf8)] ?? 0)
            c.add(name(id, candidates.firstIndex(of: i)! + 1, n), json(expected[i]), .null)
        }
    }

    // MARK: sheet and columns

    static func compareSheet(_ seen: Seen<ObservedSheet>, tolerance: Double, layout: Layout, into c: inout Collector) {
        switch (layout.sheet, seen) {
        case (nil, .none): return
        case (let s?, .none): c.add("sheet", json(s), .null)
        case (nil, .some(let o)): c.add("sheet", .null, json(o))
        case (let s?, .some(let o)):
            if let axis = o.axis, axis != s.axis { c.add("sheet.axis", .string(s.axis.rawValue), .string(axis.rawValue)) }
            if let f = o.frame { compareFrame("sheet.frame", expected: s.frame, observed: f, tolerance: tolerance, into: &c) }
        }
    }

    static func compareColumns(_ observed: [ObservedColumn], tolerance: Double, layout: Layout, into c: inout Collector) {
        for seen in observed {
            guard let e = layout.columns.first(where: { $0.id.sameBytes(seen.id) }) else {
                c.add("columns[\(seen.id)]", .null, json(seen))
                continue
            }
            let path = "columns[\(seen.id)]"
            if let f = seen.frame { compareFrame(path + ".frame", expected: e.frame, observed: f, tolerance: tolerance, into: &c) }
            if let edge = seen.verticalBarEdge, edge.value != e.verticalBarEdge {
                c.add(path + ".verticalBarEdge", string(e.verticalBarEdge?.rawValue), string(edge.value?.rawValue))
            }
        }
        for e in layout.columns where !observed.contains(where: { $0.id.sameBytes(e.id) }) {
            c.add("columns[\(e.id)]", json(e), .null)
        }
    }

    // MARK: frames

    /// A frame agrees when each of its four edges is within `tolerance` of the layout's
    /// (as the layout prints it, to 1/100 pt). When it does not, the fields beyond the
    /// tolerance are named; if none is (an edge moved by two small changes), those that differ.
    static func compareFrame(_ path: String, expected: Rect, observed o: Rect, tolerance: Double, into c: inout Collector) {
        let e = rounded(expected)
        let slack = tolerance + 1e-9
        let edges = [o.x - e.x, o.y - e.y, o.maxX - e.maxX, o.maxY - e.maxY]
        guard edges.contains(where: { abs($0) > slack }) else { return }
        let fields: [(String, Double, Double)] = [("x", e.x, o.x), ("y", e.y, o.y), ("w", e.w, o.w), ("h", e.h, o.h)]
        var named = fields.filter { abs($0.2 - $0.1) > slack }
        if named.isEmpty { named = fields.filter { abs($0.2 - $0.1) > 1e-9 } }
        for (field, ev, ov) in named { c.add("\(path).\(field)", .number(ev), .number(ov)) }
    }

    static func distance(_ a: Rect, _ b: Rect) -> Double {
        abs(a.x - b.x) + abs(a.y - b.y) + abs(a.maxX - b.maxX) + abs(a.maxY - b.maxY)
    }

    static func rounded(_ r: Rect) -> Rect { Rect(x: centi(r.x), y: centi(r.y), w: centi(r.w), h: centi(r.h)) }
    static func centi(_ v: Double) -> Double {
        let r = (v * 100).rounded() / 100
        return r == 0 ? 0 : r
    }

    // MARK: values

    static func string(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }

    static func json(_ r: Rect) -> JSONValue {
        let e = rounded(r)
        return .object([("x", .number(e.x)), ("y", .number(e.y)), ("w", .number(e.w)), ("h", .number(e.h))])
    }

    static func json(_ e: ExpectedItem) -> JSONValue {
        var m: [(String, JSONValue)] = [("id", .string(e.item.id)), ("frame", json(e.item.frame)), ("axis", .string(e.axis.rawValue)),
                                        ("shows", .string(e.item.shows.rawValue))]
        if let b = e.item.badge { m.append(("badge", .number(Double(b)))) }
        return .object(m)
    }

    static func json(_ o: ObservedItem) -> JSONValue {
        var m: [(String, JSONValue)] = [("id", .string(o.id))]
        if let f = o.frame { m.append(("frame", json(f))) }
        if let a = o.axis { m.append(("axis", .string(a.rawValue))) }
        if let s = o.shows { m.append(("shows", .string(s.rawValue))) }
        if let b = o.badge { m.append(("badge", b.value.map { .number(Double($0)) } ?? .null)) }
        return .object(m)
    }

    static func json(_ s: SheetInfo) -> JSONValue {
        .object([("id", .string(s.id)), ("axis", .string(s.axis.rawValue)), ("frame", json(s.frame))])
    }

    static func json(_ o: ObservedSheet) -> JSONValue {
        var m: [(String, JSONValue)] = []
        if let a = o.axis { m.append(("axis", .string(a.rawValue))) }
        if let f = o.frame { m.append(("frame", json(f))) }
        return .object(m)
    }

    static func json(_ c: ColumnInfo) -> JSONValue {
        .object([("id", .string(c.id)), ("frame", json(c.frame)), ("verticalBarEdge", string(c.verticalBarEdge?.rawValue))])
    }

    static func json(_ o: ObservedColumn) -> JSONValue {
        var m: [(String, JSONValue)] = [("id", .string(o.id))]
        if let f = o.frame { m.append(("frame", json(f))) }
        if let e = o.verticalBarEdge { m.append(("verticalBarEdge", string(e.value?.rawValue))) }
        return .object(m)
    }

    /// A value as compact JSON, for messages.
    public static func text(_ v: JSONValue) -> String {
        var w = JSONWriter()
        w.value(v)
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
