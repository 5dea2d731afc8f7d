/// One thing a minimized trace keeps: an event, or an observation of the device (judged
/// again against the layouts the kept events publish).
public enum TraceStep: Sendable, Equatable {
    case event(TraceEvent)
    case observation(TraceObservation)

    public var t: UInt64 {
        switch self {
        case .event(let e): e.t
        case .observation(let o): o.t
        }
    }

    public var event: TraceEvent? {
        if case .event(let e) = self { return e }
        return nil
    }
}

/// The pieces of `crease trace minimize`: a trace's steps as a list to shrink, a candidate
/// list replayed and written back as a self-contained trace, and the glitch a candidate is
/// tested for. Every candidate starts from the original header: the same app, profile and
/// initial state, with nothing known before it.
public enum TraceMinimize {
    /// The steps of a file, in order: its events, and its observations when `observations`.
    /// A gap or a load resets the engine to a recorded state that no subset of events would
    /// reach, so a trace with either is refused.
    public static func steps(_ file: TraceFile, observations: Bool) throws(TraceError) -> [TraceStep] {
        var out: [TraceStep] = []
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            switch traced.record {
            case .event(let e): out.append(.event(e))
            case .observation(let o): if observations { out.append(.observation(o)) }
            case .gap(let g):
                throw TraceError("records were lost before seq \(g.seq) (a gap): minimize the part after it (crease trace slice --from \(g.seq + 1))",
                                 line: traced.line, offset: traced.offset)
            case .load(let l):
                throw TraceError("a state was loaded at seq \(l.seq): minimize the part after it (crease trace slice --from \(l.seq + 1))",
                                 line: traced.line, offset: traced.offset)
            case .mark, .batch, .layout: break
            }
        }
        return out
    }

    /// The events of a file, in order (see `steps`).
    public static func events(_ file: TraceFile) throws(TraceError) -> [TraceEvent] {
        try steps(file, observations: false).compactMap(\.event)
    }

    /// A candidate replayed from the header: each event renumbered with the digest this
    /// build computes, each observation judged again; the glitches when asked for. Every
    /// layout counts as published (a candidate has no batches).
    public struct Run: Sendable {
        public var steps: [TraceStep] = []
        public var glitches: [Glitch] = []
        public var engine: Engine
    }

    /// Nil when an event is rejected from the state the earlier ones leave, or the events'
    /// times go back.
    public static func run(header: TraceHeader, steps: [TraceStep], glitches options: GlitchOptions? = nil) -> Run? {
        var engine = header.makeEngine()
        var conformance = ConformanceTracker(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: header.initialT,
                                             windowNs: ConformanceTracker.windowNs(config: header.config))
        var checker = options.map { RunGlitches(header: header, engine: engine, options: $0) }
        var run = Run(engine: engine)
        run.steps.reserveCapacity(steps.count)
        var lastEventT = header.initialT
        for step in steps {
            switch step {
            case .event(var e):
                guard e.t >= lastEventT, let changed = try? engine.apply(e.envelope.event, at: Int64(e.t)) else { return nil }
                lastEventT = e.t
                if changed { conformance.publish(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: e.t) }
                e.seq = engine.seq
                e.digest = engine.digest
                checker?.applied(e, engine: engine, published: true)
                run.steps.append(.event(e))
            case .observation(var o):
                o.seq = engine.seq
                o.result = conformance.observe(o.request, seq: engine.seq, t: o.t, captured: o.captured).result
                if o.result.verdict != .match { checker?.verdict(NonMatchVerdict(o.result, t: o.t)) }
                run.steps.append(.observation(o))
            }
        }
        run.glitches = checker?.glitches ?? []
        run.engine = engine
        return run
    }

    /// `steps` applied from `header`'s state, as a trace of its own: the header (reason
    /// `minimize`, no layout records) and one record per step, renumbered from the header's
    /// seq, with its original `t`, client and event or observation, the digest this build
    /// computes and the verdict it gives. Nil when `run` is.
    public static func encode(header: TraceHeader, steps: [TraceStep]) -> [UInt8]? {
        guard let run = run(header: header, steps: steps) else { return nil }
        var h = header
        h.part = 0
        h.reason = "minimize"
        h.layouts = false
        var out = h.encode()
        out.append(0x0A)
        for step in run.steps {
            switch step {
            case .event(let e): TraceEncoding.appendEvent(e, to: &out)
            case .observation(let o): TraceEncoding.appendObservation(o, to: &out)
            }
        }
        return out
    }

    public static func encode(header: TraceHeader, events: [TraceEvent]) -> [UInt8]? {
        encode(header: header, steps: events.map(TraceStep.event))
    }
}

/// What a minimized trace must still show: a glitch of one kind (and subject). A `mismatch`
/// is as strong as the original's: a trace whose device mismatched does not shrink to one
/// where the device was merely catching up (`stale`).
public struct GlitchTarget: Sendable {
    public var kind: GlitchKind
    public var subject: String?
    public var options: GlitchOptions
    public init(kind: GlitchKind, subject: String?, options: GlitchOptions = GlitchOptions()) {
        self.kind = kind
        self.subject = subject
        self.options = options
    }

    public var name: String { "a \(kind.rawValue) glitch" + (subject.map { " of \"\($0)\"" } ?? "") }

    /// Whether observations are kept as steps: only the device's verdicts show a mismatch
    /// or a stale look.
    public var needsObservations: Bool { kind == .mismatch || kind == .stale }

    public func holds(header: TraceHeader, steps: [TraceStep]) -> Bool {
        if needsObservations {
            guard let run = TraceMinimize.run(header: header, steps: steps) else { return false }
            return run.steps.contains { step in
                guard case .observation(let o) = step else { return false }
                return verdictShows(o.result, t: o.t)
            }
        }
        guard let run = TraceMinimize.run(header: header, steps: steps, glitches: options) else { return false }
        return run.glitches.contains(where: matches)
    }

    public func matches(_ g: Glitch) -> Bool { g.kind == kind && (subject == nil || g.subject == subject) }

    /// A mismatch target holds on a mismatch verdict only, a stale one on a stale verdict
    /// only: a reduction never turns a device that mismatched into one catching up.
    private func verdictShows(_ r: ConformanceResult, t: UInt64) -> Bool {
        guard GlitchKind(verdict: r.verdict) == kind else { return false }
        let v = NonMatchVerdict(r, t: t)
        return subject == nil || v.subject == subject
    }
}

/// What another build made of the states a run went through, from a trace it recorded:
/// for each state it reached (everything but the raw hinge angle and when a pending
/// orientation was proposed, which the layout never reads), the digest it recorded. A candidate run diverges when this build reaches one of
/// those states with another digest. Both builds must digest layouts the same way, and
/// the events must move the state the same way in both (the layout rules may differ).
public struct OtherBuildDigests: Sendable {
    private var digests: [[UInt8]: UInt64] = [:]
    public private(set) var states = 0

    /// `other` must start where `header` starts: same app, profile and initial state.
    public init(other: TraceFile, header: TraceHeader) throws(TraceError) {
        // The configuration (socket, limits) may differ; what the layouts start from may not.
        let differences = TraceDiff.headerDifferences(header, other.header).filter { !$0.path.hasPrefix("config") }
        if let d = differences.first {
            throw TraceError("the other build's trace starts elsewhere: \(d.path) differs", line: 1, offset: 0)
        }
        var replayer = TraceReplayer(header: other.header, verify: false)
        var cursor = other.cursor()
        while let traced = try cursor.next() {
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw TraceError("seq \(d.seq) cannot be applied: \(error)", line: traced.line, offset: traced.offset)
            }
            if case .event(let e) = traced.record {
                digests[OtherBuildDigests.key(replayer.engine)] = e.digest
            }
        }
        states = digests.count
    }

    /// Whether `events` from `header` reach a state the other build laid out differently.
    public func diverges(header: TraceHeader, events: [TraceEvent]) -> Bool {
        var engine = header.makeEngine()
        for e in events {
            guard (try? engine.apply(e.envelope.event, at: Int64(e.t))) != nil else { return false }
            if let theirs = digests[OtherBuildDigests.key(engine)], theirs != engine.digest { return true }
        }
        return false
    }

    static func key(_ engine: Engine) -> [UInt8] {
        var state = engine.state
        state.hingeAngle = 0
        state.pendingOrientation = nil  // a clock reading, no layout input
        var w = JSONWriter(capacity: 512)
        w.string(engine.app.name)
        state.write(to: &w, app: engine.app)
        return w.bytes
    }
}
