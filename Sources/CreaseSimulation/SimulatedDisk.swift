import CreaseCore
import CreaseDaemonCore

/// The trace writer and its disk, as the simulator plays them: records arrive as the core
/// records them, become writable at a flush (`flushTrace`), are written and synced a few at
/// a time, stall, are lost while the disk is full (counted, as a gap), and on a crash a torn
/// tail of what was written and not yet synced survives or not. What it reports durable is
/// what the writer would: every record written and synced, or counted lost.
struct SimulatedDisk {
    enum Kind: Equatable {
        /// An applied event: its line and when it was applied, for the state a resume reads back.
        case event(line: [UInt8], t: Int64)
        /// An observation or mark record (a reply may wait for it).
        case counted
        /// A batch or queued record: it holds nothing a reply waits for.
        case other
    }

    struct Record {
        var kind: Kind
        var seq: Int
    }

    private(set) var pending: [Record] = []
    /// How many of `pending` a flush handed to the writer.
    private var writable = 0
    /// Written by the last disk step, synced by the next: a crash may tear them.
    private var unsynced: [Record] = []
    /// Every event record up to this seq is synced or counted lost.
    private(set) var durableSeq: Int
    /// Observation and mark records synced or counted lost.
    private(set) var durableCounted = 0
    /// The state the durable records give: what a resume starts from. A gap's records count
    /// too: the writer records the state with the gap.
    private(set) var engine: Engine
    private var stallSteps = 0
    private var lossLeft = 0
    private(set) var written = 0
    private(set) var lost = 0
    private(set) var files = 1
    let fault: SimulationFault?

    init(engine: Engine, fault: SimulationFault?) {
        self.engine = engine
        durableSeq = engine.seq
        self.fault = fault
    }

    /// What the core is told is durable.
    var reportedSeq: Int { fault == .earlyDurable ? durableSeq + 1 : durableSeq }

    var figures: TraceFigures {
        TraceFigures(file: "sim-\(files).jsonl", failure: lossLeft > 0 ? "disk full" : nil, fsync: "always", records: written,
                     bytes: written * 100, lost: lost, gaps: lost > 0 ? 1 : 0, files: files, removed: nil)
    }

    mutating func record(_ entry: DaemonActions.TraceEntry, bytes: [UInt8], coreStartNs: UInt64) {
        switch entry {
        case .event(let e):
            pending.append(Record(kind: .event(line: Array(bytes[e.line]), t: Int64(bitPattern: e.tNs &- coreStartNs)), seq: e.seq))
        case .mark, .observation, .frame:
            // The writer hands these over at once, as a flush does (`TraceWriter.recordMark`).
            pending.append(Record(kind: .counted, seq: 0))
            writable = pending.count
        case .load(_, let load):
            // The simulator sends no loads; one would carry its state.
            pending.append(Record(kind: .other, seq: load.seq))
        case .queued, .batch:
            pending.append(Record(kind: .other, seq: 0))
        }
    }

    mutating func flush() { writable = pending.count }

    mutating func reopen() { files += 1 }

    mutating func stall(steps: Int) { stallSteps = max(stallSteps, steps) }

    mutating func fill(records: Int) { lossLeft = max(lossLeft, records) }

    /// The end of a run: the disk neither stalls nor fills any more.
    mutating func recover() {
        stallSteps = 0
        lossLeft = 0
    }

    /// Syncs what the last step wrote, then writes up to `count` writable records (synced by
    /// the next step, or torn by a crash before it); false when it did nothing.
    mutating func write(_ count: Int) -> Bool {
        if stallSteps > 0 {
            stallSteps -= 1
            return false
        }
        let synced = !unsynced.isEmpty
        for r in unsynced { settle(r) }
        written += unsynced.count
        unsynced.removeAll()
        let n = min(count, writable)
        for r in pending.prefix(n) {
            if lossLeft > 0 {
                // Counted lost at once: the writer knows the write failed.
                lossLeft -= 1
                lost += 1
                settle(r)
            } else {
                unsynced.append(r)
            }
        }
        pending.removeFirst(n)
        writable -= n
        return synced || n > 0
    }

    private mutating func settle(_ r: Record) {
        switch r.kind {
        case .event(let line, let t):
            durableSeq = max(durableSeq, r.seq)
            let applied: Bool? = line.withUnsafeBytes { raw in
                guard case .event(let envelope)? = try? Wire.decodeParsing(line: raw) else { return nil }
                return try? engine.apply(envelope.event, at: t)
            }
            precondition(applied != nil, "a recorded event the engine took once applies again")
        case .counted:
            durableCounted += 1
        case .other:
            if r.seq > 0 { durableSeq = max(durableSeq, r.seq) }
        }
    }

    /// The process died: of what was written and not synced, the first `keep` records made it
    /// to the disk whole (a torn tail: the rest is cut); nothing handed over later did. The state
    /// the disk holds is what a resume starts from.
    mutating func crash(keep: Int) -> Engine {
        for r in unsynced.prefix(keep) { settle(r) }
        written += min(keep, unsynced.count)
        unsynced.removeAll()
        pending.removeAll()
        writable = 0
        stallSteps = 0
        lossLeft = 0
        files += 1
        return engine
    }
}

/// What a planted fault makes the disk do (to show the checks catch it).
public enum SimulationFault: String, CaseIterable, Sendable {
    /// Reports each record durable one seq before it is: an ack may leave before its record.
    case earlyDurable = "early-durable"
}
