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
    /// A load of the state the trace began in, with its app and profile (a rig's reset),
    /// starts the steps afresh: what came before it cannot matter after it. A gap, or a load
    /// of another state, resets the engine to a recorded state that no subset of events would
    /// reach, so a trace with either is refused.
    public static func steps(_ file: TraceFile, observations: Bool) throws(TraceError) -> [TraceStep] {
        var out: [TraceStep] = []
        var cursor = file.resolvingCursor()
        while let traced = try cursor.next() {
            switch traced.record {
            case .event(let e): out.append(.event(e))
            case .observation(let o):
                guard observations else { continue }
                guard o.isResolved else { throw o.unresolvedError(line: traced.line, offset: traced.offset, reader: "trace minimize") }
                // Whole: a shrunk repro makes other layouts, so a look is kept as the rig sent it.
                out.append(.observation(o.whole))
            case .gap(let g):
                throw TraceError("records were lost before seq \(g.seq) (a gap): minimize the part after it (crease trace slice --from \(g.seq + 1))",
                                 line: traced.line, offset: traced.offset)
            case .load(let l):
                if l.state == file.header.initialState && l.app == file.header.app && l.profile == file.header.profile {
                    out.removeAll()
                    continue
                }
                throw TraceError("a state was loaded at seq \(l.seq): minimize the part after it (crease trace slice --from \(l.seq + 1))",
                                 line: traced.line, offset: traced.offset)
            case .mark, .batch, .layout, .frame: break
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
/// where the device was merely catching up (`stale`); and, once resolved against the
/// original (`resolve`), it is the same mismatch: the same fields differing, with the same
/// observed values (`signature`), not any mismatch of that subject.
public struct GlitchTarget: Sendable {
    public var kind: GlitchKind
    public var subject: String?
    public var options: GlitchOptions
    /// For a mismatch or a stale look: what differed in the original, each path with the value
    /// the device showed there, sorted by path. A candidate's verdict must differ exactly so.
    public var signature: [MismatchPoint]?

    public init(kind: GlitchKind, subject: String?, options: GlitchOptions = GlitchOptions(), signature: [MismatchPoint]? = nil) {
        self.kind = kind
        self.subject = subject
        self.options = options
        self.signature = signature
    }

    /// A differing field of a verdict: its path and what the device showed there.
    public struct MismatchPoint: Sendable, Equatable {
        public var path: String
        public var observed: JSONValue

        public static func of(_ r: ConformanceResult) -> [MismatchPoint] {
            r.differences.map { MismatchPoint(path: $0.path, observed: $0.observed) }.sorted { $0.path < $1.path }
        }
    }

    /// What `resolve` found in the original trace.
    public enum Resolution: Sendable {
        /// The target, its subject and (for a verdict) its signature filled in from the original.
        case target(GlitchTarget)
        /// No subject was given and the trace shows this kind for several: the caller must pick one.
        case ambiguous(subjects: [String])
        /// The trace does not show it.
        case absent
    }

    /// Pins a target to what the original steps show: with no subject, the one subject the
    /// trace shows this kind for (several are `ambiguous`, none `absent`); for a verdict, the
    /// first such verdict's differences as the signature.
    public static func resolve(kind: GlitchKind, subject: String?, options: GlitchOptions = GlitchOptions(),
                               header: TraceHeader, steps: [TraceStep]) -> Resolution {
        var target = GlitchTarget(kind: kind, subject: subject, options: options)
        var subjects: [String] = []
        var signatures: [String: [MismatchPoint]] = [:]
        if target.needsObservations {
            guard let run = TraceMinimize.run(header: header, steps: steps) else { return .absent }
            for step in run.steps {
                guard case .observation(let o) = step, GlitchKind(verdict: o.result.verdict) == kind else { continue }
                let v = NonMatchVerdict(o.result, t: o.t)
                if subject != nil && v.subject != subject { continue }
                if signatures[v.subject] == nil {
                    subjects.append(v.subject)
                    signatures[v.subject] = MismatchPoint.of(o.result)
                }
            }
        } else {
            guard let run = TraceMinimize.run(header: header, steps: steps, glitches: options) else { return .absent }
            for g in run.glitches where target.matches(g) && !subjects.contains(g.subject) { subjects.append(g.subject) }
        }
        guard let first = subjects.first else { return .absent }
        if subject == nil && subjects.count > 1 { return .ambiguous(subjects: subjects) }
        target.subject = first
        target.signature = signatures[first]
        return .target(target)
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
    /// only: a reduction never turns a device that mismatched into one catching up; and on
    /// the original's differences only, once it has a signature.
    private func verdictShows(_ r: ConformanceResult, t: UInt64) -> Bool {
        guard GlitchKind(verdict: r.verdict) == kind else { return false }
        let v = NonMatchVerdict(r, t: t)
        guard subject == nil || v.subject == subject else { return false }
        return signature.map { $0 == MismatchPoint.of(r) } ?? true
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
