import CreaseCore

/// The counters `stats` reports, as one value the core keeps. A new counter is a
/// field here and a line in `write`, at the place it should appear in the reply.
/// `{"cmd":"stats","reset":true}` starts them all again; gauges are not counters.
public struct DaemonStats: Sendable {
    public var events: UInt64 = 0
    public var rejected: UInt64 = 0
    public var commands: UInt64 = 0
    public var publishes: UInt64 = 0
    public var batches: UInt64 = 0
    public var batchedEvents: UInt64 = 0
    public var accepted: UInt64 = 0
    public var dropped: UInt64 = 0
    public var lastDropReason: String?
    public var oversizedLines: UInt64 = 0
    /// Lines and connections refused by the access policy.
    public var forbidden: UInt64 = 0
    /// Streams that ended inside a line (bytes after the last newline, never applied).
    public var unterminatedLines: UInt64 = 0
    /// Hinge readings past 0 or 180 within the profile's tolerance, applied clamped.
    public var clampedAngles: UInt64 = 0
    public var bytesIn: UInt64 = 0
    public var bytesOut: UInt64 = 0
    /// From each event's read to its batch's publish.
    public var latency: LatencyHistogram
    /// Observations by verdict, in the order of `Verdict.allCases`.
    public var observations = [UInt64](repeating: 0, count: Verdict.allCases.count)
    /// Glitches found in what subscribers were sent, by kind (`GlitchKind.allCases` order).
    public var glitches = [UInt64](repeating: 0, count: GlitchKind.allCases.count)

    public init(budgetNs: UInt64) {
        latency = LatencyHistogram(budgetNs: budgetNs)
    }

    /// What the figures are reported with: the core's own counts when they were taken, and
    /// what the shell sampled.
    public struct Gauges {
        public var uptimeNs: UInt64
        /// Since the counters' period began (the start or the last reset).
        public var periodNs: UInt64
        public var labels: [Label]
        public var clients: Int
        public var subscribers: Int
        public var sampled: SampledGauges
    }

    public func write(_ g: Gauges, to w: inout JSONWriter) {
        w.beginObject()
        w.key("uptimeS"); w.number(Double(g.uptimeNs / 1_000_000) / 1000)
        w.key("events"); w.int(Int(events))
        w.key("rejected"); w.int(Int(rejected))
        w.key("commands"); w.int(Int(commands))
        w.key("publishes"); w.int(Int(publishes))
        w.key("batches"); w.int(Int(batches))
        w.key("batchedEvents"); w.int(Int(batchedEvents))
        w.key("clients"); w.int(g.clients)
        w.key("subscribers"); w.int(g.subscribers)
        w.key("accepted"); w.int(Int(accepted))
        w.key("dropped"); w.int(Int(dropped))
        if let r = lastDropReason { w.key("lastDropReason"); w.string(r) }
        w.key("oversizedLines"); w.int(Int(oversizedLines))
        w.key("forbidden"); w.int(Int(forbidden))
        w.key("unterminatedLines"); w.int(Int(unterminatedLines))
        w.key("clampedAngles"); w.int(Int(clampedAngles))
        w.key("logDroppedLines"); w.int(Int(g.sampled.logDroppedLines))
        w.key("bytesIn"); w.int(Int(bytesIn))
        w.key("bytesOut"); w.int(Int(bytesOut))
        w.key("rssKiB"); w.int(g.sampled.residentKiB)
        w.key("latency"); latency.write(to: &w)
        w.key("observations"); w.beginObject()
        for (v, n) in zip(Verdict.allCases, observations) { w.key(v.rawValue); w.int(Int(n)) }
        w.endObject()
        w.key("glitches"); w.beginObject()
        for (kind, n) in zip(GlitchKind.allCases, glitches) { w.key(kind.rawValue); w.int(Int(n)) }
        w.endObject()
        if let trace = g.sampled.trace { w.key("trace"); trace.write(to: &w) }
        w.key("labels"); Label.write(g.labels, to: &w)
        w.key("periodS"); w.number(Double(g.periodNs / 1_000_000) / 1000)
        w.endObject()
    }
}
