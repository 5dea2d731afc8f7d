/// `crease trace export --chrome`: the Trace Event Format that chrome://tracing and
/// Perfetto open. One process, one track per kind of thing:
/// events (an instant each), pose and display phases (spans), published batches
/// (spans from the first event's read to the last's), transport latency (a span from
/// the sender's `ts` to the daemon's read, where both used the same clock), the daemon's
/// relayout latency (a span from the read to the layout queued, where recorded), marks,
/// observations (an instant each, named by its verdict).
public enum ChromeExport {
    enum Track: Int, CaseIterable {
        case events = 1, pose, display, batches, latency, marks, relayout, observations
        var name: String {
            switch self {
            case .events: "events"
            case .pose: "pose"
            case .display: "display"
            case .batches: "batches"
            case .latency: "transport latency"
            case .marks: "marks"
            case .relayout: "relayout latency"
            case .observations: "observations"
            }
        }
    }

    public static func export(_ file: TraceFile) throws(TraceError) -> [UInt8] {
        var w = JSONWriter(capacity: 1 << 16)
        w.beginObject()
        w.key("displayTimeUnit"); w.string("ns")
        w.key("otherData"); w.beginObject()
        w.key("daemon"); w.string(file.header.daemon)
        w.key("app"); w.string(file.header.app.name)
        w.key("profile"); w.string(file.header.profile.name)
        w.key("started"); w.string(file.header.started)
        w.endObject()
        w.key("traceEvents"); w.beginArray()
        metadata(&w, name: "process_name", tid: nil, value: "creased \(file.header.app.name)")
        for track in Track.allCases { metadata(&w, name: "thread_name", tid: track.rawValue, value: track.name) }

        var replayer = TraceReplayer(header: file.header, verify: false)
        var eventT: [Int: UInt64] = [:]   // seq → read time, for batch spans; looked up by key only
        var pose = (value: replayer.engine.layout.device.pose.rawValue, since: file.header.initialT)
        var display = (value: replayer.engine.layout.device.display.rawValue, since: file.header.initialT)
        var endT = file.header.initialT
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            _ = try replayer.apply(traced)
            switch traced.record {
            case .event(let e):
                endT = e.t
                eventT[e.seq] = e.t
                let device = replayer.engine.layout.device
                instant(&w, name: e.envelope.event.name, track: .events, t: e.t) { w in
                    w.key("seq"); w.int(e.seq)
                    w.key("digest"); w.string(Digest.hex(e.digest))
                    if let c = e.client { w.key("client"); w.int(c) }
                }
                if device.pose.rawValue != pose.value {
                    span(&w, name: pose.value, track: .pose, from: pose.since, to: e.t)
                    pose = (device.pose.rawValue, e.t)
                }
                if device.display.rawValue != display.value {
                    span(&w, name: display.value, track: .display, from: display.since, to: e.t)
                    display = (device.display.rawValue, e.t)
                }
                if let delay = file.header.transportLatency(e) {
                    span(&w, name: "send→read", track: .latency, from: e.t - delay, to: e.t)
                }
                if let l = e.latencyNs {
                    span(&w, name: "read→queued", track: .relayout, from: e.t, to: e.t + l)
                }
            case .load(let l):
                endT = l.t
                eventT[l.seq] = l.t
                instant(&w, name: "load \(l.app.name)", track: .events, t: l.t) { w in
                    w.key("seq"); w.int(l.seq)
                    w.key("digest"); w.string(Digest.hex(l.digest))
                    if let c = l.client { w.key("client"); w.int(c) }
                }
            case .batch(let first, let last):
                if let a = eventT[first], let b = eventT[last] {
                    span(&w, name: "batch \(last - first + 1)", track: .batches, from: a, to: b)
                }
            case .mark(_, let t, let label):
                endT = max(endT, t)
                instant(&w, name: label, track: .marks, t: t, scope: "g") { _ in }
            case .gap(let g):
                endT = max(endT, g.t)
                instant(&w, name: "gap: \(g.lost) records lost (\(g.reason))", track: .marks, t: g.t, scope: "g") { _ in }
            case .observation(let o):
                endT = max(endT, o.t)
                instant(&w, name: "observe: \(o.result.verdict.rawValue)", track: .observations, t: o.t) { w in
                    w.key("seq"); w.int(o.seq)
                    if let m = o.result.matchedSeq { w.key("matchedSeq"); w.int(m) }
                    w.key("differences"); w.int(o.result.differences.count)
                }
            case .frame(_, let t, _, let verdict):
                endT = max(endT, t)
                instant(&w, name: "frame: \(verdict.kind.rawValue)", track: .observations, t: verdict.t) { w in
                    w.key("seq"); w.int(verdict.refSeq)
                    w.key("frame"); w.int(verdict.frame)
                }
            case .layout:
                break
            }
        }
        span(&w, name: pose.value, track: .pose, from: pose.since, to: endT)
        span(&w, name: display.value, track: .display, from: display.since, to: endT)
        w.endArray()
        w.endObject()
        return w.bytes
    }

    private static func micros(_ ns: UInt64) -> Double { Double(ns) / 1000 }

    private static func metadata(_ w: inout JSONWriter, name: String, tid: Int?, value: String) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("ph"); w.string("M")
        w.key("pid"); w.int(1)
        if let tid { w.key("tid"); w.int(tid) }
        w.key("args"); w.beginObject(); w.key("name"); w.string(value); w.endObject()
        w.endObject()
    }

    private static func instant(_ w: inout JSONWriter, name: String, track: Track, t: UInt64, scope: String = "t",
                                args: (inout JSONWriter) -> Void) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("ph"); w.string("i")
        w.key("s"); w.string(scope)
        w.key("ts"); w.number(micros(t))
        w.key("pid"); w.int(1)
        w.key("tid"); w.int(track.rawValue)
        w.key("args"); w.beginObject(); args(&w); w.endObject()
        w.endObject()
    }

    private static func span(_ w: inout JSONWriter, name: String, track: Track, from: UInt64, to: UInt64) {
        w.beginObject()
        w.key("name"); w.string(name)
        w.key("ph"); w.string("X")
        w.key("ts"); w.number(micros(from))
        w.key("dur"); w.number(micros(to >= from ? to - from : 0))
        w.key("pid"); w.int(1)
        w.key("tid"); w.int(track.rawValue)
        w.endObject()
    }
}
