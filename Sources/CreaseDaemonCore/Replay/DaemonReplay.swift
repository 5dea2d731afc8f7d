import CreaseCore

/// `crease replay --verify --daemon TRACE`: the trace fed through the daemon's own decision
/// core (`DaemonCore`), its events as the lines the rig sent, read when the trace says, each
/// batch ending when the trace says it was queued. What the core then decides to record is
/// checked against what the trace holds, record by record:
///
/// - every event: its seq, its digest, its client and when it was read (through the daemon's
///   line decoding and fast paths, not the decoded events the plain replay applies);
/// - every batch: which events the core published as one layout;
/// - every mark, load and observation (the verdict judged again by the core's settle window).
///
/// A trace records the rigs' lines, not every input the daemon took (who connected,
/// commands that record nothing, the disk's reports), so acknowledgements and pushes are not
/// checked here: `creased --record-inputs` and `crease hunt` check those. A gap starts the
/// core again from the state the trace resumes with.
public enum DaemonReplay {
    public struct Divergence: Sendable, Equatable {
        public var seq: Int
        /// The trace line whose input the core was deciding.
        public var line: Int
        public var input: String
        public var recorded: String
        public var decided: String
    }

    public struct Outcome: Sendable {
        public var events = 0
        public var batches = 0
        public var marks = 0
        public var loads = 0
        public var observations = 0
        /// Runs of the core: one, and one more after each gap.
        public var segments = 1
        public var divergence: Divergence?
    }

    /// Where the replayed core's clock starts: any time, as each record's `t` is relative to it.
    public static let originNs: UInt64 = 1_000_000_000_000

    /// What the core must decide next, as the trace recorded it.
    private enum Recorded: Equatable, CustomStringConvertible {
        case event(seq: Int, digest: UInt64, client: Int, t: UInt64)
        case batch(first: Int, last: Int)
        case mark(seq: Int, label: String)
        case frame(seq: Int, verdict: FrameVerdict)
        case load(seq: Int, digest: UInt64)
        case observation(seq: Int, verdict: String, layoutSeq: Int, matchedSeq: Int?)

        var description: String {
            switch self {
            case .event(let seq, let digest, let client, let t): "event seq \(seq) from client \(client) read at t \(t), digest \(Digest.hex(digest))"
            case .batch(let first, let last): "batch \(first)…\(last)"
            case .mark(let seq, let label): "mark \"\(label)\" at seq \(seq)"
            case .frame(let seq, let verdict): "frame verdict \(verdict.kind.rawValue) at seq \(seq)"
            case .load(let seq, let digest): "load at seq \(seq), digest \(Digest.hex(digest))"
            case .observation(let seq, let verdict, let layoutSeq, let matched):
                "observation at seq \(seq): \(verdict) against the layout of seq \(layoutSeq), matching \(matched.map(String.init) ?? "none")"
            }
        }
    }

    private struct Run {
        var core: DaemonCore
        var actions = DaemonActions(logThreshold: .error)
        var connected: Set<Int> = []
        /// The open batch's cut (ns after the origin): when the trace says it was queued.
        var openCut: UInt64?
        var expected: [Recorded] = []
        var outcome = Outcome()
        var line = 0
        var input = ""
    }

    public static func run(_ file: TraceFile) throws(TraceError) -> Outcome {
        let header = file.header
        func configured(_ key: String, _ fallback: UInt64) -> UInt64 {
            guard case .number(let n)? = header.config[key], n >= 0, n < 1e12 else { return fallback }
            return UInt64(n)
        }
        let budgetUs = configured("budgetUs", 1000)
        let settleMs = configured("settleMs", 500)
        func core(_ engine: Engine) -> DaemonCore {
            var c = DaemonCore(engine: engine,
                               config: .init(daemonName: header.daemon, budgetUs: budgetUs, socketActivated: false, policy: .open,
                                             lineLimit: 64 << 20, settleNs: settleMs * 1_000_000),
                               startNs: originNs)
            var scratch = DaemonActions(logThreshold: .error)
            c.handle(DaemonInput.traceMode(.recording(layouts: header.layouts, repliesWaitForDisk: false)), at: originNs, into: &scratch)
            return c
        }
        var run = Run(core: core(header.makeEngine()))
        // Follows the trace, so a gap's state is read against the app of the moment.
        var replayer = TraceReplayer(header: header, verify: false)
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            run.line = traced.line
            switch traced.record {
            case .event(let e):
                let client = e.client ?? 1
                // Events queued together were one batch; one queued later starts the next.
                let cut = e.t &+ (e.latencyNs ?? 0)
                if let open = run.openCut, open != cut { endBatch(&run) }
                run.openCut = cut
                run.expected.append(.event(seq: e.seq, digest: e.digest, client: client, t: e.t))
                var w = JSONWriter(capacity: 128)
                e.envelope.event.write(to: &w, ts: e.envelope.ts, id: e.envelope.id)
                feed(w.bytes, from: client, at: e.t, describing: "event seq \(e.seq)", &run)
                run.outcome.events += 1
            case .batch(let first, let last):
                run.expected.append(.batch(first: first, last: last))
                run.outcome.batches += 1
            case .mark(let seq, let t, let label):
                endBatch(&run)
                run.expected.append(.mark(seq: seq, label: label))
                var w = JSONWriter(capacity: 64 + label.utf8.count)
                w.beginObject(); w.key("cmd"); w.string("mark"); w.key("label"); w.string(label); w.endObject()
                feed(w.bytes, from: 1, at: t, describing: "mark at seq \(seq)", &run)
                run.outcome.marks += 1
            case .frame(let seq, let t, let client, let verdict):
                endBatch(&run)
                run.expected.append(.frame(seq: seq, verdict: verdict))
                var w = JSONWriter(capacity: 192)
                w.beginObject(); w.key("cmd"); w.string("frame"); verdict.writeMembers(to: &w); w.endObject()
                feed(w.bytes, from: client ?? 1, at: t, describing: "frame verdict at seq \(seq)", &run)
            case .observation(let recorded):
                endBatch(&run)
                // The replayer rebuilds a look the trace keeps as a reference, from the layouts it follows.
                _ = try replayer.apply(traced)
                guard let o = replayer.lastObservation, o.isResolved else {
                    diverge(&run, seq: recorded.seq, recorded: "an observation kept as a view of layout \(Digest.hex(recorded.observedAs?.layout ?? 0))",
                            decided: "no such layout while it was captured")
                    return run.outcome
                }
                run.expected.append(.observation(seq: o.result.seq, verdict: o.result.verdict.rawValue, layoutSeq: o.result.layoutSeq,
                                                 matchedSeq: o.result.matchedSeq))
                feed(o.request.jsonBytes(), from: o.client ?? 1, at: o.t, describing: "observation at seq \(o.seq)", &run)
                run.outcome.observations += 1
                if run.outcome.divergence != nil { return run.outcome }
                continue
            case .load(let l):
                endBatch(&run)
                run.expected.append(.load(seq: l.seq, digest: l.digest))
                var state = JSONWriter(capacity: 1024)
                l.state.write(to: &state, app: l.app)
                let request = LoadRequest(profile: l.profile, app: l.app, state: (try? JSON.parse(state.bytes)) ?? .null, digest: l.digest)
                var w = JSONWriter(capacity: 16 * 1024)
                request.write(to: &w, id: nil)
                feed(w.bytes, from: l.client ?? 1, at: l.t, describing: "load at seq \(l.seq)", &run)
                run.outcome.loads += 1
            case .gap:
                endBatch(&run)
                _ = try replayer.apply(traced)
                if run.outcome.divergence == nil, let left = run.expected.first {
                    diverge(&run, seq: traced.record.seq, recorded: left.description, decided: "nothing before the gap")
                }
                guard run.outcome.divergence == nil else { return run.outcome }
                let outcome = run.outcome
                run = Run(core: core(replayer.engine))
                run.outcome = outcome
                run.outcome.segments += 1
                continue
            case .layout:
                break
            }
            _ = try replayer.apply(traced)
            if run.outcome.divergence != nil { return run.outcome }
        }
        endBatch(&run)
        if run.outcome.divergence == nil, let left = run.expected.first {
            diverge(&run, seq: replayer.engine.seq, recorded: left.description, decided: "nothing more")
        }
        return run.outcome
    }

    /// The open batch ends where the trace says it was queued.
    private static func endBatch(_ run: inout Run) {
        guard let cut = run.openCut else { return }
        run.openCut = nil
        run.input = "the end of the batch queued at t \(cut)"
        run.core.handle(.endOfIteration, at: originNs &+ cut, into: &run.actions)
        check(&run)
    }

    /// One line from `client`, read at `t` (ns after the origin).
    private static func feed(_ line: [UInt8], from client: Int, at t: UInt64, describing input: String, _ run: inout Run) {
        run.input = "\(input) (trace line \(run.line))"
        if run.connected.insert(client).inserted {
            run.core.handle(.connected(client: client, peer: nil), at: originNs &+ t, into: &run.actions)
        }
        line.withUnsafeBytes { run.core.handle(.line($0, client: client, readNs: originNs &+ t), at: originNs &+ t, into: &run.actions) }
        check(&run)
    }

    /// What the core decided to record, against what the trace recorded, in order.
    private static func check(_ run: inout Run) {
        defer { run.actions.removeAll() }
        guard run.outcome.divergence == nil else { return }
        for i in run.actions.list.indices {
            guard case .record(let entry) = run.actions.list[i] else { continue }
            let decided: Recorded
            switch entry {
            case .event(let e):
                decided = .event(seq: e.seq, digest: e.digest, client: e.client, t: e.tNs &- originNs)
            case .batch(let first, let last): decided = .batch(first: first, last: last)
            case .mark(let seq, _, let label): decided = .mark(seq: seq, label: label)
            case .frame(let seq, _, _, let verdict): decided = .frame(seq: seq, verdict: verdict)
            case .load(_, let load): decided = .load(seq: load.seq, digest: load.digest)
            case .observation(_, _, _, let result, _, _):
                decided = .observation(seq: result.seq, verdict: result.verdict.rawValue, layoutSeq: result.layoutSeq, matchedSeq: result.matchedSeq)
            case .queued: continue
            }
            guard let next = run.expected.first else {
                return diverge(&run, seq: decidedSeq(decided), recorded: "nothing", decided: decided.description)
            }
            guard next == decided else { return diverge(&run, seq: decidedSeq(next), recorded: next.description, decided: decided.description) }
            run.expected.removeFirst()
        }
    }

    private static func decidedSeq(_ r: Recorded) -> Int {
        switch r {
        case .event(let seq, _, _, _), .mark(let seq, _), .frame(let seq, _), .load(let seq, _), .observation(let seq, _, _, _): seq
        case .batch(_, let last): last
        }
    }

    private static func diverge(_ run: inout Run, seq: Int, recorded: String, decided: String) {
        run.outcome.divergence = Divergence(seq: seq, line: run.line, input: run.input, recorded: recorded, decided: decided)
    }

    public static func describe(_ d: Divergence) -> [String] {
        ["the daemon's core diverged at seq \(d.seq), deciding \(d.input):",
         "  the trace recorded: \(d.recorded)",
         "  the core decided:   \(d.decided)"]
    }
}
