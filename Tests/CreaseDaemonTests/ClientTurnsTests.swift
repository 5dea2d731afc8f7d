import CreaseDaemonCore
import Testing

/// The loop's fairness, as a pure policy (issue 41: the shell no longer decides it).
@Suite struct ClientTurnsTests {
    @Test("a turn is a quarter of the latency budget, and a line at its end is the next turn's")
    func aTurnIsAQuarterOfTheBudget() {
        let turns = ClientTurns(budgetUs: 1000)
        #expect(turns.turnNs == 250_000)
        let end = turns.end(ofTurnStartingAt: 1_000_000)
        #expect(end == 1_250_000)
        #expect(ClientTurns.goesOn(at: 1_249_999, turnEnds: end))
        #expect(!ClientTurns.goesOn(at: 1_250_000, turnEnds: end))
    }

    @Test("clients that ran out wait in the order they ran out, once each, one turn per round")
    func clientsTakeTurnsInOrder() {
        var turns = ClientTurns(budgetUs: 1000)
        let first = turns.ranOut(7), second = turns.ranOut(3), again = turns.ranOut(7)
        #expect(first && second)
        #expect(!again, "a client waits once, however often its turn ends")
        let round = turns.nextRound()
        #expect(round == [7, 3])
        #expect(turns.isEmpty, "a round takes every waiting client")
        // In the round, 7 runs out again and 5 arrives: 7 is behind 5 only if 5 ran out first.
        turns.ranOut(5)
        turns.ranOut(7)
        let next = turns.nextRound()
        #expect(next == [5, 7])
    }

    @Test("a client that is gone waits no more")
    func aGoneClientIsForgotten() {
        var turns = ClientTurns(budgetUs: 1000)
        turns.ranOut(1); turns.ranOut(2); turns.ranOut(3)
        turns.forget(2)
        #expect(turns.waiting == [1, 3])
    }
}
