/// Where `why` may start a replay instead of the trace's start: the engine's state just after
/// the event at `seq`, the byte offset of the record that follows it, and what had set each
/// input by then. `crease trace why` keeps them in a file beside the trace (`TRACE.why`),
/// one every `WhyCheckpoint.every` events, so a query replays at most that many.
public struct WhyCheckpoint: Sendable {
    public static let every = 10_000

    public var seq: Int
    public var t: UInt64
    /// The offset in the trace of the record after the event at `seq`.
    public var offset: Int
    public var digest: UInt64
    public var state: DeviceState
    var provenance: [TraceWhy.Provenance]

    /// Replays the whole trace and keeps a checkpoint after every `every`th event, past a
    /// rig's resets too (a load that keeps the header's profile and app: a campaign resets
    /// every few events). None once a load or an `app` event put another app or profile in
    /// place: a checkpoint's state is written and read back by the header's manifest and
    /// resumed with its profile, and another app's UI state does not fit it. Questions past
    /// there replay from the last checkpoint before.
    public static func build(_ file: TraceFile, every: Int = every) throws(TraceError) -> [WhyCheckpoint] {
        var following = TraceWhy.Following(header: file.header)
        var out: [WhyCheckpoint] = []
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            let applied = try following.apply(traced)
            let engine = following.replayer.engine
            if engine.app != file.header.app || engine.profile != file.header.profile { break }
            guard let (seq, t) = applied, case .event = traced.record, seq % every == 0 else { continue }
            out.append(WhyCheckpoint(seq: seq, t: t, offset: cursor.offset, digest: engine.digest, state: engine.state,
                                     provenance: following.provenance))
        }
        return out
    }

    /// Whether this checkpoint's state gives the digest it recorded with the trace's profile
    /// and app: a checkpoints file of another trace, or of a build whose rules differ, does not.
    public func resumes(_ header: TraceHeader) -> Bool {
        Engine(profile: header.profile, app: header.app, state: state, seq: seq, digestAlgorithm: header.digestAlgorithm).digest == digest
    }

    // MARK: The file beside the trace

    /// The checkpoints file: a first line saying which trace it belongs to (its size and its
    /// header's digest: a trace that grew or was replaced is checkpointed again), then one
    /// line per checkpoint beginning `{"seq":N,"offset":O,` so a reader finds its line
    /// without decoding the others.
    public static func encode(_ points: [WhyCheckpoint], every: Int = every, traceBytes: Int, header: [UInt8], app: App) -> [UInt8] {
        var w = JSONWriter(capacity: 64 * 1024)
        w.beginObject()
        w.key("crease"); w.string("why-checkpoints")
        w.key("version"); w.int(1)
        w.key("traceBytes"); w.int(traceBytes)
        w.key("header"); w.string(Digest.hex(Digest.fnv1a(header)))
        w.key("every"); w.int(every)
        w.endObject()
        var out = w.bytes + [0x0A]
        for p in points {
            var l = JSONWriter(capacity: 16 * 1024)
            l.beginObject()
            l.key("seq"); l.int(p.seq)
            l.key("offset"); l.int(p.offset)
            l.key("t"); l.int(Int(p.t))
            l.key("digest"); l.string(Digest.hex(p.digest))
            l.key("state"); p.state.write(to: &l, app: app)
            l.key("inputs"); l.beginArray()
            for v in p.provenance {
                l.beginObject()
                l.key("setBy"); setter(v.setBy, &l)
                l.key("before"); setter(v.before, &l)
                l.key("stateBefore")
                if let s = v.stateBefore, v.appBefore == app.name { s.write(to: &l, app: app) } else { l.null() }
                l.endObject()
            }
            l.endArray()
            l.endObject()
            out += l.bytes + [0x0A]
        }
        return out
    }

    /// Whether a checkpoints file belongs to this trace.
    public static func belongs(_ bytes: [UInt8], every: Int = every, traceBytes: Int, header: [UInt8]) -> Bool {
        guard let nl = bytes.firstIndex(of: 0x0A), let first = try? JSON.parse(bytes[..<nl]) else { return false }
        return first["crease"] == .string("why-checkpoints") && first["version"] == .number(1)
            && first["traceBytes"] == .number(Double(traceBytes)) && first["header"] == .string(Digest.hex(Digest.fnv1a(header)))
            && first["every"] == .number(Double(every))
    }

    /// The checkpoint nearest before `seq` (at it or earlier), decoded (nil before the first:
    /// the replay starts at the trace's start), and the offset where the next one begins (where
    /// a replay to `seq` can stop reading; nil after the last). Nil for a file it cannot read.
    public static func nearest(_ bytes: [UInt8], before seq: Int, app: App) -> (point: WhyCheckpoint?, readTo: Int?)? {
        var best: (start: Int, end: Int)?
        var next: Int?
        var start = (bytes.firstIndex(of: 0x0A) ?? bytes.count) + 1
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            guard let (s, offset) = prefix(bytes, start) else { return nil }
            if s <= seq { best = (start, end) } else { next = offset; break }
            start = end + 1
        }
        guard let best else { return (nil, next) }
        guard let value = try? JSON.parse(bytes[best.start..<best.end]), let point = decode(value, app: app) else { return nil }
        return (point, next)
    }

    /// `seq` and `offset` from the start of a checkpoint line.
    static func prefix(_ b: [UInt8], _ at: Int) -> (Int, Int)? {
        let head = Array(#"{"seq":"#.utf8), mid = Array(#","offset":"#.utf8)
        var i = at
        func expect(_ s: [UInt8]) -> Bool {
            guard i + s.count <= b.count, Array(b[i..<i + s.count]) == s else { return false }
            i += s.count
            return true
        }
        func digits() -> Int? {
            var v = 0, n = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39, n < 18 { v = v * 10 + Int(b[i] - 0x30); i += 1; n += 1 }
            return n > 0 ? v : nil
        }
        guard expect(head), let seq = digits(), expect(mid), let offset = digits() else { return nil }
        return (seq, offset)
    }

    static func decode(_ v: JSONValue, app: App) -> WhyCheckpoint? {
        guard case .number(let seq)? = v["seq"], case .number(let offset)? = v["offset"], case .number(let t)? = v["t"],
              case .string(let digest)? = v["digest"], let d = Digest.parseHex(digest), let stateValue = v["state"],
              let state = try? DeviceState.decode(stateValue, app: app), case .array(let inputs)? = v["inputs"],
              inputs.count == WhyInputs.names.count else { return nil }
        var provenance: [TraceWhy.Provenance] = []
        for input in inputs {
            var p = TraceWhy.Provenance()
            p.setBy = setter(input["setBy"])
            p.before = setter(input["before"])
            if let s = input["stateBefore"], s != .null {
                guard let before = try? DeviceState.decode(s, app: app) else { return nil }
                p.stateBefore = before
                p.appBefore = app.name
            }
            provenance.append(p)
        }
        return WhyCheckpoint(seq: Int(seq), t: UInt64(t), offset: Int(offset), digest: d, state: state, provenance: provenance)
    }

    static func setter(_ s: TraceWhy.Setter?, _ w: inout JSONWriter) {
        guard let s else { w.null(); return }
        w.beginObject(); w.key("seq"); w.int(s.seq); w.key("t"); w.int(Int(s.t)); w.key("event"); w.string(s.event); w.endObject()
    }

    static func setter(_ v: JSONValue?) -> TraceWhy.Setter? {
        guard case .number(let seq)? = v?["seq"], case .number(let t)? = v?["t"], case .string(let event)? = v?["event"] else { return nil }
        return TraceWhy.Setter(seq: Int(seq), t: UInt64(t), event: event)
    }
}
