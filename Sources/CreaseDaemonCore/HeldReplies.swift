/// The replies that wait for the disk under `--fsync always`, in the order they are owed:
/// an event's until its record is on disk, a command's until its own record and every
/// observation or mark record queued before it are. They leave in order, as the disk
/// catches up; what is durable only grows.
struct HeldReplies {
    private(set) var waiting: [DaemonCore.Ack] = []
    /// Records on disk (or counted lost): every event record up to this seq, and this many
    /// observation and mark records.
    private var durableSeq = Int.min
    private var durableRecords = 0
    /// Observation and mark records queued to the trace so far.
    private(set) var recordsQueued = 0

    var isEmpty: Bool { waiting.isEmpty }

    /// An observation or mark record went to the trace: replies held from now wait for it too.
    mutating func recordQueued() { recordsQueued += 1 }

    mutating func hold(_ acks: [DaemonCore.Ack]) { waiting.append(contentsOf: acks) }

    /// A command's reply (its bytes as encoded), after the records queued so far.
    mutating func hold(client: Int, seq: Int, digest: UInt64, reply: [UInt8]) {
        waiting.append(DaemonCore.Ack(client: client, id: .null, seq: seq, changed: false, digest: digest, readNs: 0,
                                      held: (recordsQueued, reply)))
    }

    /// Whether `client` has replies waiting (a later one must wait behind them, to keep their order).
    func holds(client: Int) -> Bool { waiting.contains { $0.client == client } }

    /// The disk caught up to `seq` and `records`: the replies free to go, in order, are given
    /// to `send` and no longer held.
    mutating func release(upTo seq: Int, records: Int, _ send: (ArraySlice<DaemonCore.Ack>) -> Void) {
        durableSeq = max(durableSeq, seq)
        durableRecords = max(durableRecords, records)
        guard !waiting.isEmpty else { return }
        let ready = waiting.prefix { $0.seq <= durableSeq && ($0.held?.awaitedRecords ?? 0) <= durableRecords }
        guard !ready.isEmpty else { return }
        send(ready)
        waiting.removeFirst(ready.count)
    }
}
