/// `crease trace rebase` (issue 28): a trace recorded by another build, rewritten with this
/// build's digests after an intended rule change. Traces from real hardware cannot be
/// recorded again; their inputs are what matters, and those are kept: the same events,
/// loads, marks, batches and observations with their times, the new digests (and layouts,
/// where the trace records them), each observation judged again. The header says whose
/// digests it held before, by whom it was rebased and when. A trace this build already
/// agrees with is left byte for byte as it is, so rebasing twice changes nothing.
public enum TraceRebase {
    public struct Flip: Sendable, Equatable {
        public var seq: Int
        public var from: Verdict
        public var to: Verdict
    }

    /// What rebasing changed.
    public struct Change: Sendable {
        /// Events (and loads and gaps) whose digest is another now.
        public var digestsChanged = 0
        public var firstSeq: Int?
        /// The first changed layout's fields, where the trace recorded that layout.
        public var firstDifferences: [LayoutDifference] = []
        public var flips: [Flip] = []
        /// Looks kept as a view of a layout these rules no longer give: their verdicts stay as recorded.
        public var looksUnjudged = 0
        public var initialChanged = false
        /// An older format version (its digest algorithm) is rewritten in the current one.
        public var versionChanged = false

        public var isEmpty: Bool { digestsChanged == 0 && flips.isEmpty && !initialChanged && !versionChanged }
    }

    public static func rebase(_ file: TraceFile, by build: String, at time: String) throws(TraceError) -> (bytes: [UInt8], change: Change) {
        let old = file.header
        var header = old
        header.version = TraceHeader.currentVersion
        var change = Change()
        change.versionChanged = old.version != TraceHeader.currentVersion
        // The replay's engine computes this build's digests (the header's version says which).
        var replayer = TraceReplayer(header: header, verify: false)
        header.initialDigest = replayer.engine.digest
        // Whether a layout changed is asked in the digest the trace holds: an older version's
        // algorithm gives other digests for the same layout.
        let recorded = old.digestAlgorithm
        func differs(_ digest: UInt64, _ engine: Engine) -> Bool { recorded.digest(engine.body) != digest }
        change.initialChanged = differs(old.initialDigest, replayer.engine)
        var body: [UInt8] = []
        var lastDigest = replayer.engine.digest
        // The field-level difference: of the first changed layout the old trace recorded
        // (layout records follow only the events that changed the old build's layout).
        var awaitingDiff: (seq: Int, layout: [UInt8])? = change.initialChanged && old.layouts
            ? (old.initialSeq, replayer.engine.layoutJSON()) : nil
        if old.layouts { TraceEncoding.appendLayout(seq: replayer.engine.seq, layout: replayer.engine.layoutJSON(), to: &body) }
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            if case .layout(let seq, let json) = traced.record {
                if let a = awaitingDiff, a.seq == seq, change.firstDifferences.isEmpty {
                    change.firstDifferences = LayoutDiff.differences(expected: json, actual: a.layout)
                    awaitingDiff = nil
                }
                continue
            }
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw TraceError("seq \(d.seq) cannot be applied by this build: \(error)", line: traced.line, offset: traced.offset)
            }
            let engine = replayer.engine
            switch traced.record {
            case .event(var e):
                if differs(e.digest, engine) {
                    change.digestsChanged += 1
                    if change.firstSeq == nil { change.firstSeq = e.seq }
                    if old.layouts, change.firstDifferences.isEmpty { awaitingDiff = (e.seq, engine.layoutJSON()) }
                }
                e.digest = engine.digest
                TraceEncoding.appendEvent(e, to: &body)
                if old.layouts, engine.digest != lastDigest { TraceEncoding.appendLayout(seq: engine.seq, layout: engine.layoutJSON(), to: &body) }
            case .load(var l):
                if differs(l.digest, engine) { change.digestsChanged += 1; change.firstSeq = change.firstSeq ?? l.seq }
                l.digest = engine.digest
                TraceEncoding.appendLoad(l, to: &body)
                if old.layouts { TraceEncoding.appendLayout(seq: engine.seq, layout: engine.layoutJSON(), to: &body) }
            case .gap(let g):
                if differs(g.digest, engine) { change.digestsChanged += 1; change.firstSeq = change.firstSeq ?? g.seq }
                TraceEncoding.appendGap(engine: engine, t: g.t, lost: g.lost, reason: g.reason, to: &body)
            case .observation(var o):
                if replayer.lastObservation?.isResolved == false { change.looksUnjudged += 1 }
                if let judged = replayer.lastJudged {
                    if judged.verdict != o.result.verdict { change.flips.append(Flip(seq: o.seq, from: o.result.verdict, to: judged.verdict)) }
                    o.result = judged
                }
                TraceEncoding.appendObservation(o, to: &body)
            case .mark(let seq, let t, let label):
                TraceEncoding.appendMark(seq: seq, t: t, label: label, to: &body)
            case .frame(let seq, let t, let client, let verdict):
                TraceEncoding.appendFrame(seq: seq, t: t, client: client, verdict: verdict, to: &body)
            case .batch(let first, let last):
                TraceEncoding.appendBatch(first: first, last: last, to: &body)
            case .layout:
                break
            }
            lastDigest = engine.digest
        }
        guard !change.isEmpty else { return (file.bytes, change) }
        header.rebased = .init(from: "\(old.daemon) (trace format version \(old.version))", by: build, at: time)
        var bytes = header.encode()
        bytes.append(0x0A)
        bytes += body
        return (bytes, change)
    }
}
