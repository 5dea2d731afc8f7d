/// Reading records back: the line a trace holds, into the `TraceRecord` it stands for.
extension TraceRecord {
    /// The seq of a record line read alone (the tail of a file, for a resume): a load that
    /// keeps the profile and app in place decodes only after the records before it, but its
    /// line is whole and its seq its own.
    public static func seq(ofLine line: UnsafeBufferPointer<UInt8>) -> Int? {
        if let record = try? decode(line) { return record.seq }
        guard let value = try? JSON.parse(UnsafeRawBufferPointer(line)), case .object = value, value["load"] != nil,
              case .number(let n)? = value["seq"], n >= 0, n == n.rounded(), n <= Double(TraceHeader.maxInteger) else { return nil }
        return Int(n)
    }

    /// Decodes one record line (without its newline). The message of the error says what is
    /// wrong; the caller adds the line and offset. `inPlace`: the profile and app before this
    /// record, which a load that leaves them out keeps (a cursor follows them; nil where the
    /// record is read alone).
    public static func decode(_ line: UnsafeBufferPointer<UInt8>, inPlace: LoadContext? = nil) throws(TraceError) -> TraceRecord {
        if let fast = TraceFastPath.hingeEvent(line) { return .event(fast) }
        let value: JSONValue
        do { value = try JSON.parse(UnsafeRawBufferPointer(line)) } catch {
            throw TraceError("not valid JSON: \(error.message) at byte \(error.offset) of the line", line: 0, offset: 0)
        }
        do { return try decode(value, inPlace: inPlace) } catch {
            throw TraceError("bad record: \(error)", line: 0, offset: 0)
        }
    }

    public static func decode(_ value: JSONValue, inPlace: LoadContext? = nil) throws(InputError) -> TraceRecord {
        let r = try FieldReader(value, path: "", what: "record")
        let seq = try r.integer("seq", min: 0, max: TraceHeader.maxInteger)
        func time() throws(InputError) -> UInt64 { UInt64(try r.integer("t", min: 0, max: TraceHeader.maxInteger)) }
        func digest() throws(InputError) -> UInt64 {
            guard let d = Digest.parseHex(try r.string("digest")) else {
                throw InputError(.badValue, "digest must be 16 hex digits", field: "digest")
            }
            return d
        }
        if let event = r.optional("event") {
            try r.rejectUnknown(allowed: ["seq", "t", "client", "event", "digest", "latencyNs"])
            let envelope: EventEnvelope
            do { envelope = try Event.decode(event) } catch { throw error.under("event") }
            let latency = try r.optionalInteger("latencyNs", min: 0, max: TraceHeader.maxInteger)
            return .event(TraceEvent(seq: seq, t: try time(), client: try r.optionalInteger("client", min: 0, max: TraceHeader.maxInteger),
                                     envelope: envelope, digest: try digest(), latencyNs: latency.map { UInt64($0) }))
        }
        if let load = r.optional("load") {
            try r.rejectUnknown(allowed: ["seq", "t", "client", "load", "digest"])
            let l = try FieldReader(load, path: "load", what: "load")
            try l.rejectUnknown(allowed: ["profile", "app", "state"])
            func kept(_ name: String) throws(InputError) -> LoadContext {
                guard let inPlace else {
                    throw InputError(.missingField, "a load that keeps the \(name) in place is read after the records before it", field: "load.\(name)")
                }
                return inPlace
            }
            let profile: DeviceProfile
            if let p = l.optional("profile") {
                do { profile = try DeviceProfile.decode(p) } catch { throw error.under("load.profile") }
            } else {
                profile = try kept("profile").profile
            }
            let app: App
            if let a = l.optional("app") { app = try App.decode(a, path: "load.app") } else { app = try kept("app").app }
            var state = DeviceState(app: app)
            if let s = l.optional("state") {
                do { state = try DeviceState.decode(s, app: app) } catch { throw error.under("load.state") }
            }
            var load = TraceLoad(seq: seq, t: try time(), client: try r.optionalInteger("client", min: 0, max: TraceHeader.maxInteger),
                                 profile: profile, app: app, state: state, digest: try digest())
            load.inPlace = inPlace
            return .load(load)
        }
        if let observe = r.optional("observe") {
            try r.rejectUnknown(allowed: ["seq", "t", "captured", "client", "observe", "observedAs", "verdict", "layoutSeq", "matchedSeq", "differences"])
            let observedAs = try r.optional("observedAs").map { v throws(InputError) in try ObservedReference.decode(v, path: "observedAs") }
            let request: ObserveRequest
            do { request = try ObserveRequest.decode(observe, observedGiven: observedAs == nil) } catch {
                var e = error
                e.field = e.field.map { "observe.\($0)" } ?? "observe"
                throw e
            }
            var differences: [ConformanceDifference] = []
            for (i, d) in try r.array("differences").enumerated() { differences.append(try ConformanceDifference.decode(d, path: "differences[\(i)]")) }
            let result = ConformanceResult(verdict: try r.enumeration("verdict", Verdict.self), seq: seq,
                                           layoutSeq: try r.integer("layoutSeq", min: 0, max: seq),
                                           matchedSeq: try r.optionalInteger("matchedSeq", min: 0, max: seq), differences: differences)
            var captured: ClosedRange<UInt64>?
            if let pair = try r.optionalArray("captured") {
                guard pair.count == 2, case .number(let a) = pair[0], case .number(let b) = pair[1], a == a.rounded(), b == b.rounded(),
                      a >= 0, a <= b, b <= Double(TraceHeader.maxInteger) else {
                    throw InputError(.badValue, "captured must be [start, end] in ns on the trace's clock, start <= end", field: "captured")
                }
                captured = UInt64(a)...UInt64(b)
            }
            return .observation(TraceObservation(seq: seq, t: try time(), client: try r.optionalInteger("client", min: 0, max: TraceHeader.maxInteger),
                                                 request: request, result: result, captured: captured, observedAs: observedAs))
        }
        if let frame = r.optional("frame") {
            try r.rejectUnknown(allowed: ["seq", "t", "client", "frame"])
            let verdict = try FrameVerdict.decode(try FieldReader(frame, path: "frame", what: "frame"), extra: [])
            return .frame(seq: seq, t: try time(), client: try r.optionalInteger("client", min: 0, max: TraceHeader.maxInteger), verdict: verdict)
        }
        if r.optional("mark") != nil {
            try r.rejectUnknown(allowed: ["seq", "t", "mark"])
            return .mark(seq: seq, t: try time(), label: try r.string("mark"))
        }
        if r.optional("batch") != nil {
            try r.rejectUnknown(allowed: ["seq", "batch"])
            let range = try r.array("batch")
            guard range.count == 2, case .number(let f) = range[0], case .number(let l) = range[1] else {
                throw InputError(.wrongType, "batch must be [first, last]", field: "batch")
            }
            let first = try FieldReader.checkInteger(f, field: "batch[0]", min: 1, max: TraceHeader.maxInteger)
            let last = try FieldReader.checkInteger(l, field: "batch[1]", min: first, max: TraceHeader.maxInteger)
            guard last == seq else { throw InputError(.badValue, "a batch record's seq is the batch's last event", field: "seq") }
            return .batch(first: first, last: last)
        }
        if let layout = r.optional("layout") {
            try r.rejectUnknown(allowed: ["seq", "layout"])
            guard case .object = layout else { throw InputError.wrongType("layout", expected: "an object", got: layout) }
            var w = JSONWriter(capacity: 4096)
            w.value(layout)
            return .layout(seq: seq, json: w.bytes)
        }
        if r.optional("gap") != nil {
            try r.rejectUnknown(allowed: ["seq", "t", "gap", "state", "digest"])
            let g = try FieldReader(try r.required("gap"), path: "gap", what: "gap")
            try g.rejectUnknown(allowed: ["lost", "reason"])
            return .gap(TraceGap(seq: seq, t: try time(), lost: try g.integer("lost", min: 0, max: TraceHeader.maxInteger),
                                 reason: try g.string("reason"), state: try r.required("state"), digest: try digest()))
        }
        throw InputError(.unknownRecord, "a record has one of \"event\", \"load\", \"observe\", \"mark\", \"frame\", \"batch\", \"layout\" or \"gap\"", field: nil)
    }
}
