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
