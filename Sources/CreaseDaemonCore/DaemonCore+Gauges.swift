import CreaseCore

/// The figures `stats` reports, a stats push and the metrics file: the core's counters are
/// taken when they are asked for, and go out once the shell has sampled what the core cannot
/// know by itself (`SampledGauges`). The core asks with `sampleGauges` and the shell answers
/// with the `gauges` input at once, so nothing else comes between.
extension DaemonCore {
    /// The core's side of the figures, as they were when asked for.
    struct StatsSnapshot {
        var stats: DaemonStats
        var seq: Int
        var uptimeNs: UInt64
        var periodNs: UInt64
        var clients: Int
        var subscribers: Int
        var tracing: Bool
    }

    /// What waits for the gauges.
    enum GaugeWaiter {
        /// A `stats` command's reply.
        case reply(client: Int, id: JSONValue?, reset: Bool, StatsSnapshot)
        /// The stats timer's push to the `stats` subscribers.
        case push(StatsSnapshot)
        /// The metrics timer's figures, for the metrics file.
        case metrics(StatsSnapshot)
    }

    func snapshot(at now: UInt64) -> StatsSnapshot {
        StatsSnapshot(stats: stats, seq: engine.seq, uptimeNs: now &- startNs, periodNs: now &- periodStartNs,
                      clients: clients.count, subscribers: subscribers.count, tracing: tracing)
    }

    mutating func awaitGauges(_ waiter: GaugeWaiter, into out: inout DaemonActions) {
        if gaugeWaiters.isEmpty { out.append(.sampleGauges) }
        gaugeWaiters.append(waiter)
    }

    /// The stats timer fired: stats subscribers get the counters when events came in since.
    mutating func statsTick(at now: UInt64, into out: inout DaemonActions) {
        guard stats.events != lastStatsPushEvents, subscribers.any(.stats) else { return }
        lastStatsPushEvents = stats.events
        awaitGauges(.push(snapshot(at: now)), into: &out)
    }

    /// The metrics timer fired (or the file is written a last time, at shutdown).
    mutating func metricsTick(at now: UInt64, into out: inout DaemonActions) {
        awaitGauges(.metrics(snapshot(at: now)), into: &out)
    }

    /// The shell's sample: every figure asked for goes out, in the order asked.
    mutating func gauges(_ sampled: SampledGauges, into out: inout DaemonActions) {
        let waiting = gaugeWaiters
        gaugeWaiters.removeAll()
        for waiter in waiting {
            switch waiter {
            case .reply(let client, let id, let reset, let s):
                guard clients[client] != nil else { continue }
                let start = out.bytes.count
                Reply.appendOK(id: id, to: &out.bytes) { w in
                    w.key("seq"); w.int(s.seq)
                    w.key("stats"); write(s, sampled, to: &w)
                    if reset { w.key("reset"); w.bool(true) }
                }
                reply(from: start, to: client, into: &out)
            case .push(let s):
                let start = out.bytes.count
                Reply.appendPush("stats", seq: s.seq, to: &out.bytes) { w in w.key("stats"); write(s, sampled, to: &w) }
                fanOut(.stats, start..<out.bytes.count, into: &out)
            case .metrics(let s):
                var w = JSONWriter(capacity: 2048)
                write(s, sampled, to: &w)
                let start = out.bytes.count
                out.bytes += w.bytes
                out.append(.metrics(start..<out.bytes.count))
            }
        }
    }

    private func write(_ s: StatsSnapshot, _ sampled: SampledGauges, to w: inout JSONWriter) {
        var sampled = sampled
        if !s.tracing { sampled.trace = nil }
        s.stats.write(DaemonStats.Gauges(uptimeNs: s.uptimeNs, periodNs: s.periodNs, labels: config.labels, clients: s.clients,
                                         subscribers: s.subscribers, sampled: sampled), to: &w)
    }
}
