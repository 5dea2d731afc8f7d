/// What a rig saw on the device, in the vocabulary of the layout JSON, as far as a rig
/// can know it: it names controls by their ids, never by Crease's bar ids. Every member
/// is optional; only what is given is compared (`Conformance.compare`).
public struct Observation: Sendable, Equatable {
    public var barAxis: Axis?
    /// `.none`: the rig saw that no vertical bar side applies (the layout's `null`).
    public var verticalBarSide: Seen<Side>?
    /// The controls visible on screen, in any bar.
    public var items: [ObservedItem]?
    /// The ids found in overflow menus; compared as a set.
    public var overflow: [String]?
    /// `.none`: no tab bar on screen.
    public var tabBar: Seen<TabBarState>?
    /// `.none`: no sheet on screen.
    public var sheet: Seen<ObservedSheet>?
    /// The columns on screen; when given, the whole set.
    public var columns: [ObservedColumn]?
    /// `items` lists everything on screen, so an expected item it lacks is missing.
    public var complete: Bool

    public init(barAxis: Axis? = nil, verticalBarSide: Seen<Side>? = nil, items: [ObservedItem]? = nil, overflow: [String]? = nil,
                tabBar: Seen<TabBarState>? = nil, sheet: Seen<ObservedSheet>? = nil, columns: [ObservedColumn]? = nil,
                complete: Bool = false) {
        self.barAxis = barAxis
        self.verticalBarSide = verticalBarSide
        self.items = items
        self.overflow = overflow
        self.tabBar = tabBar
        self.sheet = sheet
        self.columns = columns
        self.complete = complete
    }
}

extension Observation {
    /// Everything a rig could observe of `layout`, as a complete observation: what a device
    /// showing exactly this layout would report (for demos, benchmarks and tests).
    public init(describing layout: Layout) {
        var items: [ObservedItem] = []
        for bar in layout.bars {
            for item in bar.items {
                items.append(ObservedItem(id: item.id, frame: Conformance.rounded(item.frame), axis: bar.axis, shows: item.shows,
                                          badge: item.badge.map { .some($0) } ?? Seen.none))
            }
        }
        self.init(barAxis: layout.barAxis, verticalBarSide: layout.verticalBarSide.map { .some($0) } ?? Seen.none, items: items,
                  overflow: layout.bars.flatMap(\.overflow),
                  tabBar: layout.bars.lazy.compactMap(\.tabBar).first.map { .some($0) } ?? Seen.none,
                  sheet: layout.sheet.map { .some(ObservedSheet(axis: $0.axis, frame: Conformance.rounded($0.frame))) } ?? Seen.none,
                  columns: layout.columns.map {
                      ObservedColumn(id: $0.id, frame: Conformance.rounded($0.frame), verticalBarEdge: $0.verticalBarEdge.map { .some($0) } ?? Seen.none)
                  },
                  complete: true)
    }
}

/// A value the rig reported, where `null` is a report too: it saw nothing there.
public enum Seen<Value: Sendable & Equatable>: Sendable, Equatable {
    case none
    case some(Value)

    public var value: Value? {
        if case .some(let v) = self { return v }
        return nil
    }
}

public struct ObservedItem: Sendable, Equatable {
    public var id: String
    public var frame: Rect?
    /// The axis of the bar the control sits in.
    public var axis: Axis?
    public var shows: Shows?
    /// `.none`: the control shows no badge.
    public var badge: Seen<Int>?

    public init(id: String, frame: Rect? = nil, axis: Axis? = nil, shows: Shows? = nil, badge: Seen<Int>? = nil) {
        self.id = id
        self.frame = frame
        self.axis = axis
        self.shows = shows
        self.badge = badge
    }
}

public struct ObservedSheet: Sendable, Equatable {
    public var axis: Axis?
    public var frame: Rect?

    public init(axis: Axis? = nil, frame: Rect? = nil) {
        self.axis = axis
        self.frame = frame
    }
}

public struct ObservedColumn: Sendable, Equatable {
    public var id: String
    public var frame: Rect?
    /// `.none`: the column holds no vertical bar.
    public var verticalBarEdge: Seen<HorizontalEdge>?

    public init(id: String, frame: Rect? = nil, verticalBarEdge: Seen<HorizontalEdge>? = nil) {
        self.id = id
        self.frame = frame
        self.verticalBarEdge = verticalBarEdge
    }
}

/// The `observe` command: `{"cmd":"observe","id"?,"ts"?,"observed":{…},"tolerance"?}`.
public struct ObserveRequest: Sendable, Equatable {
    public static let defaultTolerance = 2.0
    /// The largest tolerance accepted: beyond it every frame would match.
    public static let maxTolerance = 1000.0

    public var observed: Observation
    /// Points allowed per frame edge.
    public var tolerance: Double
    /// The rig's clock when it looked (nanoseconds), recorded as given.
    public var ts: Int64?
    public var id: JSONValue?
    /// When the screen was read, on the daemon's clock (CLOCK_MONOTONIC ns, as the `clock`
    /// command answers): one moment, or the interval a slow capture took. The observation
    /// is judged against the layouts current then, not when it arrived.
    public var capturedAt: ClosedRange<UInt64>?

    public init(observed: Observation, tolerance: Double = ObserveRequest.defaultTolerance, ts: Int64? = nil, id: JSONValue? = nil,
                capturedAt: ClosedRange<UInt64>? = nil) {
        self.observed = observed
        self.tolerance = tolerance
        self.ts = ts
        self.id = id
        self.capturedAt = capturedAt
    }
}

extension ObserveRequest {
    /// Decodes the whole command object. Errors name the field by its path
    /// (`observed.items[2].frame.w`) and carry the command's id; unknown members are refused.
    /// `observedGiven` false: a trace record's command, whose look is kept as a reference
    /// (`observedAs`), so `observed` is absent and the result's `observed` empty until resolved.
    public static func decode(_ body: JSONValue, observedGiven: Bool = true) throws(InputError) -> ObserveRequest {
        do {
            return try decodeFields(body, observedGiven: observedGiven)
        } catch {
            var e = error
            e.id = body["id"]
            throw e
        }
    }

    private static func decodeFields(_ body: JSONValue, observedGiven: Bool) throws(InputError) -> ObserveRequest {
        let r = try FieldReader(body, path: "", what: "command \"observe\"")
        try r.rejectUnknown(allowed: observedGiven ? ["cmd", "id", "ts", "observed", "tolerance", "capturedAt"] : ["cmd", "id", "ts", "tolerance", "capturedAt"])
        var ts: Int64?
        if let t = try r.optionalNumber("ts") {
            guard t == t.rounded(), abs(t) < 9.2e18 else { throw InputError.wrongType("ts", expected: "an integer (nanoseconds)", got: .number(t)) }
            ts = Int64(t)
        }
        var tolerance = defaultTolerance
        if let t = try r.optionalNumber("tolerance") {
            guard t >= 0, t <= maxTolerance else { throw InputError.outOfRange("tolerance", "must be between 0 and \(Int(maxTolerance)) points", got: t) }
            tolerance = t
        }
        let observed = observedGiven ? try Observation.decode(try r.required("observed"), path: "observed") : Observation()
        return ObserveRequest(observed: observed, tolerance: tolerance, ts: ts, id: r.optional("id"), capturedAt: try capturedAt(r))
    }

    /// `capturedAt`: a time, or `[start, end]` with start ≤ end, in whole nanoseconds.
    private static func capturedAt(_ r: FieldReader) throws(InputError) -> ClosedRange<UInt64>? {
        guard let value = r.optional("capturedAt") else { return nil }
        func time(_ v: JSONValue) throws(InputError) -> UInt64 {
            guard case .number(let n) = v, n == n.rounded(), n >= 0, n < 9.2e18 else {
                throw InputError.wrongType("capturedAt", expected: "nanoseconds on the daemon's clock (a whole number, or [start, end])", got: v)
            }
            return UInt64(n)
        }
        if case .array(let pair) = value {
            guard pair.count == 2 else {
                throw InputError(.badValue, "field \"capturedAt\" must be a time or [start, end]; got \(pair.count) numbers", field: "capturedAt")
            }
            let start = try time(pair[0]), end = try time(pair[1])
            guard start <= end else {
                throw InputError(.badValue, "field \"capturedAt\": the capture ends (\(end)) before it starts (\(start))", field: "capturedAt")
            }
            return start...end
        }
        let at = try time(value)
        return at...at
    }

    /// The command as canonical JSON (for tools that send observations and for tests);
    /// without `observed` for a trace record that keeps the look as a reference.
    public func write(to w: inout JSONWriter, observed includeObserved: Bool = true) {
        w.beginObject()
        w.key("cmd"); w.string("observe")
        if let id { w.key("id"); w.value(id) }
        if let ts { w.key("ts"); w.int(Int(ts)) }
        if let c = capturedAt {
            w.key("capturedAt")
            if c.lowerBound == c.upperBound { w.int(Int(c.lowerBound)) } else { w.beginArray(); w.int(Int(c.lowerBound)); w.int(Int(c.upperBound)); w.endArray() }
        }
        if includeObserved { w.key("observed"); observed.write(to: &w) }
        if tolerance != ObserveRequest.defaultTolerance { w.key("tolerance"); w.number(tolerance) }
        w.endObject()
    }

    public func jsonBytes(observed includeObserved: Bool = true) -> [UInt8] {
        var w = JSONWriter()
        write(to: &w, observed: includeObserved)
        return w.bytes
    }
}

extension Observation {
    static func decode(_ value: JSONValue, path: String) throws(InputError) -> Observation {
        let r = try FieldReader(value, path: path, what: "observed")
        try r.rejectUnknown(allowed: ["barAxis", "verticalBarSide", "items", "overflow", "tabBar", "sheet", "columns", "complete"])
        var o = Observation()
        o.barAxis = try r.optionalEnumeration("barAxis", Axis.self)
        o.verticalBarSide = try r.seen("verticalBarSide") { (r: FieldReader, name: String) throws(InputError) in try r.enumeration(name, Side.self) }
        o.tabBar = try r.seen("tabBar") { (r: FieldReader, name: String) throws(InputError) in try r.enumeration(name, TabBarState.self) }
        o.sheet = try r.seen("sheet") { (r: FieldReader, name: String) throws(InputError) in
            let s = try FieldReader(try r.required(name), path: r.fieldPath(name), what: "sheet")
            try s.rejectUnknown(allowed: ["axis", "frame"])
            return ObservedSheet(axis: try s.optionalEnumeration("axis", Axis.self), frame: try s.optionalFrame("frame"))
        }
        if let items = try r.optionalArray("items") {
            var out: [ObservedItem] = []
            for (i, v) in items.enumerated() {
                let f = try FieldReader(v, path: "\(r.fieldPath("items"))[\(i)]", what: "observed item")
                try f.rejectUnknown(allowed: ["id", "frame", "axis", "shows", "badge"])
                out.append(ObservedItem(id: try f.string("id"), frame: try f.optionalFrame("frame"),
                                        axis: try f.optionalEnumeration("axis", Axis.self),
                                        shows: try f.optionalEnumeration("shows", Shows.self),
                                        badge: try f.seen("badge") { (f: FieldReader, name: String) throws(InputError) in
                                            try f.integer(name, min: 0, max: 1_000_000) }))
            }
            o.items = out
        }
        if let overflow = try r.optionalArray("overflow") {
            var ids: [String] = []
            for (i, v) in overflow.enumerated() {
                guard case .string(let id) = v else { throw InputError.wrongType("\(r.fieldPath("overflow"))[\(i)]", expected: "an item id", got: v) }
                ids.append(id)
            }
            o.overflow = ids
        }
        if let columns = try r.optionalArray("columns") {
            var out: [ObservedColumn] = []
            for (i, v) in columns.enumerated() {
                let f = try FieldReader(v, path: "\(r.fieldPath("columns"))[\(i)]", what: "observed column")
                try f.rejectUnknown(allowed: ["id", "frame", "verticalBarEdge"])
                out.append(ObservedColumn(id: try f.string("id"), frame: try f.optionalFrame("frame"),
                                          verticalBarEdge: try f.seen("verticalBarEdge") { (f: FieldReader, name: String) throws(InputError) in
                                              try f.enumeration(name, HorizontalEdge.self) }))
            }
            o.columns = out
        }
        o.complete = try r.optionalBool("complete") ?? false
        if o.complete, o.items == nil {
            throw InputError(.missingField, "observed: \"complete\" says the items list everything on screen, so \"items\" is needed",
                             field: r.fieldPath("items"))
        }
        return o
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if let barAxis { w.key("barAxis"); w.string(barAxis.rawValue) }
        if let verticalBarSide { w.key("verticalBarSide"); w.seen(verticalBarSide) { $0.string($1.rawValue) } }
        if let items {
            w.key("items"); w.beginArray()
            for item in items {
                w.beginObject()
                w.key("id"); w.string(item.id)
                if let f = item.frame { w.key("frame"); f.write(&w) }
                if let a = item.axis { w.key("axis"); w.string(a.rawValue) }
                if let s = item.shows { w.key("shows"); w.string(s.rawValue) }
                if let b = item.badge { w.key("badge"); w.seen(b) { $0.int($1) } }
                w.endObject()
            }
            w.endArray()
        }
        if let overflow { w.key("overflow"); w.beginArray(); for id in overflow { w.string(id) }; w.endArray() }
        if let tabBar { w.key("tabBar"); w.seen(tabBar) { $0.string($1.rawValue) } }
        if let sheet {
            w.key("sheet")
            w.seen(sheet) { w, s in
                w.beginObject()
                if let a = s.axis { w.key("axis"); w.string(a.rawValue) }
                if let f = s.frame { w.key("frame"); f.write(&w) }
                w.endObject()
            }
        }
        if let columns {
            w.key("columns"); w.beginArray()
            for c in columns {
                w.beginObject()
                w.key("id"); w.string(c.id)
                if let f = c.frame { w.key("frame"); f.write(&w) }
                if let e = c.verticalBarEdge { w.key("verticalBarEdge"); w.seen(e) { $0.string($1.rawValue) } }
                w.endObject()
            }
            w.endArray()
        }
        if complete { w.key("complete"); w.bool(true) }
        w.endObject()
    }
}

extension JSONWriter {
    mutating func seen<V>(_ s: Seen<V>, _ write: (inout JSONWriter, V) -> Void) {
        switch s {
        case .none: null()
        case .some(let v): write(&self, v)
        }
    }
}

extension FieldReader {
    /// A member that may be absent (nil), `null` (`.none`: the rig saw nothing there) or a value.
    func seen<V>(_ name: String, _ read: (FieldReader, String) throws(InputError) -> V) throws(InputError) -> Seen<V>? {
        for (k, v) in members where k == name {
            if case .null = v { return Seen.none }
            return .some(try read(self, name))
        }
        return nil
    }

    /// `{"x","y","w","h"}` in points, all four required, sizes not negative.
    func optionalFrame(_ name: String) throws(InputError) -> Rect? {
        guard let v = optional(name) else { return nil }
        let f = try FieldReader(v, path: fieldPath(name), what: "frame")
        try f.rejectUnknown(allowed: ["x", "y", "w", "h"])
        let frame = Rect(x: try f.number("x"), y: try f.number("y"), w: try f.number("w"), h: try f.number("h"))
        for (field, value) in [("x", frame.x), ("y", frame.y), ("w", frame.w), ("h", frame.h)] where abs(value) > 100_000 {
            throw InputError.outOfRange(f.fieldPath(field), "must be within ±100000 points", got: value)
        }
        if frame.w < 0 { throw InputError.outOfRange(f.fieldPath("w"), "must not be negative", got: frame.w) }
        if frame.h < 0 { throw InputError.outOfRange(f.fieldPath("h"), "must not be negative", got: frame.h) }
        return frame
    }
}

extension Rect {
    /// A frame as the layout writes it (points to two decimals), for an observation echoed
    /// back in a trace record or a push.
    func write(_ w: inout JSONWriter) {
        w.beginObject()
        w.key("x"); w.centi(x)
        w.key("y"); w.centi(y)
        w.key("w"); w.centi(self.w)
        w.key("h"); w.centi(h)
        w.endObject()
    }
}
