/// Encoding a line of bounded length through one pointer: it is written into scratch
/// space with room for its worst case (on the stack when that is small), and appended to
/// the output in one copy.
/// The hot encoders (an event's reply, its trace record) use it instead of appending token
/// by token, which checks capacity and uniqueness per token.
enum BoundedLine {
    /// Appends at most `worst` bytes, as many as `fill` advances its pointer over.
    @inline(__always)
    static func append(to out: inout [UInt8], atMost worst: Int, _ fill: (inout UnsafeMutablePointer<UInt8>) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: worst) { scratch in
            let begin = scratch.baseAddress!
            var p = begin
            fill(&p)
            let used = begin.distance(to: p)
            precondition(used <= worst, "a bounded line passed its worst case")
            out.append(contentsOf: UnsafeBufferPointer(start: begin, count: used))
        }
    }

    @inline(__always)
    static func put(_ s: StaticString, _ p: inout UnsafeMutablePointer<UInt8>) {
        p.update(from: s.utf8Start, count: s.utf8CodeUnitCount)
        p += s.utf8CodeUnitCount
    }

    @inline(__always)
    static func put(_ bytes: UnsafeBufferPointer<UInt8>, _ p: inout UnsafeMutablePointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        p.update(from: base, count: bytes.count)
        p += bytes.count
    }

    /// At most 20 bytes.
    @inline(__always)
    static func putDecimal(_ value: UInt64, _ p: inout UnsafeMutablePointer<UInt8>) {
        var digits = 1
        var v = value
        while v >= 10 { v /= 10; digits += 1 }
        v = value
        for i in stride(from: digits - 1, through: 0, by: -1) {
            p[i] = UInt8(48 + v % 10)
            v /= 10
        }
        p += digits
    }

    /// At most 20 bytes (a minus sign and 19 digits).
    @inline(__always)
    static func putDecimal(_ value: Int, _ p: inout UnsafeMutablePointer<UInt8>) {
        if value < 0 {
            p[0] = UInt8(ascii: "-")
            p += 1
        }
        putDecimal(UInt64(value.magnitude), &p)
    }

    /// 16 bytes.
    @inline(__always)
    static func putHex(_ value: UInt64, _ p: inout UnsafeMutablePointer<UInt8>) {
        Digest.putHex(value, at: p)
        p += 16
    }
}
