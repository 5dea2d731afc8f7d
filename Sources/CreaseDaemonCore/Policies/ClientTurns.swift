/// How the loop shares itself among clients. A read's lines are handled for one turn, a
/// quarter of the latency budget (as a batch is cut at). A client with lines left when its
/// turn ends waits, its reading paused, behind those that ran out before it. Each waiting
/// client then gets one more turn per loop turn, in that order. A client sending heavy
/// commands (a stream of 61 KB loads) once cut another's 1 kHz hinge stream to 13 Hz; with
/// turns, the hinge stream keeps its rate.
///
/// Pure: the shell reads the clock and holds the connections; this decides when a turn ends
/// and whose turn comes next.
public struct ClientTurns: Sendable {
    /// How long one turn lasts, in ns.
    public let turnNs: UInt64
    /// The clients whose lines wait, in the order they ran out of their turn.
    public private(set) var waiting: [Int] = []

    public init(budgetUs: UInt64) {
        turnNs = budgetUs * 250
    }

    /// When a turn that starts at `now` ends.
    public func end(ofTurnStartingAt now: UInt64) -> UInt64 { now &+ turnNs }

    /// Whether a client whose turn ends at `end` may handle another line at `now`.
    @inline(__always)
    public static func goesOn(at now: UInt64, turnEnds end: UInt64) -> Bool { now < end }

    public var isEmpty: Bool { waiting.isEmpty }

    /// `client`'s turn ended with lines left: it waits behind the others, once. False when it
    /// was waiting already.
    @discardableResult
    public mutating func ranOut(_ client: Int) -> Bool {
        guard !waiting.contains(client) else { return false }
        waiting.append(client)
        return true
    }

    /// The next round: every waiting client, in order, each for one turn. The list starts
    /// empty again; a client left with lines after its turn runs out again (`ranOut`).
    public mutating func nextRound() -> [Int] {
        defer { waiting.removeAll(keepingCapacity: true) }
        return waiting
    }

    /// `client` is gone: it waits no more.
    public mutating func forget(_ client: Int) {
        waiting.removeAll { $0 == client }
    }
}
