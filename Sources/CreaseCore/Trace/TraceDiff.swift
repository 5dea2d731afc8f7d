/// `crease trace diff A B`: where two runs first part ways. Both traces are replayed
/// side by side, so the report can show how the two layouts differ at that point
/// even when neither trace recorded layouts.
public struct TraceComparison: Sendable {
    /// Header members that differ (`profile.hingeHysteresis`, `app`, `config.budgetUs`, `initial`).
    public var headerDifferences: [LayoutDifference]
    public var eventsCompared: Int
    public var divergence: Point?

    public struct Point: Sendable {
        public enum Kind: Sendable, Equatable { case event, digest, aEnded, bEnded }
        public var kind: Kind
        /// The seq in each trace (nil where that trace has ended).
        public var seqA: Int?
        public var seqB: Int?
        public var lineA: Int?
        public var lineB: Int?
        public var eventA: [UInt8]?
        public var eventB: [UInt8]?
        public var digestA: UInt64?
        public var digestB: UInt64?
        /// A's layout against B's after the divergent events (empty when they agree or one has ended).
        public var layoutDifferences: [LayoutDifference]
    }

    public var identical: Bool { headerDifferences.isEmpty && divergence == nil }
}

public enum TraceDiff {
    public static func compare(_ a: TraceFile, _ b: TraceFile) throws(TraceError) -> TraceComparison {
        var result = TraceComparison(headerDifferences: headerDifferences(a.header, b.header), eventsCompared: 0, divergence: nil)
        var ra = TraceReplayer(header: a.header, verify: false)
        var rb = TraceReplayer(header: b.header, verify: false)
        var ca = a.cursor(), cb = b.cursor()
        while true {
            let ea = try nextEvent(&ca, &ra, trace: "A")
            let eb = try nextEvent(&cb, &rb, trace: "B")
            switch (ea, eb) {
            case (nil, nil):
                return result
            case (let x?, nil):
                result.divergence = point(.bEnded, x, nil, ra, rb)
                return result
            case (nil, let y?):
                result.divergence = point(.aEnded, nil, y, ra, rb)
                return result
            case (let x?, let y?):
                if change(x) != change(y) {
                    result.divergence = point(.event, x, y, ra, rb)
                    return result
                }
                if x.record.recordedDigest != y.record.recordedDigest || ra.engine.digest != rb.engine.digest {
                    result.divergence = point(.digest, x, y, ra, rb)
                    return result
                }
                result.eventsCompared += 1
            }
        }
    }

    /// What an event or load record changes, as canonical JSON: the event, or the load's
    /// profile, app and state.
    private static func change(_ t: TracedRecord) -> [UInt8] {
        switch t.record {
        case .event(let e): return e.envelope.event.jsonBytes()
        case .load(let l): return l.jsonBytes()
        default: return []
        }
    }

    /// Applies records up to and including the next event or load; returns its record.
    private static func nextEvent(_ cursor: inout TraceCursor, _ replayer: inout TraceReplayer, trace: String) throws(TraceError) -> TracedRecord? {
        while let traced = try cursor.next() {
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw TraceError("trace \(trace): seq \(d.seq) cannot be applied: \(error)", line: traced.line, offset: traced.offset)
            }
            if traced.record.appliedSeq != nil { return traced }
        }
        return nil
    }

    private static func point(_ kind: TraceComparison.Point.Kind, _ x: TracedRecord?, _ y: TracedRecord?,
                              _ ra: TraceReplayer, _ rb: TraceReplayer) -> TraceComparison.Point {
        func parts(_ t: TracedRecord?) -> (Int?, Int?, [UInt8]?, UInt64?) {
            guard let t, let seq = t.record.appliedSeq else { return (nil, nil, nil, nil) }
            return (seq, t.line, change(t), t.record.recordedDigest)
        }
        let (sa, la, ea, da) = parts(x)
        let (sb, lb, eb, db) = parts(y)
        let differences = x != nil && y != nil
            ? LayoutDiff.differences(expected: ra.engine.layoutJSON(), actual: rb.engine.layoutJSON()) : []
        return .init(kind: kind, seqA: sa, seqB: sb, lineA: la, lineB: lb, eventA: ea, eventB: eb, digestA: da, digestB: db,
                     layoutDifferences: differences)
    }

    /// What a replay depends on: profile, app, config, and the starting point. Names and dates are not compared.
    static func headerDifferences(_ a: TraceHeader, _ b: TraceHeader) -> [LayoutDifference] {
        func json(_ write: (inout JSONWriter) -> Void) -> JSONValue {
            var w = JSONWriter()
            write(&w)
            return (try? JSON.parse(w.bytes)) ?? .null
        }
        var out: [LayoutDifference] = []
        func prefixed(_ name: String, _ diffs: [LayoutDifference]) {
            out += diffs.map { LayoutDifference(path: $0.path.isEmpty ? name : "\(name).\($0.path)", expected: $0.expected, actual: $0.actual) }
        }
        prefixed("profile", LayoutDiff.differences(expected: json { a.profile.write(to: &$0) }, actual: json { b.profile.write(to: &$0) }))
        prefixed("app", LayoutDiff.differences(expected: a.app.source, actual: b.app.source, limit: 5))
        prefixed("config", LayoutDiff.differences(expected: a.config, actual: b.config))
        if a.initialSeq != b.initialSeq {
            out.append(LayoutDifference(path: "initial.seq", expected: String(a.initialSeq), actual: String(b.initialSeq)))
        }
        prefixed("initial.state", LayoutDiff.differences(expected: json { a.initialState.write(to: &$0, app: a.app) },
                                                         actual: json { b.initialState.write(to: &$0, app: b.app) }))
        return out
    }
}
