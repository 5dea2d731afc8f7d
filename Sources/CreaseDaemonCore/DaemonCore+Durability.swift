import CreaseCore

/// Replies and the disk: under --fsync always a reply waits until its record (and every
/// record queued before it) is durable, and a client's replies keep their order.
extension DaemonCore {
    /// The trace's records up to `seq` are on disk (or counted lost): their replies go out.
    /// `observations`: how many observation records are on disk (or counted lost).
    mutating func durable(upTo seq: Int, awaitedRecords: Int = .max, at now: UInt64, into out: inout DaemonActions) {
        let clients = clients, lastSender = lastSender?.client
        held.release(upTo: seq, records: awaitedRecords) { ready in
            DaemonCore.sendAcks(ready, clients: clients, lastSender: lastSender, at: now, into: &out)
        }
        guard !closeAfterHeld.isEmpty else { return }
        for client in closeAfterHeld where !held.holds(client: client) { out.append(.closeAfterWrites(client: client)) }
        closeAfterHeld.removeAll { !held.holds(client: $0) }
    }

    public var holdsAcks: Bool { !held.isEmpty }

    /// Sends the reply encoded from `start`, or, under --fsync always, holds it until every
    /// record so far is on disk when it must wait (`mustWait`: an observation's own) or
    /// the client has replies waiting (so a client's replies keep their order).
    mutating func reply(from start: Int, to client: Int, mustWait: Bool = false, into out: inout DaemonActions) {
        guard acksWaitForDisk, mustWait || held.holds(client: client) else {
            out.write(client: client, from: start)
            return
        }
        held.hold(client: client, seq: engine.seq, digest: engine.digest, reply: Array(out.bytes[start...]))
        out.bytes.removeSubrange(start...)
    }
}
