/// The layout digest: a 64-bit FNV-1a hash of the canonical layout bytes (the layout
/// without its `seq` and `digest` members), taken a byte at a time with the standard
/// offset basis 0xcbf29ce484222325 and prime 0x100000001b3, printed as 16 lowercase
/// hex digits. Any tool can recompute it: see docs/layout.md.
public enum Digest {
    public static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let prime: UInt64 = 0x0000_0100_0000_01b3

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

    public static func hex(_ value: UInt64) -> String {
        String(decoding: hexBytes(value), as: UTF8.self)
    }

    public static func hexBytes(_ value: UInt64) -> [UInt8] {
        let digits: StaticString = "0123456789abcdef"
        var out = [UInt8](repeating: 0, count: 16)
        for i in 0..<16 {
            out[15 - i] = digits.utf8Start[Int((value >> (UInt64(i) * 4)) & 0xF)]
        }
        return out
    }

    public static func parseHex(_ s: String) -> UInt64? {
        guard s.utf8.count == 16 else { return nil }
        return UInt64(s, radix: 16)
    }
}
