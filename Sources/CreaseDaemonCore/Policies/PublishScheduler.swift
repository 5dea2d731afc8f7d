/// Decides when the events applied so far are published as one batch.
///
/// Every applied event joins the open batch. The batch is flushed (the layout is
/// published once if it changed, then each event's reply is sent) at a flush point:
/// the end of a loop iteration, before a command or an error reply, at shutdown. So
/// events that arrive together, in one read or from several clients in one
/// iteration, cost one publish. A batch is also cut early once its oldest event has
/// waited a quarter of the budget, so a large backlog is published in slices and
/// the first events of a burst are not held back for the whole burst. (Reads are
/// sized to a quarter of the budget too, see ReadSizer: an event's latency stays
/// near half the budget plus one publish.)
public struct PublishScheduler: Sendable {
    public struct Batch: Equatable, Sendable {
        public var firstSeq: Int
        public var lastSeq: Int
        /// Whether any event in it changed the layout.
        public var changed: Bool
        public var events: Int { lastSeq - firstSeq + 1 }
    }

    public let budgetNs: UInt64
    public private(set) var open: Batch?
    private var oldestReadNs: UInt64 = 0

    public init(budgetNs: UInt64) {
        self.budgetNs = budgetNs
    }

    /// One event was applied as `seq`: it joins the open batch (or opens one).
    public mutating func applied(seq: Int, changed: Bool, readNs: UInt64) {
        if var b = open {
            b.lastSeq = seq
            b.changed = b.changed || changed
            open = b
        } else {
            open = Batch(firstSeq: seq, lastSeq: seq, changed: changed)
            oldestReadNs = readNs
        }
    }

    /// Asked after each line is handled, with the time then: the open batch to flush now
    /// when the budget says it must not wait for the end of the loop's iteration.
    public mutating func due(nowNs: UInt64) -> Batch? {
        guard open != nil, nowNs &- oldestReadNs >= budgetNs / 4 else { return nil }
        return flush()
    }

    /// A flush point: the open batch, if any, to publish now.
    public mutating func flush() -> Batch? {
        defer { open = nil }
        return open
    }
}
