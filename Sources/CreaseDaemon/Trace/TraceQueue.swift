#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseDaemonCore

/// What the loop hands the writer thread, in order.
enum TraceOp {
    /// `count` records, as `PendingRecords` entries.
    case records(PendingRecords, count: Int)
    /// Close the current file and continue in a new one that starts with `header`.
    case open(path: String, header: [UInt8], index: [UInt8], engine: Engine, t: UInt64)
    /// A probe while failing: mark the gap with this state (in a new file if none is open).
    case resume(engine: Engine, t: UInt64, newPath: String)
}

/// State shared by the loop and the writer thread; every access holds `condition`'s lock.
/// The fields every record touches skip the runtime's exclusivity checks: the lock orders
/// every access, and none overlaps another.
final class TraceQueue: @unchecked Sendable {
    let condition = Condition()
    var ops: [TraceOp] = []
    /// The records since the last op, as `PendingRecords` entries, appended to in place.
    @exclusivity(unchecked) var tail = PendingRecords(capacity: TraceQueue.tailCapacity)
    @exclusivity(unchecked) var tailRecords = 0
    @exclusivity(unchecked) var queuedBytes = 0
    @exclusivity(unchecked) var writerWaiting = false
    var closing = false
    var finished = false

    @exclusivity(unchecked) var path: String
    /// `path`'s number in the run: the loop compares it per batch, where comparing paths cost more.
    @exclusivity(unchecked) var part = 0
    @exclusivity(unchecked) var failing = false
    var failureEpoch = 0
    var failureReason = ""
    var lostTotal: UInt64 = 0
    var lostSinceGood = 0
    var lostAtRecovery = 0
    var gapsWritten = 0
    var recordsWritten: UInt64 = 0
    var bytesWritten: UInt64 = 0
    /// Old files the retention limits removed, and their bytes.
    var removedFiles = 0
    var removedBytes: UInt64 = 0
    /// The highest seq whose records are handled: on disk (synced, under --fsync always) or counted lost.
    var durableSeq: Int
    /// The seq of the last event encoded (or counted lost) so far.
    @exclusivity(unchecked) var encodedSeq: Int
    /// Observation records encoded (or counted lost) so far, and how many of them are handled.
    var encodedAwaitedRecords = 0
    var durableAwaitedRecords = 0
    /// Records are waiting to be published as handled (under --fsync always).
    var owesDurable: Bool { encodedSeq > durableSeq || encodedAwaitedRecords > durableAwaitedRecords }

    init(path: String, durableSeq: Int) {
        self.path = path
        self.durableSeq = durableSeq
        encodedSeq = durableSeq
    }

    func withLock<R>(_ body: (TraceQueue) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body(self)
    }

    func fail(_ reason: String) {
        failing = true
        failureEpoch += 1
        failureReason = reason
    }

    /// Moves the tail into the op list, then appends `op`.
    func enqueue(_ op: TraceOp) {
        flushTail()
        // A new file's header (and the buffer behind it) counts against the queue's bound
        // like records do: a writer far behind a storm of rotations fails the trace instead
        // of holding their ops without end.
        if case .open(_, let header, _, _, _) = op { queuedBytes += header.count + (1 << 16) }
        ops.append(op)
        if writerWaiting { condition.signal() }
    }

    func flushTail() {
        guard tailRecords > 0 else { return }
        ops.append(.records(tail, count: tailRecords))
        tail = freeBuffers.popLast() ?? PendingRecords(capacity: TraceQueue.tailCapacity)
        tailRecords = 0
    }

    /// Record buffers the writer has emptied, for `flushTail` to take: a new 64 KiB buffer
    /// per rotation, freed on the writer thread, left the heap fragmented (RSS grew by
    /// tens of KiB a rotation and stayed).
    var freeBuffers: [PendingRecords] = []
    static let freeBufferLimit = 4
    /// A tail's first storage: about 3,500 event records, so a writer off the CPU for a few
    /// hundred milliseconds does not make the loop grow its buffer (an allocation on the event
    /// path). Untouched pages of it are not resident.
    static let tailCapacity = 1 << 18
}
