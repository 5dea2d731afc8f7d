/// Encoding a line of bounded length through one pointer: it is written into scratch
/// space with room for its worst case (on the stack when that is small), and appended to
/// the output in one copy.
/// The hot encoders (an event's reply, its trace record) use it instead of appending token
/// by token, which checks capacity and uniqueness per token; the layout encoder's
/// `RawWriter` writes with its byte copy and its decimals.
package enum BoundedLine {
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
        copy(s.utf8Start, s.utf8CodeUnitCount, to: p)
        p += s.utf8CodeUnitCount
    }

    @inline(__always)
    static func put(_ bytes: UnsafeBufferPointer<UInt8>, _ p: inout UnsafeMutablePointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        copy(base, bytes.count, to: p)
        p += bytes.count
    }

    /// Copies `n` bytes. Most are keys, ids and numbers under 64 bytes: those go a word at a
    /// time (the last word overlapping), inline, without the call and dispatch of `memcpy`.
    /// The one byte copy of the hot encoders (this and `RawWriter`).
    @inlinable @inline(__always)
    package static func copy(_ p: UnsafePointer<UInt8>, _ n: Int, to dst: UnsafeMutablePointer<UInt8>) {
        if n >= 8 && n <= 64 {
            let from = UnsafeRawPointer(p), to = UnsafeMutableRawPointer(dst)
            var i = 0
            while i &+ 8 < n {
                to.storeBytes(of: from.loadUnaligned(fromByteOffset: i, as: UInt64.self), toByteOffset: i, as: UInt64.self)
                i &+= 8
            }
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self), toByteOffset: n - 8, as: UInt64.self)
        } else if n < 8 {
            for i in 0..<n { dst[i] = p[i] }
        } else {
            dst.update(from: p, count: n)
        }
    }

    /// At most 20 bytes.
    @inline(__always)
    static func putDecimal(_ value: UInt64, _ p: inout UnsafeMutablePointer<UInt8>) {
        // Digits written two per division: a trace record has four numbers, and a division per
        // digit, twice, was a sixth of its encoding. Layout numbers are mostly under 10,000:
        // those take no loop.
        let pairs = decimalPairs.utf8Start
        if value < 10 {
            p[0] = UInt8(truncatingIfNeeded: 48 &+ value)
            p += 1
            return
        }
        if value < 100 {
            p[0] = pairs[Int(value) &* 2]
            p[1] = pairs[Int(value) &* 2 + 1]
            p += 2
            return
        }
        if value < 10_000 {
            // Most layout numbers' whole parts: two pairs, or a digit and a pair.
            let high = Int(value / 100) &* 2, low = Int(value % 100) &* 2
            if value < 1000 {
                p[0] = pairs[high + 1]
                p += 1
            } else {
                p[0] = pairs[high]
                p[1] = pairs[high + 1]
                p += 2
            }
            p[0] = pairs[low]
            p[1] = pairs[low + 1]
            p += 2
            return
        }
        let digits = decimalDigits(value)
        var v = value
        var i = digits
        while v >= 100 {
            let r = Int(v % 100) &* 2
            v /= 100
            i -= 2
            p[i] = pairs[r]
            p[i + 1] = pairs[r + 1]
        }
        if v >= 10 {
            p[0] = pairs[Int(v) &* 2]
            p[1] = pairs[Int(v) &* 2 + 1]
        } else {
            p[0] = UInt8(48 + v)
        }
        p += digits
    }

    /// How many digits `putDecimal` writes for `value`. From the bit length (log10 2 is about
    /// 1233 / 4096), corrected by one comparison: counting them up a power of ten at a time
    /// was a loop per digit.
    @inline(__always)
    static func decimalDigits(_ value: UInt64) -> Int {
        let log = ((64 - value.leadingZeroBitCount) &* 1233) >> 12
        return value < powersOfTen[log] ? max(log, 1) : log + 1
    }

    /// How many bytes `putDecimal` writes for `value`, its minus sign included.
    @inline(__always)
    static func decimalDigits(_ value: Int) -> Int {
        (value < 0 ? 1 : 0) + decimalDigits(UInt64(value.magnitude))
    }

    /// 10^0 to 10^19.
    /// Written out so the compiler lays the array down as a constant: computed, every read
    /// went through its lazy initialiser's check.
    private static let powersOfTen: [UInt64] = [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000, 10_000_000_000,
        100_000_000_000, 1_000_000_000_000, 10_000_000_000_000, 100_000_000_000_000, 1_000_000_000_000_000,
        10_000_000_000_000_000, 100_000_000_000_000_000, 1_000_000_000_000_000_000, 10_000_000_000_000_000_000,
    ]

    /// "00" to "99".
    private static let decimalPairs: StaticString =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

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
