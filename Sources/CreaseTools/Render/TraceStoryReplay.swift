import CreaseCore

/// A trace file told as a story: the trace reader's own replayer applies the records and
/// the story samples the engine after each event. The replay does not verify digests
/// (`crease replay --verify` is the check); an event the engine rejects is shown as a mark.
/// The glitch checker runs alongside with `glitches` options, and the story keeps what it found.
public struct TraceRun: Sendable {
    public var story: TraceStory
    /// The engine where the replay stopped.
    public var engine: Engine

    public static let latencyMeaning = "stems: send → read (sender ts, daemon clock); ticks: read → layout queued"

    /// Replays `file`, stopping after the event with seq `stop` and the observations held
    /// against it, if `stop` is given; with `start`, the story begins after the event with
    /// that seq (a replay run inside a rig's file, from its begin mark), from the state the
    /// file reached.
    /// With `keepFrames`, `keeping` names the frames (indexes into `frameStubs`) kept whole; nil: all.
    public static func replay(_ file: TraceFile, title: String, keepFrames: Bool, keeping kept: Set<Int>? = nil, stop: Int? = nil,
                              start: Int? = nil, glitches options: GlitchOptions = GlitchOptions()) throws(TraceError) -> TraceRun {
        let header = file.header
        var replayer = TraceReplayer(header: header, verify: false)
        func newStory() -> TraceStory {
            TraceStory(title: title, engine: replayer.engine, t: replayer.lastT, keepFrames: keepFrames, keeping: kept,
                       latencyMeaning: latencyMeaning, budgetNs: header.budgetNs)
        }
        var story = newStory()
        var published = try PublishedLayouts(file)
        var glitches = RunGlitches(header: header, engine: replayer.engine, options: options)
        var begun = start == nil
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            if replayer.engine.seq == stop, !traced.record.staysAtItsSeq { break }
            // A run begins after the event at `start` (its begin mark is at that event's seq).
            if !begun, let start, traced.record.seq > start || (traced.record.seq == start && traced.record.appliedSeq == nil) {
                story = newStory()
                glitches = RunGlitches(header: header, engine: replayer.engine, options: options)
                begun = true
            }
            let divergence = try replayer.apply(traced)
            guard begun else { continue }
            switch traced.record {
            case .event(let e):
                if case .rejected(let error)? = divergence?.kind {
                    story.mark(seq: e.seq, t: e.t, label: "\(e.envelope.event.name) rejected on replay: \(error)")
                } else {
                    story.record(replayer.engine, t: e.t, event: e.envelope.event,
                                 latencyNs: header.transportLatency(e), relayoutNs: e.latencyNs)
                    glitches.applied(e, engine: replayer.engine, published: published.contains(e.seq))
                }
            case .load(let l):
                story.mark(seq: l.seq, t: l.t, label: "load: \(l.app.name)")
                glitches.resumed(engine: replayer.engine, t: l.t)
            case .mark(let seq, let t, let label):
                story.mark(seq: seq, t: t, label: label)
            case .gap(let g):
                story.mark(seq: g.seq, t: g.t, label: "gap: \(g.lost) records lost (\(g.reason))")
                glitches.resumed(engine: replayer.engine, t: g.t)
            case .observation(let o):
                // A look the trace keeps as a reference is drawn as the replay rebuilt it.
                let look = replayer.lastObservation.flatMap { $0.isResolved ? $0.request.observed : nil }
                story.observe(replayer.engine, t: o.t, observation: look, result: o.result, id: o.request.id)
                if o.result.verdict != .match { glitches.verdict(NonMatchVerdict(o.result, t: o.t)) }
            case .frame(_, let t, _, let verdict):
                if verdict.kind.flags {
                    story.mark(seq: verdict.refSeq, t: verdict.t, label: "screen: \(verdict.kind.rawValue) (frame \(verdict.frame))")
                    story.flag(verdict)
                }
                glitches.screen(verdict, seq: replayer.engine.seq, t: t)
            case .batch, .layout:
                break
            }
        }
        story.glitches = glitches.glitches
        story.shifts = glitches.shifts
        story.deviceShifts = glitches.deviceShifts
        return TraceRun(story: story, engine: replayer.engine)
    }
}

extension TraceRecord {
    /// Records that follow an event at its seq without moving the engine on: a replay that
    /// stops at a seq reads them too (observations, marks, batches, layouts).
    var staysAtItsSeq: Bool {
        switch self {
        case .observation, .mark, .batch, .layout, .frame: true
        case .event, .load, .gap: false
        }
    }
}
