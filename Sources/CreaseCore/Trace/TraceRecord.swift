/// One line after the header. Which member a line has says what it is:
///
///     {"seq":12,"t":48211904,"client":3,"event":{"event":"hinge","angle":91.5,"ts":77},"digest":"…","latencyNs":41250}
///     {"seq":13,"t":48900000,"client":3,"load":{"profile":{…},"app":{…},"state":{…}},"digest":"…"}
///     {"seq":12,"t":48300000,"mark":"label"}
///     {"seq":12,"batch":[9,12]}                       events 9…12 were published as one layout
///     {"seq":12,"layout":{…}}                        the layout after seq 12 (--trace-layouts)
///     {"seq":40,"t":…,"gap":{"lost":27,"reason":"…"},"state":{…},"digest":"…"}
///     {"seq":12,"t":…,"client":4,"frame":{"kind":"flash","t":…,"refSeq":11,"frame":127}}
///     {"seq":12,"t":…,"client":4,"observe":{"cmd":"observe",…},"verdict":"stale","layoutSeq":12,"matchedSeq":9,"differences":[…]}
///     {"seq":12,"t":…,"client":4,"observe":{"cmd":"observe",…},"observedAs":{"view":"pageSource","layout":"…","digest":"…"},"verdict":"match",…}
///
/// `t` is monotonic nanoseconds since the run began; `seq` counts applied events.
/// The rare records are boxed (`indirect`): a replay copies each record it reads, and an
/// observation inline made every hinge record as large as a look.
public enum TraceRecord: Sendable, Equatable {
    case event(TraceEvent)
    case mark(seq: Int, t: UInt64, label: String)
    case batch(first: Int, last: Int)
    /// The layout line as recorded, re-encoded canonically (equal to what the engine prints).
    case layout(seq: Int, json: [UInt8])
    /// Records were lost (a full disk, a failed write); writing resumed at `seq` with this state.
    indirect case gap(TraceGap)
    /// A `load` command: profile, app and state replaced at once, one seq past the last.
    indirect case load(TraceLoad)
    /// A rig's observation of the device and the verdict the daemon gave it.
    indirect case observation(TraceObservation)
    /// A frame of the device's screen a rig's frame judge flagged, at the engine's `seq`.
    indirect case frame(seq: Int, t: UInt64, client: Int?, verdict: FrameVerdict)

    /// The layout digest an event or load record says it left.
    public var recordedDigest: UInt64? {
        switch self {
        case .event(let e): e.digest
        case .load(let l): l.digest
        case .mark, .batch, .layout, .gap, .observation, .frame: nil
        }
    }

    /// The seq the engine is at after this record: every record names one.
    public var seq: Int {
        switch self {
        case .event(let e): e.seq
        case .load(let l): l.seq
        case .mark(let seq, _, _): seq
        case .batch(_, let last): last
        case .layout(let seq, _): seq
        case .gap(let g): g.seq
        case .observation(let o): o.seq
        case .frame(let seq, _, _, _): seq
        }
    }

    /// The seq of a record that moves the engine on by one (an event or a load).
    public var appliedSeq: Int? {
        switch self {
        case .event(let e): e.seq
        case .load(let l): l.seq
        case .mark, .batch, .layout, .gap, .observation, .frame: nil
        }
    }
}

public struct TraceObservation: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    public var client: Int?
    /// The `observe` command as the rig sent it.
    public var request: ObserveRequest
    public var result: ConformanceResult
    /// When the screen was read (its `capturedAt`), on the trace's clock as `t`.
    public var captured: ClosedRange<UInt64>?
    /// The record kept the look as a view of a layout, not whole: `request.observed` is the
    /// look only once `isResolved` (a replay rebuilt it, `resolve(_:)`).
    public var observedAs: ObservedReference?
    public private(set) var isResolved: Bool

    public init(seq: Int, t: UInt64, client: Int?, request: ObserveRequest, result: ConformanceResult, captured: ClosedRange<UInt64>? = nil,
                observedAs: ObservedReference? = nil) {
        self.seq = seq
        self.t = t
        self.client = client
        self.request = request
        self.result = result
        self.captured = captured
        self.observedAs = observedAs
        isResolved = observedAs == nil
    }

    /// The look rebuilt from the layouts `tracker` keeps; false (and unchanged) when it cannot be.
    public mutating func resolve(_ tracker: ConformanceTracker) -> Bool {
        guard !isResolved, let reference = observedAs else { return true }
        guard let observed = tracker.resolve(reference) else { return false }
        request.observed = observed
        isResolved = true
        return true
    }

    /// The same look, recorded whole: what a record written where its layout may differ
    /// (a minimized repro) must be. Only a resolved look can be.
    public var whole: TraceObservation {
        precondition(isResolved, "an observation kept as a reference is recorded whole only once resolved")
        var o = self
        o.observedAs = nil
        return o
    }
}

public struct TraceEvent: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    /// The daemon's number for the connection the event came from.
    public var client: Int?
    /// The event with the sender's `ts` (and `id`, if it had one).
    public var envelope: EventEnvelope
    /// The layout digest after the event.
    public var digest: UInt64
    /// The daemon's own latency for the event: from reading its line to its layout
    /// being queued to every subscriber (as its reply's `latencyUs`). Nil in traces
    /// recorded before it was written.
    public var latencyNs: UInt64?

    public init(seq: Int, t: UInt64, client: Int?, envelope: EventEnvelope, digest: UInt64, latencyNs: UInt64? = nil) {
        self.seq = seq
        self.t = t
        self.client = client
        self.envelope = envelope
        self.digest = digest
        self.latencyNs = latencyNs
    }
}

public struct TraceLoad: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    public var client: Int?
    public var profile: DeviceProfile
    public var app: App
    public var state: DeviceState
    /// The layout digest after the load.
    public var digest: UInt64
    /// The profile and app in place before the load, where known: the record writes only
    /// what the load changed (a rig's reset writes `"load":{}`, not 6 KB of profile and app).
    public var inPlace: LoadContext?

    public init(seq: Int, t: UInt64, client: Int?, engine: Engine) {
        self.init(seq: seq, t: t, client: client, profile: engine.profile, app: engine.app, state: engine.state, digest: engine.digest)
    }

    /// The load that put `engine` in place of `before`: its record leaves out what it kept.
    public init(seq: Int, t: UInt64, client: Int?, engine: Engine, replacing before: Engine) {
        self.init(seq: seq, t: t, client: client, engine: engine)
        inPlace = LoadContext(profile: before.profile, app: before.app)
    }

    public init(seq: Int, t: UInt64, client: Int?, profile: DeviceProfile, app: App, state: DeviceState, digest: UInt64) {
        self.seq = seq
        self.t = t
        self.client = client
        self.profile = profile
        self.app = app
        self.state = state
        self.digest = digest
    }

    /// Loads are equal when they put the same in place, however their records were written.
    public static func == (a: TraceLoad, b: TraceLoad) -> Bool {
        a.seq == b.seq && a.t == b.t && a.client == b.client && a.digest == b.digest && a.state == b.state && a.profile == b.profile && a.app == b.app
    }

    /// What the load put in place; `profile` in place of the recorded one (calibration).
    public func makeEngine(profile: DeviceProfile? = nil) -> Engine { Engine(profile: profile ?? self.profile, app: app, state: state, seq: seq) }

    /// `{"profile","app","state"}`: what the load put in place, the record's `load` member.
    /// A profile or app the same as the one in place, and the app's default state, are left
    /// out: a reader takes them from the records before (`LoadContext`), as the command did.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if inPlace?.profile != profile { w.key("profile"); profile.write(to: &w) }
        if inPlace?.app != app { w.key("app"); w.value(app.source) }
        if inPlace == nil || state != DeviceState(app: app) { w.key("state"); state.write(to: &w, app: app) }
        w.endObject()
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter(capacity: 16 * 1024)
        write(to: &w)
        return w.bytes
    }
}

/// The profile and app in place at a point of a trace (the header's, then each load's):
/// what a load record that leaves them out keeps. A class: a cursor hands it to every
/// record it decodes, and copying the profile and app each time cost a replay a third.
public final class LoadContext: Sendable, Equatable {
    public let profile: DeviceProfile
    public let app: App

    public init(profile: DeviceProfile, app: App) {
        self.profile = profile
        self.app = app
    }

    public convenience init(_ header: TraceHeader) { self.init(profile: header.profile, app: header.app) }

    /// What is in place after `record`.
    public func following(_ record: TraceRecord) -> LoadContext {
        guard case .load(let l) = record else { return self }
        return LoadContext(profile: l.profile, app: l.app)
    }

    public static func == (a: LoadContext, b: LoadContext) -> Bool { a === b || (a.profile == b.profile && a.app == b.app) }
}

public struct TraceGap: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    public var lost: Int
    public var reason: String
    /// The state as written by `DeviceState.write(to:app:)`; it is read against the app of the moment.
    public var state: JSONValue
    public var digest: UInt64
}

/// Appends records as lines (each with its newline). Pure: the trace writer and
/// `crease trace slice` share it.
public enum TraceEncoding {
    /// `event` is the event object as the client sent it (already validated by the daemon);
    /// surrounding whitespace is dropped so the record stays one canonical-looking line.
    public static func appendEvent(seq: Int, t: UInt64, client: Int?, event: UnsafeRawBufferPointer, digest: UInt64,
                                   latencyNs: UInt64? = nil, to out: inout [UInt8]) {
        let bytes = event.bindMemory(to: UInt8.self)
        let (lo, hi) = trimmed(bytes)
        let line = UnsafeBufferPointer(rebasing: bytes[lo..<hi])
        BoundedLine.append(to: &out, atMost: 180 + hi - lo) { p in
            putEvent(seq: seq, t: t, client: client, event: line, digest: digest, latencyNs: latencyNs, &p)
        }
    }

    /// Writes `appendEvent`'s line at `p` and moves `p` past it: `eventRecordLength` bytes
    /// (`event` already trimmed). Through one pointer: this runs once per event.
    @inline(__always)
    package static func putEvent(seq: Int, t: UInt64, client: Int?, event: UnsafeBufferPointer<UInt8>, digest: UInt64, latencyNs: UInt64?,
                         _ p: inout UnsafeMutablePointer<UInt8>) {
        // {"seq":<20>,"t":<20>,"client":<20>,"event":…,"digest":"<16>","latencyNs":<20>}\n
        BoundedLine.put(#"{"seq":"#, &p)
        BoundedLine.putDecimal(seq, &p)
        BoundedLine.put(#","t":"#, &p)
        BoundedLine.putDecimal(t, &p)
        if let client {
            BoundedLine.put(#","client":"#, &p)
            BoundedLine.putDecimal(client, &p)
        }
        BoundedLine.put(#","event":"#, &p)
        BoundedLine.put(event, &p)
        BoundedLine.put(#","digest":""#, &p)
        BoundedLine.putHex(digest, &p)
        if let latencyNs {
            BoundedLine.put(#"","latencyNs":"#, &p)
            BoundedLine.putDecimal(latencyNs, &p)
        } else {
            BoundedLine.put("\"", &p)
        }
        BoundedLine.put("}\n", &p)
    }

    /// The length of the line `appendEvent` writes for these fields and an event of
    /// `eventBytes` bytes without surrounding whitespace, counted without writing it: the
    /// trace writer's loop side counts a file's bytes while its thread does the writing.
    package static func eventRecordLength(seq: Int, t: UInt64, client: Int?, eventBytes: Int, latencyNs: UInt64?) -> Int {
        // {"seq": ,"t": ,"event": ,"digest":"<16>  }\n
        var n = 7 + 5 + 9 + 11 + 16 + 2 + eventBytes
        n += BoundedLine.decimalDigits(seq) + BoundedLine.decimalDigits(t)
        if let client { n += 10 + BoundedLine.decimalDigits(client) }
        // ","latencyNs":<n>, or the digest's closing quote alone
        n += latencyNs.map { 14 + BoundedLine.decimalDigits($0) } ?? 1
        return n
    }

    public static func appendEvent(_ e: TraceEvent, to out: inout [UInt8]) {
        var w = JSONWriter(capacity: 96)
        e.envelope.event.write(to: &w, ts: e.envelope.ts, id: e.envelope.id)
        w.bytes.withUnsafeBytes { appendEvent(seq: e.seq, t: e.t, client: e.client, event: $0, digest: e.digest, latencyNs: e.latencyNs, to: &out) }
    }

    /// A load: the profile, app and state it put in place, and the digest they give.
    public static func appendLoad(_ l: TraceLoad, to out: inout [UInt8]) {
        var w = JSONWriter(capacity: 16 * 1024)
        w.beginObject()
        w.key("seq"); w.int(l.seq)
        w.key("t"); w.int(Int(l.t))
        if let client = l.client { w.key("client"); w.int(client) }
        w.key("load"); l.write(to: &w)
        w.key("digest"); w.string(Digest.hex(l.digest))
        w.endObject()
        out.append(contentsOf: w.bytes)
        out.append(0x0A)
    }

    /// `command` is the `observe` command as the rig sent it (already decoded by the daemon);
    /// surrounding whitespace is dropped.
    /// With `observedAs`, `command` is the command without its `observed` (`ObserveRequest.jsonBytes(observed: false)`).
    public static func appendObservation(t: UInt64, client: Int?, command: UnsafeRawBufferPointer, result: ConformanceResult,
                                         captured: ClosedRange<UInt64>? = nil, observedAs: ObservedReference? = nil, to out: inout [UInt8]) {
        let bytes = command.bindMemory(to: UInt8.self)
        let (lo, hi) = trimmed(bytes)
        var w = JSONWriter(capacity: 256 + (hi - lo))
        w.beginObject()
        w.key("seq"); w.int(result.seq)
        w.key("t"); w.int(Int(t))
        if let captured { w.key("captured"); w.beginArray(); w.int(Int(captured.lowerBound)); w.int(Int(captured.upperBound)); w.endArray() }
        if let client { w.key("client"); w.int(client) }
        w.key("observe"); w.raw(Array(UnsafeBufferPointer(rebasing: bytes[lo..<hi])))
        if let observedAs { w.key("observedAs"); observedAs.write(to: &w) }
        result.writeMembers(to: &w, seq: false)
        w.endObject()
        out.append(contentsOf: w.bytes)
        out.append(0x0A)
    }

    public static func appendObservation(_ o: TraceObservation, to out: inout [UInt8]) {
        o.request.jsonBytes(observed: o.observedAs == nil).withUnsafeBytes {
            appendObservation(t: o.t, client: o.client, command: $0, result: o.result, captured: o.captured, observedAs: o.observedAs, to: &out)
        }
    }

    public static func appendMark(seq: Int, t: UInt64, label: String, to out: inout [UInt8]) {
        appendASCII(#"{"seq":"#, to: &out)
        JSONWriter.appendInt(seq, to: &out)
        appendASCII(#","t":"#, to: &out)
        JSONWriter.appendUInt(UInt(t), to: &out)
        appendASCII(#","mark":"#, to: &out)
        JSONWriter.appendQuoted(label, to: &out)
        appendASCII("}\n", to: &out)
    }

    public static func appendFrame(seq: Int, t: UInt64, client: Int?, verdict: FrameVerdict, to out: inout [UInt8]) {
        var w = JSONWriter(capacity: 192)
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("t"); w.int(Int(t))
        if let client { w.key("client"); w.int(client) }
        w.key("frame"); verdict.write(to: &w)
        w.endObject()
        out.append(contentsOf: w.bytes)
        out.append(0x0A)
    }

    public static func appendBatch(first: Int, last: Int, to out: inout [UInt8]) {
        appendASCII(#"{"seq":"#, to: &out)
        JSONWriter.appendInt(last, to: &out)
        appendASCII(#","batch":["#, to: &out)
        JSONWriter.appendInt(first, to: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.appendInt(last, to: &out)
        appendASCII("]}\n", to: &out)
    }

    /// `layout` is `Engine.layoutJSON()`.
    public static func appendLayout<Line: Collection<UInt8>>(seq: Int, layout: Line, to out: inout [UInt8]) {
        appendASCII(#"{"seq":"#, to: &out)
        JSONWriter.appendInt(seq, to: &out)
        appendASCII(#","layout":"#, to: &out)
        out.append(contentsOf: layout)
        appendASCII("}\n", to: &out)
    }

    /// A gap: `lost` records were not written; the engine is as it is when writing resumed.
    public static func appendGap(engine: Engine, t: UInt64, lost: Int, reason: String, to out: inout [UInt8]) {
        appendGap(seq: engine.seq, t: t, lost: lost, reason: reason, digest: engine.digest, to: &out) { engine.state.write(to: &$0, app: engine.app) }
    }

    /// The one gap writer: `state` writes the state object.
    static func appendGap(seq: Int, t: UInt64, lost: Int, reason: String, digest: UInt64, to out: inout [UInt8],
                          state: (inout JSONWriter) -> Void) {
        var w = JSONWriter(capacity: 512)
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("t"); w.int(Int(t))
        w.key("gap"); w.beginObject(); w.key("lost"); w.int(lost); w.key("reason"); w.string(reason); w.endObject()
        w.key("state"); state(&w)
        w.key("digest"); w.string(Digest.hex(digest))
        w.endObject()
        out.append(contentsOf: w.bytes)
        out.append(0x0A)
    }

    public static func appendRecord(_ record: TraceRecord, to out: inout [UInt8]) {
        switch record {
        case .event(let e): appendEvent(e, to: &out)
        case .mark(let seq, let t, let label): appendMark(seq: seq, t: t, label: label, to: &out)
        case .batch(let first, let last): appendBatch(first: first, last: last, to: &out)
        case .layout(let seq, let json): appendLayout(seq: seq, layout: json, to: &out)
        case .observation(let o): appendObservation(o, to: &out)
        case .frame(let seq, let t, let client, let verdict): appendFrame(seq: seq, t: t, client: client, verdict: verdict, to: &out)
        case .gap(let g):
            appendGap(seq: g.seq, t: g.t, lost: g.lost, reason: g.reason, digest: g.digest, to: &out) { $0.value(g.state) }
        case .load(let l): appendLoad(l, to: &out)
        }
    }

    @inline(__always) static func appendASCII(_ s: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    /// The bounds of `bytes` without surrounding whitespace.
    @inlinable @inline(__always) package static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> (Int, Int) {
        var lo = 0, hi = bytes.count
        while lo < hi, isSpace(bytes[lo]) { lo += 1 }
        while hi > lo, isSpace(bytes[hi - 1]) { hi -= 1 }
        return (lo, hi)
    }

    @inlinable @inline(__always) package static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0D || b == 0x0A }
}

extension TraceRecord {
    /// Decodes one record line (without its newline). The message of the error says what is wrong;
    /// the caller adds the line and offset.
    /// The seq of a record line read alone (the tail of a file, for a resume): a load that
    /// keeps the profile and app in place decodes only after the records before it, but its
    /// line is whole and its seq its own.
    public static func seq(ofLine line: UnsafeBufferPointer<UInt8>) -> Int? {
        if let record = try? decode(line) { return record.seq }
        guard let value = try? JSON.parse(UnsafeRawBufferPointer(line)), case .object = value, value["load"] != nil,
              case .number(let n)? = value["seq"], n >= 0, n == n.rounded(), n <= Double(TraceHeader.maxInteger) else { return nil }
        return Int(n)
    }

    /// `inPlace`: the profile and app before this record, which a load that leaves them out
    /// keeps (a cursor follows them; nil where the record is read alone).
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
