import CreaseCore

/// A trace file told as a story: the trace reader's own replayer applies the records and
/// the story samples the engine after each event. The replay does not verify digests
/// (`crease replay --verify` is the check); an event the engine rejects is shown as a mark.
public struct TraceRun: Sendable {
    public var story: TraceStory
    /// The engine where the replay stopped.
    public var engine: Engine

    public static let latencyMeaning = "send → read: the sender's ts on the daemon's clock"

    /// Replays `file`, stopping after the event with seq `stop` if one is given.
    public static func replay(_ file: TraceFile, title: String, keepFrames: Bool, stop: Int? = nil) throws(TraceError) -> TraceRun {
        let header = file.header
        var budget: UInt64?
        if case .number(let us)? = header.config["budgetUs"], us >= 0, us < 1e12 { budget = UInt64(us * 1000) }
        var replayer = TraceReplayer(header: header, verify: false)
        var story = TraceStory(title: title, engine: replayer.engine, t: header.initialT, keepFrames: keepFrames,
                               latencyMeaning: latencyMeaning, budgetNs: budget)
        var cursor = file.cursor()
        while replayer.engine.seq != stop, let traced = try cursor.next() {
            let divergence = try replayer.apply(traced)
            switch traced.record {
            case .event(let e):
                if case .rejected(let error)? = divergence?.kind {
                    story.mark(seq: e.seq, t: e.t, label: "\(e.envelope.event.name) rejected on replay: \(error)")
                } else {
                    story.record(replayer.engine, t: e.t, event: e.envelope.event, latencyNs: transportLatency(e, origin: header.monotonicOrigin))
                }
            case .mark(let seq, let t, let label):
                story.mark(seq: seq, t: t, label: label)
            case .gap(let g):
                story.mark(seq: g.seq, t: g.t, label: "gap: \(g.lost) records lost (\(g.reason))")
            case .observation(let o):
                story.observe(replayer.engine, t: o.t, observation: o.request.observed, result: o.result)
            case .batch, .layout:
                break
            }
        }
        return TraceRun(story: story, engine: replayer.engine)
    }

    /// The time from the sender's `ts` to the daemon reading the event, when the sender
    /// stamped it from the daemon's monotonic clock (as `crease gen` and rigs on the same
    /// machine do); the same reading `crease trace info` and the Chrome export make.
    static func transportLatency(_ e: TraceEvent, origin: UInt64?) -> UInt64? {
        guard let ts = e.envelope.ts, let origin else { return nil }
        let delay = Int64(truncatingIfNeeded: origin &+ e.t) &- ts
        return delay >= 0 && delay < 10_000_000_000 ? UInt64(delay) : nil
    }
}
