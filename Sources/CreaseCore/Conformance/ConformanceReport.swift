/// `crease trace conformance`: what a trace's observations add up to. Read from the
/// observation records as the daemon judged them (`crease replay --verify` checks that
/// a replay judges them the same).
public struct ConformanceReport: Sendable {
    /// Counts in the order of `Verdict.allCases`.
    public var counts = [Int](repeating: 0, count: Verdict.allCases.count)
    public var observations: [TraceObservation] = []
    public var firstT: UInt64?
    public var lastT: UInt64?

    public func count(_ v: Verdict) -> Int { counts[Verdict.allCases.firstIndex(of: v)!] }
    public var total: Int { observations.count }

    /// One per layout the rig observed (by the seq of its push), in the order first observed.
    public struct LayoutCase: Sendable {
        public var layoutSeq: Int
        public var observations: [TraceObservation]
        public var mismatches: [TraceObservation] { observations.filter { $0.result.verdict == .mismatch } }
        public func count(_ v: Verdict) -> Int { observations.lazy.filter { $0.result.verdict == v }.count }
    }
    public var cases: [LayoutCase] = []

    /// A thing that differed in mismatching observations, and in how many of them.
    public struct Subject: Sendable, Equatable {
        public var subject: String
        public var mismatches: Int
        /// The paths that differed, in order of first appearance.
        public var paths: [String]
    }
    /// Most mismatches first; ties in order of first appearance.
    public var worst: [Subject] = []

    /// A stretch of consecutive mismatching observations (no match or stale between them).
    public struct Range: Sendable, Equatable {
        public var from: UInt64
        public var to: UInt64
        public var fromSeq: Int
        public var toSeq: Int
        public var observations: Int
    }
    public var mismatchRanges: [Range] = []

    // Where each case, subject and path already is: looked up, never iterated, so a
    // report is linear in its observations and their differences (scanning the lists
    // took 547 s for 20,000 observations).
    private var caseIndex: [Int: Int] = [:]
    private var subjectIndex: [[UInt8]: Int] = [:]
    private var subjectPaths: [Set<[UInt8]>] = []

    public init(_ file: TraceFile) throws(TraceError) {
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            if case .observation(let o) = traced.record { add(o) }
        }
        worst.sort { $0.mismatches > $1.mismatches }   // stable: ties keep their first appearance
    }

    private mutating func add(_ o: TraceObservation) {
        observations.append(o)
        counts[Verdict.allCases.firstIndex(of: o.result.verdict)!] += 1
        firstT = firstT ?? o.t
        lastT = o.t
        if let i = caseIndex[o.result.layoutSeq] {
            cases[i].observations.append(o)
        } else {
            caseIndex[o.result.layoutSeq] = cases.count
            cases.append(LayoutCase(layoutSeq: o.result.layoutSeq, observations: [o]))
        }
        guard o.result.verdict == .mismatch else { return }
        if let last = observations.dropLast().last, last.result.verdict == .mismatch, !mismatchRanges.isEmpty {
            mismatchRanges[mismatchRanges.count - 1].to = o.t
            mismatchRanges[mismatchRanges.count - 1].toSeq = o.seq
            mismatchRanges[mismatchRanges.count - 1].observations += 1
        } else {
            mismatchRanges.append(Range(from: o.t, to: o.t, fromSeq: o.seq, toSeq: o.seq, observations: 1))
        }
        var counted: Set<Int> = []
        for d in o.result.differences {
            let key = Array(d.subject.utf8)
            let i: Int
            if let found = subjectIndex[key] {
                i = found
            } else {
                i = worst.count
                subjectIndex[key] = i
                worst.append(Subject(subject: d.subject, mismatches: 0, paths: []))
                subjectPaths.append([])
            }
            if counted.insert(i).inserted { worst[i].mismatches += 1 }
            if subjectPaths[i].insert(Array(d.path.utf8)).inserted { worst[i].paths.append(d.path) }
        }
    }

    /// The summary as one JSON object (`--json`).
    public func json(trace: String, startT: UInt64) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("trace"); w.string(trace)
        w.key("observations"); w.int(total)
        for v in Verdict.allCases { w.key(v.rawValue); w.int(count(v)) }
        w.key("firstT"); if let firstT { w.int(Int(firstT &- startT)) } else { w.null() }
        w.key("lastT"); if let lastT { w.int(Int(lastT &- startT)) } else { w.null() }
        w.key("layouts"); w.beginArray()
        for c in cases {
            w.beginObject()
            w.key("layoutSeq"); w.int(c.layoutSeq)
            for v in Verdict.allCases { w.key(v.rawValue); w.int(c.count(v)) }
            w.endObject()
        }
        w.endArray()
        w.key("worst"); w.beginArray()
        for s in worst {
            w.beginObject()
            w.key("subject"); w.string(s.subject)
            w.key("mismatches"); w.int(s.mismatches)
            w.key("paths"); w.beginArray(); for p in s.paths { w.string(p) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key("mismatchRanges"); w.beginArray()
        for r in mismatchRanges {
            w.beginObject()
            w.key("fromT"); w.int(Int(r.from &- startT))
            w.key("toT"); w.int(Int(r.to &- startT))
            w.key("fromSeq"); w.int(r.fromSeq)
            w.key("toSeq"); w.int(r.toSeq)
            w.key("observations"); w.int(r.observations)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.bytes
    }
}
