/// The common case, parsed without building a JSONValue: a hinge event in the exact
/// shape the trace writer produces from a rig's line,
/// `{"seq":N,"t":N,"client":N,"event":{"event":"hinge","angle":X[,"ts":N]},"digest":"HEX"[,"latencyNs":N]}`.
/// Anything else (other spacing, an `id`, another event) returns nil and takes the general path,
/// which accepts the same records; the two are tested to agree.
enum TraceFastPath {
    static func hingeEvent(_ b: UnsafeBufferPointer<UInt8>) -> TraceEvent? {
        var i = 0
        guard expect(b, &i, #"{"seq":"#), let seq = unsigned(b, &i),
              expect(b, &i, #","t":"#), let t = unsigned(b, &i),
              expect(b, &i, #","client":"#), let client = unsigned(b, &i),
              expect(b, &i, #","event":{"event":"hinge","angle":"#) else { return nil }
        var parser = JSONParser(b)
        parser.index = i
        guard i < b.count, b[i] != UInt8(ascii: "-"), let angle = try? parser.parseNumber() else { return nil }
        i = parser.index
        // Exactly what Event.decode accepts; anything else is left to it to reject with a message.
        guard angle >= 0, angle <= EventLimits.maxAngle else { return nil }
        var ts: Int64?
        if expect(b, &i, #","ts":"#) {
            var negative = false
            if i < b.count, b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
            guard let magnitude = unsigned(b, &i), magnitude < 1 << 53 else { return nil }
            ts = negative ? -Int64(magnitude) : Int64(magnitude)
        }
        guard expect(b, &i, #"},"digest":""#), let digest = hex16(b, i), i + 17 <= b.count, b[i + 16] == UInt8(ascii: "\"") else { return nil }
        i += 17
        var latency: Int?
        if expect(b, &i, #","latencyNs":"#) {
            guard let l = unsigned(b, &i) else { return nil }
            latency = l
        }
        guard i + 1 == b.count, b[i] == UInt8(ascii: "}") else { return nil }
        guard seq <= TraceHeader.maxInteger, t <= TraceHeader.maxInteger, client <= TraceHeader.maxInteger,
              (latency ?? 0) <= TraceHeader.maxInteger else { return nil }
        return TraceEvent(seq: seq, t: UInt64(t), client: client, envelope: EventEnvelope(event: .hinge(angle: angle), ts: ts),
                          digest: digest, latencyNs: latency.map { UInt64($0) })
    }

    @inline(__always) static func expect(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int, _ s: StaticString) -> Bool {
        let n = s.utf8CodeUnitCount
        guard i + n <= b.count, let base = b.baseAddress else { return false }
        // Eight bytes per comparison: a hinge line's 26-byte opening was ~70 instructions a byte at a time.
        let have = UnsafeRawPointer(base + i), want = UnsafeRawPointer(s.utf8Start)
        var k = 0
        while k &+ 8 <= n {
            guard have.loadUnaligned(fromByteOffset: k, as: UInt64.self) == want.loadUnaligned(fromByteOffset: k, as: UInt64.self) else { return false }
            k &+= 8
        }
        while k < n {
            guard have.load(fromByteOffset: k, as: UInt8.self) == want.load(fromByteOffset: k, as: UInt8.self) else { return false }
            k &+= 1
        }
        i += n
        return true
    }

    /// A JSON non-negative integer of at most 16 digits, no leading zeros.
    @inline(__always) static func unsigned(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Int? {
        let start = i
        var v = 0
        while i < b.count, b[i] &- 48 < 10, i - start < 16 {
            v = v * 10 + Int(b[i] &- 48)
            i += 1
        }
        guard i > start, i - start == 1 || b[start] != UInt8(ascii: "0") else { return nil }
        guard i >= b.count || b[i] &- 48 >= 10 else { return nil }
        return v
    }

    @inline(__always) static func hex16(_ b: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt64? {
        guard i + 16 <= b.count else { return nil }
        var v: UInt64 = 0
        for k in 0..<16 {
            let c = b[i + k]
            let d: UInt8
            switch c {
            case 48...57: d = c - 48
            case 97...102: d = c - 87
            case 65...70: d = c - 55
            default: return nil
            }
            v = v << 4 | UInt64(d)
        }
        return v
    }
}
