/// Encoders for the daemon's replies and pushes (contract section 5). Each appends
/// one complete NDJSON line, newline included, to a caller-owned buffer, so the
/// shell can reuse one buffer per connection and encode without allocating.
public enum Reply {
    public static let protocolVersion = 1

    /// `{"id","ok":true,"seq","changed","digest","latencyUs"}`: the answer to an event with an id.
    /// The hottest encoder: written through one pointer (`BoundedLine`) and appended in one
    /// copy, the id too when it is a whole number (the usual kind), as `appendValue` writes it.
    public static func appendEventAck(id: JSONValue, seq: Int, changed: Bool, digest: UInt64, latencyNs: UInt64,
                                      to out: inout [UInt8]) {
        if case .number(let n) = id, n >= 0, n < 1e15, n == n.rounded() {
            // {"id":<15>,"ok":true,…}\n
            BoundedLine.append(to: &out, atMost: 144) { p in
                BoundedLine.put("{\"id\":", &p)
                BoundedLine.putDecimal(UInt64(n), &p)
                putAckFields(seq: seq, changed: changed, digest: digest, latencyNs: latencyNs, &p)
            }
            return
        }
        appendLiteral("{\"id\":", to: &out)
        appendValue(id, to: &out)
        BoundedLine.append(to: &out, atMost: 120) { p in
            putAckFields(seq: seq, changed: changed, digest: digest, latencyNs: latencyNs, &p)
        }
    }

    /// `,"ok":true,"seq":<20>,"changed":false,"digest":"<16>","latencyUs":<20>.<1>}\n`: at most 120 bytes.
    @inline(__always)
    private static func putAckFields(seq: Int, changed: Bool, digest: UInt64, latencyNs: UInt64, _ p: inout UnsafeMutablePointer<UInt8>) {
        BoundedLine.put(",\"ok\":true,\"seq\":", &p)
        BoundedLine.putDecimal(UInt64(max(seq, 0)), &p)
        BoundedLine.put(changed ? ",\"changed\":true,\"digest\":\"" : ",\"changed\":false,\"digest\":\"", &p)
        BoundedLine.putHex(digest, &p)
        BoundedLine.put("\",\"latencyUs\":", &p)
        // Microseconds with one decimal, rounded half up: 12345 ns is 12.3.
        let tenths = latencyNs / 100 + (latencyNs % 100 >= 50 ? 1 : 0)
        BoundedLine.putDecimal(tenths / 10, &p)
        if tenths % 10 != 0 {
            p[0] = UInt8(ascii: ".")
            p[1] = UInt8(48 + tenths % 10)
            p += 2
        }
        BoundedLine.put("}\n", &p)
    }

    /// `{"id"?,"line"?,"ts"?,"ok":false,"error":{"code","message","field"?}}`: `line` is the
    /// connection's line number of the rejected line, `ts` the rejected event's own.
    public static func appendError(_ error: InputError, to out: inout [UInt8]) {
        appendLiteral("{", to: &out)
        if let id = error.id {
            appendLiteral("\"id\":", to: &out)
            appendValue(id, to: &out)
            appendLiteral(",", to: &out)
        }
        if let line = error.line {
            appendLiteral("\"line\":", to: &out)
            JSONWriter.appendInt(line, to: &out)
            appendLiteral(",", to: &out)
        }
        if let ts = error.ts {
            appendLiteral("\"ts\":", to: &out)
            JSONWriter.appendInt(Int(ts), to: &out)
            appendLiteral(",", to: &out)
        }
        appendLiteral("\"ok\":false,\"error\":{\"code\":", to: &out)
        JSONWriter.appendQuoted(error.code.rawValue, to: &out)
        appendLiteral(",\"message\":", to: &out)
        JSONWriter.appendQuoted(error.message, to: &out)
        if let field = error.field {
            appendLiteral(",\"field\":", to: &out)
            JSONWriter.appendQuoted(field, to: &out)
        }
        appendLiteral("}}\n", to: &out)
    }

    /// `{"id"?,"ok":true, <members>}`: a successful command reply. `members` writes
    /// the reply's own members into the open object.
    public static func appendOK(id: JSONValue?, to out: inout [UInt8], _ members: (inout JSONWriter) -> Void) {
        var w = JSONWriter(capacity: 0)
        swap(&w.bytes, &out)
        w.beginObject()
        if let id {
            w.key("id")
            w.value(id)
        }
        w.key("ok")
        w.bool(true)
        members(&w)
        w.endObject()
        w.bytes.append(0x0A)
        swap(&w.bytes, &out)
    }

    /// `{"push": topic, "seq", <members>}`.
    public static func appendPush(_ topic: String, seq: Int, to out: inout [UInt8], _ members: (inout JSONWriter) -> Void) {
        var w = JSONWriter(capacity: 0)
        swap(&w.bytes, &out)
        w.beginObject()
        w.key("push")
        w.string(topic)
        w.key("seq")
        w.int(seq)
        members(&w)
        w.endObject()
        w.bytes.append(0x0A)
        swap(&w.bytes, &out)
    }

    /// `{"push":"layout","seq","digest","layout":{...}}` around the engine's layout bytes.
    /// `{"push":"layout","seq","digest","layout"}`: `layout` appends the layout line itself.
    public static func appendLayoutPush(seq: Int, digest: UInt64, to out: inout [UInt8], layout: (inout [UInt8]) -> Void) {
        appendLiteral("{\"push\":\"layout\",\"seq\":", to: &out)
        JSONWriter.appendInt(seq, to: &out)
        appendLiteral(",\"digest\":\"", to: &out)
        Digest.appendHex(digest, to: &out)
        appendLiteral("\",\"layout\":", to: &out)
        layout(&out)
        appendLiteral("}\n", to: &out)
    }

    /// A scalar id is echoed in its canonical form; anything else is written as JSON.
    @inline(__always)
    static func appendValue(_ v: JSONValue, to out: inout [UInt8]) {
        switch v {
        case .string(let s): JSONWriter.appendQuoted(s, to: &out)
        case .number(let n): JSONWriter.appendNumber(n, to: &out)
        case .bool(let b): appendLiteral(b ? "true" : "false", to: &out)
        case .null: appendLiteral("null", to: &out)
        case .array, .object:
            var w = JSONWriter(capacity: 0)
            swap(&w.bytes, &out)
            w.value(v)
            swap(&w.bytes, &out)
        }
    }

    @inline(__always)
    static func appendLiteral(_ s: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }
}
