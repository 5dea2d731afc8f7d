/// How many bytes to take from a socket per read.
///
/// Every line of a read counts as read when the read returns, so one read must not
/// hold more work than a sixth of the latency budget (leaving room for the batch it
/// joins, cut at a quarter of the budget, for the publish and for a preemption); the
/// rest waits in the kernel, where it pushes back on the sender. (A quarter, as the
/// batch cut, gave a burst p99 of 760-1,080 us against the 1 ms budget once events got
/// cheaper and reads longer; an eighth, 460-660 us but 1.4-1.8 M events/s; a sixth,
/// 440-850 us and 1.9-2.4 M events/s over seven runs.) The cost of a byte depends on the
/// events (a hinge tick inside a pose costs far less than a relayout), so it is
/// learned: an exponentially weighted average of processing time per byte, over
/// reads that held at least one whole line.
public struct ReadSizer: Sendable {
    public static let minimum = 256
    public static let maximum = 64 * 1024
    /// The share of the budget one read may take: 1/budgetShare.
    public static let budgetShare = 6.0

    public let budgetNs: UInt64
    /// The current read size.
    public private(set) var size: Int
    /// Smoothed processing cost, in nanoseconds per byte.
    public private(set) var nsPerByte: Double

    public init(budgetNs: UInt64) {
        self.budgetNs = budgetNs
        // Until measured: 25 ns a byte, about a microsecond per hinge event.
        nsPerByte = 25
        size = 0
        size = target()
    }

    /// A read of `bytes` took `ns` to process (decode, apply, publish, reply).
    public mutating func observe(bytes: Int, ns: UInt64) {
        guard bytes > 0 else { return }
        let sample = Double(ns) / Double(bytes)
        nsPerByte += (sample - nsPerByte) * 0.25
        size = target()
    }

    private func target() -> Int {
        let fit = Double(budgetNs) / Self.budgetShare / max(nsPerByte, 0.001)
        return Int(min(Double(Self.maximum), max(Double(Self.minimum), fit)))
    }
}
