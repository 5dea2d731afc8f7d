/// Which hash a layout digest is. Layouts and version-4 traces use `crease64v`; older
/// traces recorded `crease64x4` (version 3), `crease64` (version 2) or FNV-1a (version 1),
/// and replaying one computes that digest again so its recorded digests still verify. The
/// exact definitions, with a Python reference, are in docs/layout.md.
public enum DigestAlgorithm: Sendable, Equatable {
    case crease64v
    case crease64x4
    case crease64
    case fnv1a64

    /// As docs/layout.md names it.
    public var name: String {
        switch self {
        case .fnv1a64: "FNV-1a"
        case .crease64: "crease64"
        case .crease64x4: "crease64x4"
        case .crease64v: "crease64v"
        }
    }

    /// The trace format version that records digests of this kind.
    public var traceVersion: Int {
        switch self {
        case .fnv1a64: 1
        case .crease64: 2
        case .crease64x4: 3
        case .crease64v: 4
        }
    }

    /// The digest a trace of this version records; nil for versions this build does not read.
    public init?(traceVersion: Int) {
        switch traceVersion {
        case 1: self = .fnv1a64
        case 2: self = .crease64
        case 3: self = .crease64x4
        case 4: self = .crease64v
        default: return nil
        }
    }

    public func digest(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { b in
            switch self {
            case .crease64v: Digest.crease64v(b)
            case .crease64x4: Digest.crease64x4(b)
            case .crease64: Digest.crease64(b)
            case .fnv1a64: Digest.fnv1a(b)
            }
        }
    }
}

/// Layout digests, printed as 16 lowercase hex digits.
public enum Digest {
    // MARK: crease64v: 64-byte stripes, two words per vector step

    /// crease64v: the bytes, padded with zero bytes to a multiple of 64, are read as 64-byte
    /// stripes of eight little-endian words `d[0...7]`. Eight accumulators `acc[0...7]` start
    /// at 0. In stripe `s`, word `i` with key `x = d[i] ^ (S[i] + s * k3)` adds
    /// `lo32(x) * hi32(x)` to `acc[i]` and `d[i]` itself to `acc[i ^ 1]`. Then `g = n * k3`
    /// and, for `j` in 0...3, `g = mum(g ^ acc[2j] ^ k1, acc[2j + 1] ^ k2)`; the digest is
    /// `fmix64(g)`. Every step is a 32-by-32-bit multiply and adds, lane by lane: two words
    /// per SSE2 instruction, no chain between stripes but an add, where crease64x4's three
    /// 64-bit multiplies per 16 bytes queued on the multiplier (about 190 -> 130 ns in a relayout: the first measured by leaving the digest out, the second
    /// inferred from the relayout's p50).
    public static func crease64v(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        var acc: (SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>) = (.zero, .zero, .zero, .zero)
        var key = stripeKeys
        let next = SIMD2<UInt64>(repeating: k3)
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i &+ 64 <= count {
                stripe(&acc, raw + i, key)
                key.0 &+= next; key.1 &+= next; key.2 &+= next; key.3 &+= next
                i &+= 64
            }
        }
        if i < count {
            padded(bytes, from: i) { stripe(&acc, $0, key) }
        }
        var g = UInt64(count) &* k3
        g = mum(g ^ acc.0.x ^ k1, acc.0.y ^ k2)
        g = mum(g ^ acc.1.x ^ k1, acc.1.y ^ k2)
        g = mum(g ^ acc.2.x ^ k1, acc.2.y ^ k2)
        g = mum(g ^ acc.3.x ^ k1, acc.3.y ^ k2)
        return fmix64(g)
    }

    public static func crease64v(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { crease64v($0) }
    }

    /// `S[0...7]` of crease64v, two per vector: `k1`, `k2`, `k3`, `k1 ^ k2`, `k2 ^ k3`,
    /// `k1 ^ k3`, `~k1`, `~k2`.
    static let stripeKeys: (SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>) =
        (SIMD2(k1, k2), SIMD2(k3, k1 ^ k2), SIMD2(k2 ^ k3, k1 ^ k3), SIMD2(~k1, ~k2))

    /// One 64-byte stripe at `p` into the accumulators, with the stripe's keys.
    @inline(__always) static func stripe(_ acc: inout (SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>),
                                         _ p: UnsafeRawPointer, _ key: (SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>, SIMD2<UInt64>)) {
        accumulate(&acc.0, pair(p, 0), key.0)
        accumulate(&acc.1, pair(p, 16), key.1)
        accumulate(&acc.2, pair(p, 32), key.2)
        accumulate(&acc.3, pair(p, 48), key.3)
    }

    /// Words `d[2j]`, `d[2j + 1]` into `acc[2j]`, `acc[2j + 1]`: the product of each keyed
    /// word's halves into its own, the word itself into the other's.
    @inline(__always) static func accumulate(_ acc: inout SIMD2<UInt64>, _ d: SIMD2<UInt64>, _ key: SIMD2<UInt64>) {
        let x = d ^ key
        acc &+= (x & SIMD2(repeating: 0xffff_ffff)) &* (x &>> 32)
        acc &+= SIMD2(d.y, d.x)
    }

    /// The bytes from `start` to the end (fewer than 64), then zero bytes, as 64 bytes at
    /// one address: the last stripe of crease64v, the last blocks of crease64x4 and crease64.
    @inline(__always) static func padded(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, _ body: (UnsafeRawPointer) -> Void) {
        var tail: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &tail) { buf in
            buf.copyMemory(from: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...]))
            body(UnsafeRawPointer(buf.baseAddress!))
        }
    }

    /// The two little-endian words at `offset`.
    @inline(__always) static func pair(_ p: UnsafeRawPointer, _ offset: Int) -> SIMD2<UInt64> {
        let v = p.loadUnaligned(fromByteOffset: offset, as: SIMD2<UInt64>.self)
        return SIMD2(UInt64(littleEndian: v.x), UInt64(littleEndian: v.y))
    }

    // MARK: crease64x4: crease64's step in four lanes (version-3 traces)

    /// crease64x4: the blocks of crease64 (16 bytes, the last padded with zero bytes, each
    /// two little-endian words `a`, `b`), dealt to four lanes in turn: block `j` goes to lane
    /// `j % 4`, whose value `h[j % 4]` (all four start at 0) takes crease64's step,
    /// `h = rotl((h ^ mum(a ^ k1, b ^ k2)) * k3, 29)`. The four lanes are then chained into
    /// `h = 0` by the same step's serial part, `h = rotl((h ^ lane) * k3, 29)`, lanes 0 to 3,
    /// and the result is `fmix64(h ^ length)`. The lanes do not wait for each other: the
    /// chain that crease64 runs once per block (an xor, a multiply, a rotate) runs once per
    /// four, so a 2.8 KB layout digests in a little over half the time.
    public static func crease64x4(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        var lane: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 64 <= count {
                lane.0 = step(lane.0, word(raw, i), word(raw, i + 8))
                lane.1 = step(lane.1, word(raw, i + 16), word(raw, i + 24))
                lane.2 = step(lane.2, word(raw, i + 32), word(raw, i + 40))
                lane.3 = step(lane.3, word(raw, i + 48), word(raw, i + 56))
                i += 64
            }
        }
        // At most four blocks are left, the last of them padded: lanes 0, 1, 2, 3 in turn.
        let left = count - i
        if left > 0 {
            padded(bytes, from: i) { t in
                lane.0 = step(lane.0, word(t, 0), word(t, 8))
                if left > 16 { lane.1 = step(lane.1, word(t, 16), word(t, 24)) }
                if left > 32 { lane.2 = step(lane.2, word(t, 32), word(t, 40)) }
                if left > 48 { lane.3 = step(lane.3, word(t, 48), word(t, 56)) }
            }
        }
        let h = chain(chain(chain(chain(0, lane.0), lane.1), lane.2), lane.3)
        return fmix64(h ^ UInt64(count))
    }

    public static func crease64x4(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { crease64x4($0) }
    }

    // MARK: crease64: 16 bytes per step (version-2 traces)

    /// Odd constants: `k1` and `k2` are MurmurHash3's fmix64 multipliers, `k3` is 2^64
    /// over the golden ratio. `k1` and `k2` each hold a byte (0xff, 0xfe) that never occurs
    /// in UTF-8 text, so no 8 bytes of a layout can cancel them to zero.
    static let k1: UInt64 = 0xff51_afd7_ed55_8ccd
    static let k2: UInt64 = 0xc4ce_b9fe_1a85_ec53
    static let k3: UInt64 = 0x9e37_79b9_7f4a_7c15

    /// crease64: the bytes are read as 16-byte blocks (the last padded with zero bytes),
    /// each as two little-endian 64-bit words `a`, `b`. Per block:
    /// `h = rotl((h ^ mum(a ^ k1, b ^ k2)) * k3, 29)`, starting from `h = 0`, where `mum`
    /// xors the low and high halves of the 128-bit product. The result is
    /// `fmix64(h ^ length)` (MurmurHash3's finaliser). Each block's `mum` does not depend
    /// on `h`, so the serial chain is an xor, a multiply and a rotate per 16 bytes.
    public static func crease64(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = bytes.count
        var h: UInt64 = 0
        var i = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            // Four blocks per turn: one loop test per 64 bytes instead of per 16, and the four
            // products (which do not depend on `h`) computed side by side. Same result as one
            // block per turn.
            while i + 64 <= count {
                let m0 = mum(word(raw, i) ^ k1, word(raw, i + 8) ^ k2)
                let m1 = mum(word(raw, i + 16) ^ k1, word(raw, i + 24) ^ k2)
                let m2 = mum(word(raw, i + 32) ^ k1, word(raw, i + 40) ^ k2)
                let m3 = mum(word(raw, i + 48) ^ k1, word(raw, i + 56) ^ k2)
                h = chain(chain(chain(chain(h, m0), m1), m2), m3)
                i += 64
            }
            while i + 16 <= count {
                h = step(h, word(raw, i), word(raw, i + 8))
                i += 16
            }
        }
        if i < count {
            padded(bytes, from: i) { t in h = step(h, word(t, 0), word(t, 8)) }
        }
        return fmix64(h ^ UInt64(count))
    }

    public static func crease64(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { crease64($0) }
    }

    @inline(__always) static func step(_ h: UInt64, _ a: UInt64, _ b: UInt64) -> UInt64 {
        chain(h, mum(a ^ k1, b ^ k2))
    }

    /// The serial part of a block's step: `rotl((h ^ m) * k3, 29)`.
    @inline(__always) static func chain(_ h: UInt64, _ m: UInt64) -> UInt64 {
        let x = (h ^ m) &* k3
        return (x << 29) | (x >> 35)
    }

    /// The little-endian 64-bit word at `offset`.
    @inline(__always) static func word(_ raw: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always) static func mum(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let p = a.multipliedFullWidth(by: b)
        return p.high ^ p.low
    }

    /// MurmurHash3's 64-bit finaliser.
    @inline(__always) static func fmix64(_ value: UInt64) -> UInt64 {
        var h = value
        h ^= h >> 33
        h = h &* k1
        h ^= h >> 33
        h = h &* k2
        h ^= h >> 33
        return h
    }

    // MARK: FNV-1a: version-1 traces

    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// 64-bit FNV-1a, a byte at a time (offset basis 0xcbf29ce484222325, prime
    /// 0x100000001b3): the digest of version-1 traces.
    public static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBufferPointer { fnv1a($0) }
    }

    public static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = offsetBasis
        for b in bytes {
            h ^= UInt64(b)
            h = h &* prime
        }
        return h
    }

    // MARK: Text

    public static func hex(_ value: UInt64) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        appendHex(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the 16 hex digits in one go, without allocating (replies, trace records and
    /// layout lines carry a digest each).
    @inline(__always)
    public static func appendHex(_ value: UInt64, to out: inout [UInt8]) {
        var text: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &text) { buf in
            putHex(value, at: buf.bindMemory(to: UInt8.self).baseAddress!)
            out.append(contentsOf: UnsafeRawBufferPointer(buf))
        }
    }

    /// Writes the 16 hex digits of `value` at `p`, most significant first: the one hex
    /// encoder, for writers that fill a buffer in place.
    @inline(__always)
    public static func putHex(_ value: UInt64, at p: UnsafeMutablePointer<UInt8>) {
        // Eight digits per word: a digit at a time was ~70 instructions per digest, and every
        // round trip writes two (the reply and the trace record).
        let raw = UnsafeMutableRawPointer(p)
        raw.storeBytes(of: hexWord(UInt32(truncatingIfNeeded: value >> 32)).bigEndian, as: UInt64.self)
        raw.storeBytes(of: hexWord(UInt32(truncatingIfNeeded: value)).bigEndian, toByteOffset: 8, as: UInt64.self)
    }

    /// The eight hex digits of `x` as the bytes of a word, the least significant digit in its
    /// lowest byte: each nibble spread to a byte, then each byte made a digit at once.
    @inline(__always)
    static func hexWord(_ x: UInt32) -> UInt64 {
        var v = UInt64(x)
        v = (v | v << 16) & 0x0000_FFFF_0000_FFFF
        v = (v | v << 8) & 0x00FF_00FF_00FF_00FF
        v = (v | v << 4) & 0x0F0F_0F0F_0F0F_0F0F
        // 1 in each byte whose nibble is 10 or more: those skip the 39 characters from "9" to "a".
        let letters = ((v &+ 0x0606_0606_0606_0606) & 0x1010_1010_1010_1010) >> 4
        return v &+ 0x3030_3030_3030_3030 &+ letters &* 39
    }

    /// The lowercase hex digit of the low four bits of `nibble`.
    @inline(__always)
    public static func hexDigit(_ nibble: UInt8) -> UInt8 {
        let digits: StaticString = "0123456789abcdef"
        return digits.utf8Start[Int(nibble & 0xF)]
    }

    public static func parseHex(_ s: String) -> UInt64? {
        guard s.utf8.count == 16 else { return nil }
        return UInt64(s, radix: 16)
    }
}
