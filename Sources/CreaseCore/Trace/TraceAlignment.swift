/// `crease trace diff ORIGINAL REPLAY --by-event`: a trace and its replay on hardware, lined
/// up by what happened rather than by seq. A hardware replay has other seqs (the reset's
/// events, hinge readings folded into a motor's moves, angles as read back) and other times,
/// so seq-by-seq comparison says nothing; this lines up the moves (a run of hinge readings is
/// one fold, to its last reading, as the replay does it) and the looks in order, and for each
/// look says whether the verdicts agree, how its timing differed (from the move before it to
/// the look) and what the device showed differently (the observed objects' differences).
public struct TraceAlignment: Sendable {
    /// One move of a trace: an event, or a run of hinge readings as its last.
    public struct Move: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        public var event: Event
    }

    /// One look of a trace, with the move before it.
    public struct Look: Sendable {
        public var seq: Int
        public var t: UInt64
        public var observed: JSONValue
        public var result: ConformanceResult
        /// The time from the last move before it, when there was one.
        public var sinceMoveNs: UInt64?
        /// The `observe` command's id, when it had one (a report finds its screenshot by it).
        public var id: JSONValue? = nil
    }

    /// A pair of looks, the n-th of each trace.
    public struct LookPair: Sendable {
        public var index: Int
        public var original: Look
        public var replay: Look
        public var sameVerdict: Bool { original.result.verdict == replay.result.verdict }
        /// What the devices showed differently (original -> replay).
        public var geometry: [LayoutDifference]
        /// How much later (positive) or sooner the replay looked after its move than the original.
        public var timingNs: Int64? {
            guard let a = original.sinceMoveNs, let b = replay.sinceMoveNs else { return nil }
            return Int64(bitPattern: b) - Int64(bitPattern: a)
        }
    }

    /// A move the two do not share: at `index`, the original's and the replay's (nil where
    /// one has run out).
    public struct MoveDifference: Sendable {
        public var index: Int
        public var original: Move?
        public var replay: Move?
    }

    public var originalMoves: Int
    public var replayMoves: Int
    public var looks: [LookPair]
    /// Looks of one trace with none in the other at their place.
    public var unpairedLooks: Int
    /// The first move that differs (by kind, or a hinge beyond the tolerance), if any.
    public var firstMoveDifference: MoveDifference?
    /// Where the replay lies in its file: between the marks of its run, or the whole file.
    public var replaySeqs: ClosedRange<Int>?

    /// The first pair whose verdicts differ.
    public var firstVerdictDifference: LookPair? { looks.first { !$0.sameVerdict } }

    /// Lines `original` and `replay` up. `run`: the replay's run (its `replay of …, run N:
    /// begin` and `end` marks); nil takes the first marked run, or the whole file when none
    /// is marked. `hingeTolerance`: degrees two folds may differ and still be one move.
    public static func align(original: TraceFile, replay: TraceFile, run: Int? = nil, hingeTolerance: Double = 1) throws(TraceError) -> TraceAlignment {
        let a = try collect(original, run: nil, marked: false)
        // A replay's run lies between its marks; a file with none is taken whole, as an original.
        var b = try collect(replay, run: run, marked: true)
        if !b.sawMarks {
            if let run { throw TraceError("no replay run \(run) is marked in this trace (\"replay of …, run \(run): begin\" … \": end\")", line: 0, offset: 0) }
            b = try collect(replay, run: nil, marked: false)
        }
        var pairs: [LookPair] = []
        for i in 0..<min(a.looks.count, b.looks.count) {
            let x = a.looks[i], y = b.looks[i]
            pairs.append(LookPair(index: i + 1, original: x, replay: y, geometry: geometry(x.observed, y.observed)))
        }
        var difference: MoveDifference?
        for i in 0..<max(a.moves.count, b.moves.count) {
            let x = i < a.moves.count ? a.moves[i] : nil, y = i < b.moves.count ? b.moves[i] : nil
            guard let x, let y, same(x.event, y.event, hingeTolerance: hingeTolerance) else {
                difference = MoveDifference(index: i + 1, original: x, replay: y)
                break
            }
        }
        return TraceAlignment(originalMoves: a.moves.count, replayMoves: b.moves.count, looks: pairs,
                              unpairedLooks: abs(a.looks.count - b.looks.count), firstMoveDifference: difference, replaySeqs: b.range)
    }

    /// The observed objects' differences, an item named by its id (`items[share].frame.y`)
    /// where both list the same item at that place, as verdicts name them.
    static func geometry(_ original: JSONValue, _ replay: JSONValue) -> [LayoutDifference] {
        func ids(_ v: JSONValue) -> [String?] {
            guard case .array(let items)? = v["items"] else { return [] }
            return items.map { if case .string(let id)? = $0["id"] { id } else { nil } }
        }
        let a = ids(original), b = ids(replay)
        return LayoutDiff.differences(expected: original, actual: replay).map { d in
            guard d.path.hasPrefix("items["), let close = d.path.firstIndex(of: "]"),
                  let n = Int(d.path[d.path.index(d.path.startIndex, offsetBy: 6)..<close]),
                  n < a.count, n < b.count, let id = a[n], b[n] == id else { return d }
            var named = d
            named.path = "items[\(id)]" + d.path[d.path.index(after: close)...]
            return named
        }
    }

    static func same(_ x: Event, _ y: Event, hingeTolerance: Double) -> Bool {
        if case .hinge(let p) = x, case .hinge(let q) = y { return abs(p - q) <= hingeTolerance }
        return x.jsonBytes() == y.jsonBytes()
    }

    private struct Collected {
        var moves: [Move] = []
        var looks: [Look] = []
        var range: ClosedRange<Int>?
        var sawMarks = false
    }

    /// The moves and looks of a file (from its last reset: a load of the state it began
    /// in), within a run's marks when `marked`.
    private static func collect(_ file: TraceFile, run: Int?, marked: Bool) throws(TraceError) -> Collected {
        var out = Collected()
        var cursor = file.resolvingCursor()
        var inside = !marked
        var sawMarks = false
        var begin: Int?
        var pendingHinge: Move?
        var direction = 0.0   // of the hinge run pending: 1 opening, -1 closing, 0 not yet known
        var lastMoveT: UInt64?
        func flush(_ c: inout Collected) {
            if let h = pendingHinge { c.moves.append(h); pendingHinge = nil }
            direction = 0
        }
        while let traced = try cursor.next() {
            switch traced.record {
            case .mark(let seq, _, let label):
                guard marked, let (n, edge) = runMark(label) else { continue }
                sawMarks = true
                if edge == "begin", inside == false, run == nil || run == n, out.range == nil {
                    inside = true
                    begin = seq
                    lastMoveT = nil
                } else if edge == "end", inside, let b = begin {
                    flush(&out)
                    out.range = b...seq
                    inside = false
                }
            case .load(let l):
                if l.state == file.header.initialState && l.app == file.header.app && !marked {
                    out = Collected()
                    pendingHinge = nil
                    lastMoveT = nil
                }
            case .event(let e):
                let move = Move(seq: e.seq, t: e.t, event: e.envelope.event)
                guard inside else { continue }
                if case .hinge(let angle) = e.envelope.event {
                    if let p = pendingHinge, case .hinge(let before) = p.event {
                        let turn = angle == before ? 0.0 : (angle > before ? 1.0 : -1.0)
                        if direction != 0, turn != 0, turn != direction {
                            flush(&out)   // a turning point: the motor's move ends there
                            direction = 0
                        } else if direction == 0 {
                            direction = turn
                        }
                    }
                    pendingHinge = move
                } else {
                    flush(&out)
                    out.moves.append(move)
                }
                lastMoveT = e.t
            case .observation(let o):
                guard o.isResolved else { throw o.unresolvedError(line: traced.line, offset: traced.offset, reader: "trace diff") }
                var w = JSONWriter()
                o.request.observed.write(to: &w)
                let observed = (try? JSON.parse(w.bytes)) ?? .null
                let look = Look(seq: o.seq, t: o.t, observed: observed, result: o.result, sinceMoveNs: lastMoveT.map { o.t >= $0 ? o.t - $0 : 0 },
                                id: o.request.id)
                guard inside else { continue }
                flush(&out)
                out.looks.append(look)
            case .gap(let g):
                throw TraceError("records were lost before seq \(g.seq) (a gap): line them up after it (crease trace slice)", line: traced.line, offset: traced.offset)
            case .batch, .layout, .frame:
                break
            }
        }
        flush(&out)
        out.sawMarks = sawMarks
        if marked && !sawMarks { return out }
        if marked && out.range == nil {
            throw TraceError(run.map { "no replay run \($0) is marked in this trace (\"replay of …, run \($0): begin\" … \": end\")" }
                             ?? "a replay run is begun but not ended in this trace", line: 0, offset: 0)
        }
        return out
    }

    /// `replay of NAME, run N: begin` -> (N, "begin").
    static func runMark(_ label: String) -> (Int, String)? {
        guard label.hasPrefix("replay of ") else { return nil }
        let edges = [(": begin", "begin"), (": end", "end")]
        guard let (suffix, edge) = edges.first(where: { label.hasSuffix($0.0) }) else { return nil }
        let head = label.dropLast(suffix.count)
        // The run number: the digits after the last ", run ".
        let digits = head.reversed().prefix { $0.isNumber }
        let before = head.dropLast(digits.count)
        guard !digits.isEmpty, before.hasSuffix(", run "), let n = Int(String(digits.reversed())) else { return nil }
        return (n, edge)
    }
}
