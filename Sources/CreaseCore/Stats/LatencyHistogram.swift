
/// An HDR-style latency histogram over nanoseconds: values below 128 ns are counted
/// exactly; above that, each power of two is split into 64 equal buckets, so any
/// reported value is within 1/64 (1.6 %) above the true one. Fixed memory, O(1)
/// record, no allocation after init.
public struct LatencyHistogram: Sendable {
    static let linear = 128          // exact buckets 0..<128
    static let subBuckets = 64       // per power of two above that
    static let maxExponent = 40      // values up to 2^41 ns (about 36 minutes); larger ones are clamped
    public static let bucketCount = linear + (maxExponent - 6) * subBuckets

    public let budgetNs: UInt64
    public private(set) var count: UInt64 = 0
    public private(set) var maxNs: UInt64 = 0
    public private(set) var overBudget: UInt64 = 0
    public private(set) var sumNs: UInt64 = 0
    private var buckets: [UInt64]

    public init(budgetNs: UInt64) {
        self.budgetNs = budgetNs
        buckets = [UInt64](repeating: 0, count: Self.bucketCount)
    }

    @inline(__always)
    public static func index(of value: UInt64) -> Int {
        if value < UInt64(linear) { return Int(value) }
        let msb = 63 - value.leadingZeroBitCount      // >= 7
        if msb > maxExponent { return bucketCount - 1 }
        let shift = msb - 6
        let sub = Int(value >> UInt64(shift))           // 64...127
        return linear + (shift - 1) * subBuckets + (sub - subBuckets)
    }

    /// The largest value that falls in bucket `i`.
    public static func highestValue(inBucket i: Int) -> UInt64 {
        if i < linear { return UInt64(i) }
        let shift = (i - linear) / subBuckets + 1
        let sub = UInt64((i - linear) % subBuckets + subBuckets)
        return ((sub + 1) << UInt64(shift)) - 1
    }

    @inline(__always)
    public mutating func record(_ ns: UInt64) {
        buckets[Self.index(of: ns)] &+= 1
        count &+= 1
        sumNs &+= ns
        if ns > maxNs { maxNs = ns }
        if ns > budgetNs { overBudget &+= 1 }
    }

    /// The value at quantile `q` (0...1): no more than that fraction of the recorded
    /// values are larger. Reported as its bucket's upper bound, never above the max.
    public func value(atQuantile q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = max(1, UInt64((q * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, c) in buckets.enumerated() where c > 0 {
            seen += c
            if seen >= rank { return min(Self.highestValue(inBucket: i), maxNs) }
        }
        return maxNs
    }

    /// `{"count","budgetUs","overBudget","p50Us","p90Us","p99Us","p999Us","maxUs","meanUs"}`.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("count"); w.int(Int(count))
        w.key("budgetUs"); w.number(Self.micros(budgetNs))
        w.key("overBudget"); w.int(Int(overBudget))
        w.key("p50Us"); w.number(Self.micros(value(atQuantile: 0.5)))
        w.key("p90Us"); w.number(Self.micros(value(atQuantile: 0.9)))
        w.key("p99Us"); w.number(Self.micros(value(atQuantile: 0.99)))
        w.key("p999Us"); w.number(Self.micros(value(atQuantile: 0.999)))
        w.key("maxUs"); w.number(Self.micros(maxNs))
        w.key("meanUs"); w.number(count == 0 ? 0 : Self.micros(sumNs / count))
        w.endObject()
    }

    /// Microseconds, rounded to 0.1.
    public static func micros(_ ns: UInt64) -> Double { Double((ns + 50) / 100) / 10 }
}
