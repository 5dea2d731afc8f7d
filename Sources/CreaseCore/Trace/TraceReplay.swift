/// Where a replay stopped agreeing with the trace.
public struct Divergence: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// The header's state gives another layout than the one it records.
        case initialDigest
        /// The event applied but the layout digest differs.
        case digest
        /// The event was rejected, though the daemon had applied it.
        case rejected(InputError)
        /// The digests agree but the recorded layout (--trace-layouts) differs.
        case layout
        /// The state a gap record resumes from gives another layout than it records.
        case gapDigest
        /// What a load record put in place gives another layout than it records.
        case loadDigest
        /// An observation was judged otherwise than the trace records.
        case verdict(recorded: ConformanceResult, replayed: ConformanceResult)
        /// A look kept as a view of a layout the replay's judge does not keep (never current
        /// then), or that this build views otherwise.
        case unresolved(ObservedReference)
    }
    public var kind: Kind
    public var seq: Int
    public var line: Int
    /// The event, as canonical JSON (nil for the header and gaps).
    public var event: [UInt8]?
    public var expected: UInt64
    public var actual: UInt64
    /// Field by field, where the trace holds the layout for this seq.
    public var differences: [LayoutDifference]

    public var summary: String {
        let eventText = event.map { " " + String(decoding: $0, as: UTF8.self) } ?? ""
        switch kind {
        case .initialDigest:
            return "the initial state (seq \(seq)) gives digest \(Digest.hex(actual)), the header records \(Digest.hex(expected))"
        case .digest:
            return "seq \(seq) (line \(line)):\(eventText): expected digest \(Digest.hex(expected)), got \(Digest.hex(actual))"
        case .rejected(let error):
            return "seq \(seq) (line \(line)):\(eventText): the event was rejected: \(error)"
        case .layout:
            return "seq \(seq) (line \(line)): digest \(Digest.hex(actual)) matches but the recorded layout differs"
        case .gapDigest:
            return "seq \(seq) (line \(line)): after a gap, the recorded state gives digest \(Digest.hex(actual)), the trace records \(Digest.hex(expected))"
        case .loadDigest:
            return "seq \(seq) (line \(line)): the loaded state gives digest \(Digest.hex(actual)), the trace records \(Digest.hex(expected))"
        case .verdict(let recorded, let replayed):
            func text(_ r: ConformanceResult) -> String {
                "\(r.verdict.rawValue) against seq \(r.layoutSeq)" + (r.matchedSeq.map { ", matched seq \($0)" } ?? "")
                    + ", \(r.differences.count) difference\(r.differences.count == 1 ? "" : "s")"
            }
            return "seq \(seq) (line \(line)): observation: the trace records \(text(recorded)); the replay gives \(text(replayed))"
        case .unresolved(let reference):
            return "seq \(seq) (line \(line)): observation: the trace keeps it as the \(reference.view.rawValue) view of layout "
                + "\(Digest.hex(reference.layout)), which the replay does not rebuild: no such layout was current then, or this build views it otherwise"
        }
    }
}

/// Applies a trace's records to an engine, checking each digest when verifying.
/// Structural problems (seqs out of order, a batch that names unapplied events)
/// throw a TraceError; disagreements with the engine are returned as a Divergence.
public struct TraceReplayer: Sendable {
    public private(set) var engine: Engine
    public let verify: Bool
    public private(set) var eventsApplied = 0
    /// `t` of the latest record that has one.
    public private(set) var lastT: UInt64
    private var lastEventT: UInt64 = 0
    /// The last seq covered by a batch record, so batches never overlap; and the seq
    /// the file (or a gap) starts at, which the first batch may reach back across.
    private var lastBatchEnd: Int
    private var batchFloor: Int
    /// Judges the recorded observations again against the layouts the replay publishes.
    public private(set) var conformance: ConformanceTracker
    /// Observations whose verdict was checked, and those that depend on what came before
    /// the file (within a settle window of its start or of a gap) and were not.
    public private(set) var observationsChecked = 0
    public private(set) var observationsUnchecked = 0
    /// The verdict the replay gave the last observation record (what a rebase records).
    public private(set) var lastJudged: ConformanceResult?
    /// The last observation record, its look rebuilt when the trace kept it as a reference
    /// (unresolved when the replay does not have its layout: `lastJudged` is nil then).
    public private(set) var lastObservation: TraceObservation?

    /// Another profile in place of the trace's own (calibration's candidates), for its header and loads.
    private let profileOverride: DeviceProfile?
    /// A rebased trace keeps a look whose layout the new rules changed as recorded: no
    /// build can rebuild it, so it is left unchecked rather than called a divergence.
    private let rebased: Bool

    public init(header: TraceHeader, verify: Bool, profile: DeviceProfile? = nil) {
        profileOverride = profile
        rebased = header.rebased != nil
        engine = header.makeEngine(profile: profile)
        self.verify = verify
        lastT = header.initialT
        lastBatchEnd = header.initialSeq
        batchFloor = header.initialSeq
        conformance = ConformanceTracker(layout: engine.layout, digest: engine.digest, seq: header.initialSeq, t: header.initialT,
                                         windowNs: ConformanceTracker.windowNs(config: header.config),
                                         knowsAll: header.part == 0 && (header.reason == "start" || header.reason == "minimize"))
    }

    /// Whether the header's recorded digest is the one this engine computes for its state.
    public func checkInitial(_ header: TraceHeader) -> Divergence? {
        guard engine.digest != header.initialDigest else { return nil }
        return Divergence(kind: .initialDigest, seq: header.initialSeq, line: 1, event: nil,
                          expected: header.initialDigest, actual: engine.digest, differences: [])
    }

    /// `resolved`: the observation record's look, rebuilt by a replay with the trace's own
    /// profile, for a replay with another (a look kept as a reference names a layout this
    /// profile may not give).
    public mutating func apply(_ traced: TracedRecord, resolved: TraceObservation? = nil) throws(TraceError) -> Divergence? {
        switch traced.record {
        case .event(let e):
            try follow(seq: e.seq, t: e.t, traced)
            do {
                if try engine.apply(e.envelope.event, at: Int64(e.t)) {
                    conformance.publish(layout: engine.layout, digest: engine.digest, seq: e.seq, t: e.t)
                }
            } catch {
                return Divergence(kind: .rejected(error), seq: e.seq, line: traced.line, event: e.envelope.event.jsonBytes(),
                                  expected: e.digest, actual: engine.digest, differences: [])
            }
            eventsApplied += 1
            if verify, engine.digest != e.digest {
                return Divergence(kind: .digest, seq: e.seq, line: traced.line, event: e.envelope.event.jsonBytes(),
                                  expected: e.digest, actual: engine.digest, differences: [])
            }
        case .mark(let seq, let t, _):
            guard seq == engine.seq else {
                throw TraceError("a mark at seq \(seq) where the replay is at seq \(engine.seq)", line: traced.line, offset: traced.offset)
            }
            lastT = max(lastT, t)
        case .frame(let seq, let t, _, let verdict):
            // A frame's verdict is recorded after the frame: it refers to a seq already applied.
            guard seq == engine.seq, verdict.refSeq <= seq else {
                throw TraceError("a frame verdict at seq \(seq) (about seq \(verdict.refSeq)) where the replay is at seq \(engine.seq)",
                                 line: traced.line, offset: traced.offset)
            }
            lastT = max(lastT, t)
        case .batch(let first, let last):
            guard last == engine.seq, first <= last, first > lastBatchEnd || lastBatchEnd == batchFloor else {
                throw TraceError("batch [\(first), \(last)] does not end at the last applied event (seq \(engine.seq)) or overlaps the one before",
                                 line: traced.line, offset: traced.offset)
            }
            lastBatchEnd = last
        case .layout(let seq, let json):
            guard seq == engine.seq else {
                throw TraceError("a layout for seq \(seq) where the replay is at seq \(engine.seq)", line: traced.line, offset: traced.offset)
            }
            if verify {
                let actual = engine.layoutJSON()
                if actual != json {
                    return Divergence(kind: .layout, seq: seq, line: traced.line, event: nil, expected: engine.digest,
                                      actual: engine.digest, differences: LayoutDiff.differences(expected: json, actual: actual))
                }
            }
        case .load(let l):
            try follow(seq: l.seq, t: l.t, traced)
            engine = l.makeEngine(profile: profileOverride)
            conformance.publish(layout: engine.layout, digest: engine.digest, seq: l.seq, t: l.t)
            if verify, engine.digest != l.digest {
                return Divergence(kind: .loadDigest, seq: l.seq, line: traced.line, event: nil, expected: l.digest,
                                  actual: engine.digest, differences: [])
            }
        case .gap(let g):
            guard g.seq >= engine.seq else {
                throw TraceError("a gap resuming at seq \(g.seq) is behind the replay (seq \(engine.seq))", line: traced.line, offset: traced.offset)
            }
            let state: DeviceState
            do { state = try DeviceState.decode(g.state, app: engine.app) } catch {
                throw TraceError("the gap's state does not fit the app: \(error)", line: traced.line, offset: traced.offset)
            }
            engine = Engine(profile: engine.profile, app: engine.app, state: state, seq: g.seq, digestAlgorithm: engine.digestAlgorithm)
            conformance.restart(layout: engine.layout, digest: engine.digest, seq: g.seq, t: g.t)
            lastT = max(lastT, g.t)
            lastBatchEnd = g.seq
            batchFloor = g.seq
            if verify, engine.digest != g.digest {
                return Divergence(kind: .gapDigest, seq: g.seq, line: traced.line, event: nil, expected: g.digest,
                                  actual: engine.digest, differences: [])
            }
        case .observation(var o):
            guard o.seq == engine.seq else {
                throw TraceError("an observation at seq \(o.seq) where the replay is at seq \(engine.seq)", line: traced.line, offset: traced.offset)
            }
            lastT = max(lastT, o.t)
            if let resolved, resolved.isResolved { o = resolved } else if profileOverride != nil, !o.isResolved {
                throw TraceError("an observation at seq \(o.seq) is kept as a view of a layout; a replay with another profile needs it rebuilt first",
                                 line: traced.line, offset: traced.offset)
            }
            lastJudged = nil
            guard o.resolve(conformance) else {
                lastObservation = o
                guard verify, !rebased, !conformance.mayPredateKnowledge(captured: o.captured ?? o.t...o.t) else {
                    if verify { observationsUnchecked += 1 }
                    break
                }
                return Divergence(kind: .unresolved(o.observedAs!), seq: o.seq, line: traced.line, event: nil,
                                  expected: engine.digest, actual: engine.digest, differences: [])
            }
            lastObservation = o
            let judged = conformance.observe(o.request, seq: o.seq, t: o.t, captured: o.captured)
            lastJudged = judged.result
            guard verify else { break }
            if conformance.agrees(recorded: o.result, replayed: judged.result) {
                observationsChecked += 1
            } else if judged.checkable {
                return Divergence(kind: .verdict(recorded: o.result, replayed: judged.result), seq: o.seq, line: traced.line, event: nil,
                                  expected: engine.digest, actual: engine.digest, differences: [])
            } else {
                observationsUnchecked += 1
            }
        }
        return nil
    }

    /// An event or a load: the next seq, read no earlier than the one before. Both are
    /// stamped when their line is read, so their t never goes back; a mark or a rotation
    /// is stamped when handled, which may be after later events of the same read.
    private mutating func follow(seq: Int, t: UInt64, _ traced: TracedRecord) throws(TraceError) {
        guard seq == engine.seq + 1 else {
            throw TraceError("seq \(seq) does not follow seq \(engine.seq)", line: traced.line, offset: traced.offset)
        }
        guard t >= lastEventT else {
            throw TraceError("t \(t) goes back from the previous event's \(lastEventT)", line: traced.line, offset: traced.offset)
        }
        lastEventT = t
        lastT = max(lastT, t)
    }
}

/// What replaying a whole file found.
public struct ReplayOutcome: Sendable {
    public var engine: Engine
    public var eventsApplied: Int
    public var lastT: UInt64
    public var divergence: Divergence?
    /// Observations whose verdicts were checked, and those that could not be (see `TraceReplayer`).
    public var observationsChecked: Int
    public var observationsUnchecked: Int
    /// Lines that were no record, skipped (a file that `skipsBadRecords`).
    public var skipped: [TraceError] = []

    public init(_ replayer: TraceReplayer, divergence: Divergence?) {
        engine = replayer.engine
        eventsApplied = replayer.eventsApplied
        lastT = replayer.lastT
        self.divergence = divergence
        observationsChecked = replayer.observationsChecked
        observationsUnchecked = replayer.observationsUnchecked
    }
}

public enum TraceReplay {
    /// The recorded batches, in file order: the daemon published each as one layout, at its last event.
    public static func batches(_ file: TraceFile) throws(TraceError) -> [ClosedRange<Int>] {
        var out: [ClosedRange<Int>] = []
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            if case .batch(let first, let last) = traced.record { out.append(first...last) }
        }
        return out
    }


    /// Replays every complete record, stopping at the first divergence when verifying.
    /// A divergent event followed by its recorded layout gets a field-by-field difference.
    public static func run(_ file: TraceFile, verify: Bool) throws(TraceError) -> ReplayOutcome {
        var replayer = TraceReplayer(header: file.header, verify: verify)
        if verify, let d = replayer.checkInitial(file.header) {
            return ReplayOutcome(replayer, divergence: d)
        }
        var cursor = file.cursor()
        func outcome(_ d: Divergence?) -> ReplayOutcome {
            var o = ReplayOutcome(replayer, divergence: d)
            o.skipped = cursor.skipped
            return o
        }
        while let traced = try cursor.next() {
            if var d = try replayer.apply(traced) {
                if d.kind == .digest, let next = try? cursor.next(), case .layout(let seq, let json) = next.record, seq == d.seq {
                    d.differences = LayoutDiff.differences(expected: json, actual: replayer.engine.layoutJSON())
                }
                return outcome(d)
            }
        }
        return outcome(nil)
    }
}
