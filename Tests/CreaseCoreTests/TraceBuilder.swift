@testable import CreaseCore

/// A trace written record by record as a daemon writes it: each event applied and recorded
/// with its digest, each load recorded as what it changed (`TraceLoad(…, replacing:)`).
struct TraceBuilder {
    var engine: Engine
    var bytes: [UInt8]
    var t: UInt64 = 0
    var loads: [TraceLoad] = []
    /// How far each record's time moves on.
    let step: UInt64

    init(app: App = builtin("tabs"), step: UInt64 = 1_000_000) {
        engine = Engine(profile: .builtin, app: app)
        bytes = TraceHeader(daemon: "creased test", started: "2026-12-07T00:00:00Z", part: 0, reason: "start", config: .object([]),
                            layouts: false, monotonicOrigin: nil, t: 0, engine: engine).encode() + [0x0A]
        self.step = step
    }

    mutating func event(_ e: Event) throws {
        t += step
        try engine.apply(e, at: Int64(t))
        TraceEncoding.appendEvent(TraceEvent(seq: engine.seq, t: t, client: 1, envelope: EventEnvelope(event: e), digest: engine.digest), to: &bytes)
    }

    mutating func load(_ request: LoadRequest) throws {
        t += step
        let before = engine
        engine = try request.loaded(onto: engine)
        let record = TraceLoad(seq: engine.seq, t: t, client: 2, engine: engine, replacing: before)
        loads.append(record)
        TraceEncoding.appendLoad(record, to: &bytes)
    }

    func file() throws -> TraceFile { try TraceFile(bytes: bytes) }
}
