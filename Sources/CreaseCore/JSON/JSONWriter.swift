/// Writes canonical JSON: no whitespace, keys in the order the caller writes them,
/// one way of printing each number. Commas are inserted automatically.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]
    /// True when the next value written at this level needs a comma before it.
    private var needsComma = false

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inline(__always) private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma = false }
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma = true }
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma = false }
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma = true }

    /// Writes `"key":`; the value written next completes the member.
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func string(_ s: String) {
        separate()
        JSONWriter.appendQuoted(s, to: &bytes)
        needsComma = true
    }

    public mutating func bool(_ b: Bool) {
        separate()
        if b { bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65]) } else { bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65]) }
        needsComma = true
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        needsComma = true
    }

    public mutating func int(_ v: Int) {
        separate()
        JSONWriter.appendInt(v, to: &bytes)
        needsComma = true
    }

    /// Canonical number: integral values print as integers, others in Swift's
    /// shortest round-trip form. -0 prints as 0. Non-finite values cannot occur in
    /// validated input; they print as null rather than producing invalid JSON.
    public mutating func number(_ v: Double) {
        separate()
        JSONWriter.appendNumber(v, to: &bytes)
        needsComma = true
    }

    /// Appends already-encoded JSON as one value.
    public mutating func raw(_ encoded: [UInt8]) {
        separate()
        bytes.append(contentsOf: encoded)
        needsComma = true
    }

    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let n): number(n)
        case .string(let s): string(s)
        case .array(let a):
            beginArray()
            for e in a { value(e) }
            endArray()
        case .object(let members):
            beginObject()
            for (k, e) in members { key(k); value(e) }
            endObject()
        }
    }

    public static func appendInt(_ v: Int, to out: inout [UInt8]) {
        if v < 0 {
            out.append(UInt8(ascii: "-"))
            appendUInt(UInt(v.magnitude), to: &out)
        } else {
            appendUInt(UInt(v), to: &out)
        }
    }

    public static func appendUInt(_ v: UInt, to out: inout [UInt8]) {
        if v < 10 { out.append(UInt8(48 + v)); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // room for UInt.max's 20 digits
        var n = v
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while n > 0 {
                buf[23 - count] = UInt8(48 + n % 10)
                n /= 10
                count += 1
            }
            // One contiguous copy: appending the slice itself went through a generic element loop.
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buf[(24 - count)...]))
        }
    }

    public static func appendNumber(_ v: Double, to out: inout [UInt8]) {
        guard v.isFinite else { out.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]); return }
        if v == v.rounded(), abs(v) < 1e15 {
            appendInt(Int(v), to: &out)
            return
        }
        out.append(contentsOf: v.description.utf8)
    }

    public static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { appendEscaped($0, to: &out) }
        if done == nil {
            var copy = s
            copy.withUTF8 { appendEscaped($0, to: &out) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Copies UTF-8 bytes, escaping quotes, backslashes and control characters. Most
    /// strings (ids, enum names) need no escape and are copied in one go.
    static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for i in firstEscape(utf8)..<utf8.count {
            let b = utf8[i]
            guard needsEscape(b) else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
            runStart = i + 1
            BoundedLine.append(to: &out, atMost: 6) { $0 = putEscaped(b, at: $0) }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
    }

    @inline(__always) static func needsEscape(_ b: UInt8) -> Bool { b < 0x20 || b == 0x22 || b == 0x5C }

    /// Writes the escape of a byte that needs one at `q` (at most 6 bytes) and returns the
    /// byte after it.
    @inline(__always)
    static func putEscaped(_ b: UInt8, at q: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        q[0] = 0x5C
        switch b {
        case 0x22, 0x5C: q[1] = b
        case 0x0A: q[1] = 0x6E
        case 0x0D: q[1] = 0x72
        case 0x09: q[1] = 0x74
        default:
            q[1] = 0x75; q[2] = 0x30; q[3] = 0x30
            q[4] = Digest.hexDigit(b >> 4); q[5] = Digest.hexDigit(b)
            return q + 6
        }
        return q + 2
    }

    /// The index of the first byte that needs an escape (or the count), eight bytes at a
    /// time: ids are short, but diagnostics' messages run to a hundred bytes and more.
    @inline(__always)
    static func firstEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        guard let p = utf8.baseAddress else { return 0 }
        let n = utf8.count
        let raw = UnsafeRawPointer(p)
        var i = 0
        while i + 8 <= n {
            let hits = escapeHits(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            // The lowest flagged byte always needs an escape (a borrow only flags bytes after it).
            if hits != 0 { return i + hits.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < n, !needsEscape(p[i]) { i += 1 }
        return i
    }

    /// The high bit of each byte of `x` (first byte lowest) that is a control character,
    /// a quote or a backslash; bytes after a flagged one may be flagged wrongly.
    @inline(__always)
    static func escapeHits(_ x: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quote = x ^ (0x22 &* ones), backslash = x ^ (0x5C &* ones)
        let control = (x &- 0x20 &* ones) & ~x
        let isQuote = (quote &- ones) & ~quote
        let isBackslash = (backslash &- ones) & ~backslash
        return (control | isQuote | isBackslash) & highs
    }

    /// A layout number: quantized to 1/100 and printed without trailing zeros. For these
    /// values the text equals Swift's shortest round-trip form, without its cost.
    public mutating func centi(_ v: Double) {
        separate()
        JSONWriter.appendCenti(v, to: &bytes)
        needsComma = true
    }

    /// `v` in hundredths, rounded half away from zero, as `(v * 100).rounded()` is, for a
    /// finite `v` under 1e13 in magnitude. Without the libm call `rounded()` makes here: the
    /// truncation and the subtraction are exact below 2^52, so the fraction compared is exact.
    @inline(__always)
    static func hundredths(_ v: Double) -> Int {
        let scaled = v * 100
        let truncated = Int(scaled)
        let fraction = scaled - Double(truncated)
        return fraction >= 0.5 ? truncated + 1 : fraction <= -0.5 ? truncated - 1 : truncated
    }

    public static func appendCenti(_ v: Double, to out: inout [UInt8]) {
        guard v.isFinite, abs(v) < 1e13 else { appendNumber(v, to: &out); return }
        let hundredths = JSONWriter.hundredths(v)
        if hundredths < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = UInt(hundredths.magnitude)
        appendUInt(magnitude / 100, to: &out)
        let fraction = magnitude % 100
        guard fraction != 0 else { return }
        out.append(UInt8(ascii: "."))
        out.append(UInt8(48 + fraction / 10))
        if fraction % 10 != 0 { out.append(UInt8(48 + fraction % 10)) }
    }
}
