/// `crease trace why TRACE --seq N`, its first part: for the layout at seq N, every input the
/// layout is computed from (each member of the device state, as the trace's state encoding
/// names it, and the app), its value then, and the event that last set it (and the one that
/// set it before that). The rule that decided each field is not named yet (issue 43).
public struct TraceWhy: Sendable {
    /// What set an input: the event's seq, time and line.
    public struct Setter: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        public var event: String
    }

    public struct Input: Sendable, Equatable {
        public var name: String
        /// Its value at the seq, as JSON text.
        public var value: String
        /// The event that last changed it; nil while it is still the trace's start value.
        public var setBy: Setter?
        /// The event that changed it before `setBy`, and the value it left.
        public var before: Setter?
        public var previousValue: String?
    }

    public var seq: Int
    public var t: UInt64
    public var digest: UInt64
    public var inputs: [Input]

    /// Replays `file` to the event with seq `seq` (from its start, or its last load or gap
    /// before it, which set every input at once).
    public static func explain(_ file: TraceFile, seq: Int) throws(TraceError) -> TraceWhy {
        var replayer = TraceReplayer(header: file.header, verify: false)
        var inputs = members(replayer.engine).map { Input(name: $0.0, value: $0.1, setBy: nil, before: nil, previousValue: nil) }
        var reached: (t: UInt64, digest: UInt64)? = seq == file.header.initialSeq ? (file.header.initialT, replayer.engine.digest) : nil
        var cursor = file.cursor()
        while reached == nil, let traced = try cursor.next() {
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw TraceError("seq \(d.seq) cannot be applied: \(error)", line: traced.line, offset: traced.offset)
            }
            let setter: Setter?
            switch traced.record {
            case .event(let e): setter = Setter(seq: e.seq, t: e.t, event: String(decoding: e.envelope.event.jsonBytes(), as: UTF8.self))
            case .load(let l): setter = Setter(seq: l.seq, t: l.t, event: "a load of a whole state")
            case .gap(let g): setter = Setter(seq: g.seq, t: g.t, event: "a gap (records lost; the state after it recorded)")
            default: setter = nil
            }
            guard let setter else { continue }
            for (name, value) in members(replayer.engine) {
                guard let i = inputs.firstIndex(where: { $0.name == name }) else {
                    inputs.append(Input(name: name, value: value, setBy: setter, before: nil, previousValue: nil))
                    continue
                }
                guard inputs[i].value != value else { continue }
                inputs[i].before = inputs[i].setBy
                inputs[i].previousValue = inputs[i].value
                inputs[i].setBy = setter
                inputs[i].value = value
            }
            if setter.seq == seq { reached = (setter.t, replayer.engine.digest) }
            if setter.seq > seq { break }
        }
        guard let (t, digest) = reached else {
            throw TraceError("the trace has no event at seq \(seq) (it runs from seq \(file.header.initialSeq) to \(replayer.engine.seq))", line: 0, offset: 0)
        }
        return TraceWhy(seq: seq, t: t, digest: digest, inputs: inputs)
    }

    /// The layout's inputs in order: the app, then each member of the state encoding.
    static func members(_ engine: Engine) -> [(String, String)] {
        var w = JSONWriter()
        engine.state.write(to: &w, app: engine.app)
        var out: [(String, String)] = [("app", "\"" + engine.app.name + "\"")]
        if case .object(let fields)? = try? JSON.parse(w.bytes) {
            for (name, value) in fields {
                var v = JSONWriter()
                v.value(value)
                out.append((name, String(decoding: v.bytes, as: UTF8.self)))
            }
        }
        return out
    }

    public func json() -> [UInt8] {
        var w = JSONWriter()
        func setter(_ s: Setter?) {
            guard let s else { w.null(); return }
            w.beginObject(); w.key("seq"); w.int(s.seq); w.key("t"); w.int(Int(s.t)); w.key("event"); w.string(s.event); w.endObject()
        }
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("t"); w.int(Int(t))
        w.key("digest"); w.string(Digest.hex(digest))
        w.key("inputs"); w.beginArray()
        for i in inputs {
            w.beginObject()
            w.key("name"); w.string(i.name)
            w.key("value"); w.string(i.value)
            w.key("setBy"); setter(i.setBy)
            w.key("before"); setter(i.before)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        return w.bytes
    }
}
