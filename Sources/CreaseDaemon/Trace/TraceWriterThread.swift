#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseDaemonCore

/// The writer thread: takes what is queued, writes it, syncs as `--fsync` says.
final class TraceWriterThread: @unchecked Sendable {
    let queue: TraceQueue
    let files: any TraceFileSystem
    let options: TraceWriterOptions
    let retention: TraceRetention
    let directory: String
    let wake: @Sendable () -> Void
    let index: TraceIndexFile
    /// The header and index lines of a file the thread begins itself (after a gap).
    let headerFor: @Sendable (Engine, UInt64, String, Int, String) -> (header: [UInt8], index: [UInt8])
    var fd: Int32
    /// Bytes of complete records in the current file: a failed write is cut back to this.
    var length: Int
    var dirty = false
    var lastSyncNs = uv_hrtime()
    /// The last event seq in what the thread has taken from the queue.
    var takenSeq = 0
    var takenAwaitedRecords = 0
    private var lastHousekeepingNs: UInt64 = 0
    /// A new file began since the last housekeeping: retention and a heap trim are owed.
    private var trimPending = false
    private var retentionPending = false
    /// How often, at most, the thread checks that its file still has a name.
    static let checkIntervalNs: UInt64 = 1_000_000_000
    var lastCheckNs = uv_hrtime()
    /// Records written since the last check found the file in place: lost if the next one does not.
    var recordsSinceCheck = 0
    /// A piece of a `records` op's records as they go to the file: reused, grown only while an
    /// op holds a record larger than a piece (a load's manifest).
    var encoded = UnsafeMutableRawBufferPointer.allocate(byteCount: writeBytes + writeSlack, alignment: 16)
    /// The bytes a write carries, at most: a large op (a burst, up to the queue's limit) is
    /// encoded and written in pieces, so its encoded copy stays this small.
    static let writeBytes = 256 << 10
    /// Room past the end of a piece that encoding never reaches, unless a record's counted
    /// length is wrong: then `PendingRecords.encode` stops the process before it writes outside.
    static let writeSlack = 256

    deinit { encoded.deallocate() }

    init(queue: TraceQueue, files: any TraceFileSystem, options: TraceWriterOptions, directory: String, fd: Int32, length: Int,
         wake: @escaping @Sendable () -> Void, index: TraceIndexFile,
         headerFor: @escaping @Sendable (Engine, UInt64, String, Int, String) -> (header: [UInt8], index: [UInt8])) {
        self.index = index
        self.queue = queue
        self.files = files
        self.options = options
        retention = TraceRetention(keepBytes: options.keepBytes, keepDays: options.keepDays)
        self.directory = directory
        self.fd = fd
        self.length = length
        self.wake = wake
        self.headerFor = headerFor
    }

    /// The op list the queue gets back at the next wake (emptied, with its storage).
    private var spareOps: [TraceOp] = []

    func run() {
        var spare = PendingRecords(capacity: TraceQueue.tailCapacity)
        spareOps.reserveCapacity(16)
        applyRetention(current: queue.withLock { $0.path })
        while true {
            queue.condition.lock()
            // Under --fsync always, events counted lost on the loop side still need their seq published.
            while queue.ops.isEmpty && queue.tailRecords == 0 && !queue.closing
                    && !(options.fsync == .always && queue.owesDurable) {
                queue.writerWaiting = true
                if dirty && options.fsync == .interval {
                    if !queue.condition.wait(seconds: Double(options.fsyncIntervalMs) / 1000) { queue.writerWaiting = false; break }
                } else if trimPending || retentionPending {
                    // The last rotations' garbage is given back once things are quiet.
                    if !queue.condition.wait(seconds: 1) { queue.writerWaiting = false; break }
                } else {
                    queue.condition.wait()
                }
                queue.writerWaiting = false
            }
            // Unless replies wait for it (--fsync always), let the loop queue a few milliseconds'
            // worth, so one write carries many records instead of waking this thread per event.
            if options.fsync != .always, !queue.closing, queue.queuedBytes < TraceWriter.eagerWakeBytes {
                queue.condition.wait(seconds: TraceWriter.gatherSeconds)
            }
            // Take the tail by swapping buffers, so the loop keeps a warm one; the op lists swap
            // too (copying the queue's list and appending to the copy allocated at every wake).
            // Moved, never copied: a list referenced twice is copied by the next append.
            var ops: [TraceOp] = []
            swap(&ops, &spareOps)
            swap(&ops, &queue.ops)
            if queue.tailRecords > 0 {
                ops.append(.records(queue.tail, count: queue.tailRecords))
                queue.tail = spare
                queue.tailRecords = 0
            }
            queue.queuedBytes = 0
            takenSeq = queue.encodedSeq
            takenAwaitedRecords = queue.encodedAwaitedRecords
            let closing = queue.closing
            queue.condition.unlock()

            for op in ops { process(op) }
            // Keep the written buffer, emptied, as the next spare, with its storage: a fresh
            // allocation per wake showed up as munmap and TLB shoot-downs on the loop's core.
            // (When the tail was taken, it is the last op.) Buffers of records ops before a
            // rotation go back to the queue for its next tail.
            // A spare grown by a backlog (a flood the disk fell behind) shrinks back, and the
            // heap is trimmed once things are quiet: resident memory stays flat however many
            // floods came before (BENCHMARKS.md, memory).
            var returned: [PendingRecords] = []
            for (i, op) in ops.enumerated() {
                guard case .records(let entries, _) = op else { continue }
                if i == ops.count - 1 {
                    if entries.removeAll(keepingAtMost: TraceWriterThread.spareKeptBytes) { trimPending = true }
                    spare = entries
                } else {
                    entries.removeAll(keepingAtMost: TraceQueue.tailCapacity)
                    returned.append(entries)
                }
            }
            if !returned.isEmpty {
                queue.withLock { q in
                    for b in returned where q.freeBuffers.count < TraceQueue.freeBufferLimit { q.freeBuffers.append(b) }
                }
            }
            if ops.contains(where: { if case .records = $0 { false } else { true } }) { trimPending = true }
            ops.removeAll(keepingCapacity: true)
            swap(&ops, &spareOps)
            housekeepingIfDue()
            syncIfDue(force: closing)
            if closing {
                if fd >= 0 { files.close(fd) }
                queue.withLock { q in
                    q.finished = true
                    q.condition.broadcast()
                }
                return
            }
        }
    }

    /// After new files, at most once a second (and once things are quiet): retention, then
    /// the heap's free pages given back. Pruning the directory and the index at every
    /// rotation let a writer behind a burst of rotations pile up their ops (16 MiB live after
    /// 600 quick ones); and each rotation's header, state and file names come and go between
    /// longer-lived blocks, so glibc kept the freed pages: RSS grew 16 KiB a rotation
    /// (49 MiB over 3,000 quick rotations, 2 MiB of it live) and never came down.
    /// The most a spare buffer keeps: the few milliseconds a wake gathers at the burst's rate
    /// fit (5 ms of 3 M events/s is about 1 MB), a backlog's does not.
    static let spareKeptBytes = 2 << 20

    private func housekeepingIfDue() {
        guard trimPending || retentionPending else { return }
        let now = uv_hrtime()
        guard now &- lastHousekeepingNs >= 1_000_000_000 else { return }
        lastHousekeepingNs = now
        if retentionPending {
            retentionPending = false
            applyRetention(current: queue.withLock { $0.path })
        }
        if trimPending {
            trimPending = false
            malloc_trim(0)
        }
    }

    private func process(_ op: TraceOp) {
        switch op {
        case .records(let entries, let count):
            let failing = queue.withLock { $0.failing }
            guard fd >= 0, !failing, fileStillLinked() else { lose(count); return }
            // Encoded and written a piece at a time; should a write fail, the file is cut back
            // to before the first piece, and every record of the op is lost.
            var written = 0
            var at = 0
            while at < entries.count {
                let needed = entries.fileBytes(at: at)
                if needed > encoded.count - TraceWriterThread.writeSlack {
                    encoded.deallocate()
                    encoded = .allocate(byteCount: needed + TraceWriterThread.writeSlack, alignment: 16)
                }
                let piece = entries.encode(from: at, into: UnsafeMutableRawBufferPointer(rebasing: encoded[..<(encoded.count - TraceWriterThread.writeSlack)]))
                at = piece.next
                if let e = files.write(fd, UnsafeRawBufferPointer(rebasing: encoded[..<piece.bytes])) {
                    _ = files.truncate(fd, to: length)
                    queue.withLock { $0.fail(e.description) }
                    lose(count)
                    return
                }
                written += piece.bytes
            }
            // A record larger than a piece grew the buffer: back to its size, for the usual records.
            if encoded.count > TraceWriterThread.writeBytes + TraceWriterThread.writeSlack {
                encoded.deallocate()
                encoded = .allocate(byteCount: TraceWriterThread.writeBytes + TraceWriterThread.writeSlack, alignment: 16)
            }
            length += written
            dirty = true
            recordsSinceCheck += count
            queue.withLock { q in
                q.recordsWritten += UInt64(count)
                q.bytesWritten += UInt64(written)
            }
        case .open(let path, let header, let indexLine, let engine, let t):
            if fd >= 0 {
                if options.fsync != .never { _ = files.sync(fd) }
                files.close(fd)
                fd = -1
            }
            open(path: path, header: header, index: indexLine, engine: engine, t: t)
        case .resume(let engine, let t, let newPath):
            if fd < 0 {
                let part = Int(newPath.split(separator: "-").last?.split(separator: ".").first ?? "0") ?? 0
                let lines = headerFor(engine, t, "gap", part, newPath)
                open(path: newPath, header: lines.header, index: lines.index, engine: engine, t: t)
                if fd >= 0 {
                    queue.withLock { q in
                        q.path = newPath
                        q.part = part
                    }
                }
                return
            }
            markGap(engine: engine, t: t)
        }
    }

    private func open(path: String, header: [UInt8], index indexLine: [UInt8], engine: Engine, t: UInt64) {
        switch header.withUnsafeBytes({ files.create(path, header: $0) }) {
        case .failure(let e):
            queue.withLock { $0.fail(e.description) }
            return
        case .success(let f):
            fd = f
            length = header.count
            dirty = true
            index.append(indexLine)
            lastCheckNs = uv_hrtime()
            recordsSinceCheck = 0
            retentionPending = retention.isActive
        }
        if queue.withLock({ $0.failing }) { markGap(engine: engine, t: t) }
    }

    /// At most once per `checkIntervalNs`: whether the file still has a name. One whose
    /// directory was removed takes writes that reach nothing: it is closed, the records
    /// written since the last check are counted lost, and the trace fails until a probe or
    /// a rotation opens a new file (in the directory, once it is there again).
    private func fileStillLinked() -> Bool {
        let now = uv_hrtime()
        guard now &- lastCheckNs >= TraceWriterThread.checkIntervalNs else { return true }
        lastCheckNs = now
        guard files.isUnlinked(fd) else {
            recordsSinceCheck = 0
            return true
        }
        files.close(fd)
        fd = -1
        dirty = false
        let unread = recordsSinceCheck
        recordsSinceCheck = 0
        queue.withLock { q in
            q.fail("the file was removed")
            q.lostTotal += UInt64(unread)
            q.lostSinceGood += unread
        }
        return false
    }

    /// Writes a gap record holding `engine`'s state; on success the trace is writing again.
    private func markGap(engine: Engine, t: UInt64) {
        let lost = queue.withLock { $0.lostSinceGood }
        var record: [UInt8] = []
        TraceEncoding.appendGap(engine: engine, t: t, lost: lost, reason: queue.withLock { $0.failureReason }, to: &record)
        _ = files.truncate(fd, to: length)
        if let e = record.withUnsafeBytes({ files.write(fd, $0) }) {
            _ = files.truncate(fd, to: length)
            queue.withLock { $0.fail(e.description) }
            return
        }
        length += record.count
        dirty = true
        queue.withLock { q in
            q.failing = false
            q.lostAtRecovery = q.lostSinceGood
            q.lostSinceGood = 0
            q.gapsWritten += 1
        }
    }

    /// `--trace-keep-bytes`/`--trace-keep-days`: removes the directory's oldest files,
    /// never `current`, the one just opened.
    private func applyRetention(current: String) {
        guard retention.isActive else { return }
        let removed = retention.prune(directory: directory, currentPath: current)
        guard removed.files > 0 else { return }
        index.prune()
        queue.withLock { q in
            q.removedFiles += removed.files
            q.removedBytes += removed.bytes
        }
    }

    private func lose(_ count: Int) {
        queue.withLock { q in
            q.lostTotal += UInt64(count)
            q.lostSinceGood += count
        }
    }

    private func syncIfDue(force: Bool) {
        guard fd >= 0, dirty else { publishDurable(); return }
        switch options.fsync {
        case .always:
            _ = files.sync(fd)
            dirty = false
        case .interval:
            let elapsed = uv_hrtime() - lastSyncNs
            if force || elapsed >= options.fsyncIntervalMs * 1_000_000 {
                _ = files.sync(fd)
                dirty = false
                lastSyncNs = uv_hrtime()
            }
        case .never:
            dirty = false
        }
        publishDurable()
    }

    private func publishDurable() {
        guard options.fsync == .always else { return }
        let advanced = queue.withLock { [takenSeq, takenAwaitedRecords] q -> Bool in
            guard q.durableSeq < takenSeq || q.durableAwaitedRecords < takenAwaitedRecords else { return false }
            q.durableSeq = max(q.durableSeq, takenSeq)
            q.durableAwaitedRecords = max(q.durableAwaitedRecords, takenAwaitedRecords)
            return true
        }
        if advanced { wake() }
    }
}
