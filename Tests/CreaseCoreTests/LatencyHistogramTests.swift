@testable import CreaseCore
import Testing

@Suite struct LatencyHistogramTests {
    @Test func bucketsAreContiguousAndBounded() {
        var previous = -1
        for v: UInt64 in Array(0..<5000) + [1 << 20, (1 << 20) + 1, 1 << 30, 1 << 40] {
            let i = LatencyHistogram.index(of: v)
            #expect(i >= 0 && i < LatencyHistogram.bucketCount)
            #expect(LatencyHistogram.highestValue(inBucket: i) >= v)
            // Relative error at most 1/64.
            #expect(Double(LatencyHistogram.highestValue(inBucket: i) - v) <= Double(v) / 64 + 1)
            if v < 5000 { #expect(i == previous || i == previous + 1); previous = i }
        }
        #expect(LatencyHistogram.index(of: .max) == LatencyHistogram.bucketCount - 1)
    }

    @Test func percentilesOfAUniformSpread() {
        var h = LatencyHistogram(budgetNs: 900_000)
        for us in 1...1000 { h.record(UInt64(us) * 1000) }
        #expect(h.count == 1000)
        #expect(h.overBudget == 100)
        #expect(h.maxNs == 1_000_000)
        let p50 = Double(h.value(atQuantile: 0.5)), p99 = Double(h.value(atQuantile: 0.99))
        #expect(p50 >= 500_000 && p50 <= 500_000 * 1.016)
        #expect(p99 >= 990_000 && p99 <= 990_000 * 1.016)
        #expect(h.value(atQuantile: 0.999) <= h.maxNs)
        #expect(h.value(atQuantile: 1) == 1_000_000)
    }

    @Test func writesTheStatsObject() {
        var h = LatencyHistogram(budgetNs: 1000)
        h.record(500); h.record(2500)
        var w = JSONWriter()
        h.write(to: &w)
        let v = try? JSON.parse(w.bytes)
        #expect(v?["count"] == .number(2))
        #expect(v?["overBudget"] == .number(1))
        #expect(v?["maxUs"] == .number(2.5))
        #expect(v?["p50Us"] == .number(0.5))
        #expect(v?["budgetUs"] == .number(1))
        let empty = LatencyHistogram(budgetNs: 1)
        #expect(empty.value(atQuantile: 0.99) == 0)
    }
}
