/// The pieces of `crease trace minimize`: a trace's events as a list to shrink, a candidate
/// list written back as a self-contained trace, and the properties a candidate is tested for.
/// Every candidate starts from the original header: the same app, profile and initial state.
public enum TraceMinimize {
    /// The events of a file, in order. A gap or a load resets the engine to a recorded state
    /// that no subset of events would reach, so a trace with either is refused.
    public static func events(_ file: TraceFile) throws(TraceError) -> [TraceEvent] {
        var out: [TraceEvent] = []
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            switch traced.record {
            case .event(let e): out.append(e)
            case .gap(let g):
                throw TraceError("records were lost before seq \(g.seq) (a gap): minimize the part after it (crease trace slice --from \(g.seq + 1))",
                                 line: traced.line, offset: traced.offset)
            case .load(let l):
                throw TraceError("a state was loaded at seq \(l.seq): minimize the part after it (crease trace slice --from \(l.seq + 1))",
                                 line: traced.line, offset: traced.offset)
            case .mark, .batch, .layout, .observation: break
            }
        }
        return out
    }

    /// `events` applied from `header`'s state, as a trace of its own: the header (reason
    /// `minimize`, no layout records) and one record per event, renumbered from the
    /// header's seq, with its original `t`, client and event and the digest this build
    /// computes. Nil when an event is rejected from the state the earlier ones leave.
    public static func encode(header: TraceHeader, events: [TraceEvent]) -> [UInt8]? {
        var h = header
        h.part = 0
        h.reason = "minimize"
        h.layouts = false
        var out = h.encode()
        out.append(0x0A)
        var engine = header.makeEngine()
        for e in events {
            guard (try? engine.apply(e.envelope.event, at: Int64(e.t))) != nil else { return nil }
            var copy = e
            copy.seq = engine.seq
            copy.digest = engine.digest
            TraceEncoding.appendEvent(copy, to: &out)
        }
        return out
    }

    /// The glitches of `events` replayed from `header`, every layout published (a candidate
    /// has no batches). Nil when an event is rejected.
    public static func glitches(header: TraceHeader, events: [TraceEvent], options: GlitchOptions) -> [Glitch]? {
        var engine = header.makeEngine()
        var run = RunGlitches(header: header, engine: engine, options: options)
        for e in events {
            guard (try? engine.apply(e.envelope.event, at: Int64(e.t))) != nil else { return nil }
            var applied = e
            applied.seq = engine.seq
            run.applied(applied, engine: engine, published: true)
        }
        return run.glitches
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
