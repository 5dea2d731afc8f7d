import CreaseCore
import CreaseDaemonCore

/// The trace one simulated run's core meant to record (what a disk that never fails would
/// hold), encoded as the trace writer encodes it: events once their batch is queued, each
/// with its latency, then the batch; marks, observations and loads as they come. At a crash
/// and at the end it is fed to `DaemonReplay`, which must find that the core decides it again.
struct SimulatedTrace {
    private(set) var bytes: [UInt8] = []
    private var queued: [(seq: Int, t: UInt64, client: Int, line: [UInt8], digest: UInt64)] = []
    private let startNs: UInt64

    init(core: DaemonCore) {
        startNs = core.startNs
        let config = JSONValue.object([("budgetUs", .number(Double(core.config.budgetUs))),
                                       ("settleMs", .number(Double(core.config.settleNs / 1_000_000)))])
        let header = TraceHeader(daemon: core.config.daemonName, started: "simulated", part: 0, reason: "start", config: config,
                                 layouts: false, monotonicOrigin: nil, t: 0, engine: core.engine)
        bytes = header.encode()
        bytes.append(0x0A)
    }

    mutating func record(_ entry: DaemonActions.TraceEntry, bytes actionBytes: [UInt8]) {
        switch entry {
        case .event(let e):
            queued.append((e.seq, e.tNs &- startNs, e.client, Array(actionBytes[e.line]), e.digest))
        case .queued(let tNs):
            for e in queued {
                e.line.withUnsafeBytes {
                    TraceEncoding.appendEvent(seq: e.seq, t: e.t, client: e.client, event: $0, digest: e.digest,
                                              latencyNs: tNs &- startNs &- e.t, to: &bytes)
                }
            }
            queued.removeAll()
        case .batch(let first, let last):
            TraceEncoding.appendBatch(first: first, last: last, to: &bytes)
        case .mark(let seq, let tNs, let label):
            TraceEncoding.appendMark(seq: seq, t: tNs &- startNs, label: label, to: &bytes)
        case .frame(let seq, let tNs, let client, let verdict):
            TraceEncoding.appendFrame(seq: seq, t: tNs &- startNs, client: client, verdict: verdict, to: &bytes)
        case .observation(let tNs, let client, let line, let result, let captured, let observedAs):
            let span = captured.map { ($0.lowerBound &- startNs)...($0.upperBound &- startNs) }
            Array(actionBytes[line]).withUnsafeBytes {
                TraceEncoding.appendObservation(t: tNs &- startNs, client: client, command: $0, result: result, captured: span,
                                                observedAs: observedAs, to: &bytes)
            }
        case .load(let tNs, var load):
            load.t = tNs &- startNs
            TraceEncoding.appendLoad(load, to: &bytes)
        }
    }
}
