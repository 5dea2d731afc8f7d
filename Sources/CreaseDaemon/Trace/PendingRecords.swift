import CreaseCore
import CreaseDaemonCore
#if canImport(Glibc)
import Glibc
#endif

/// The trace writer's records on their way from the daemon's loop to its writer thread, in
/// the form cheapest for the loop: an event's record as its fields and its line, which the
/// writer thread encodes (the JSON of an event's record was a fifth of a hinge round trip
/// on the loop); any other record already encoded. Entries follow one another in one
/// buffer, each opening with a header:
///
/// - an event: `EventHeader`, then the event line (trimmed), then its encoded layout
///   record (`--trace-layouts`, when the event changed the layout);
/// - anything else: `EncodedHeader`, then the record's bytes as they go to the file.
///
/// Headers are in the machine's byte order (the buffer never leaves the process), and every
/// entry's parts are padded to eight bytes, so headers are read and written in place. The
/// buffer is raw memory rather than an array: an array's append cost over a hundred
/// instructions however few the bytes, and an event's entry is appended twice (staged, then
/// queued). A buffer has one owner at a time (the loop, the queue under its lock, or the
/// writer thread).
final class PendingRecords {
    private enum Kind: UInt32 {
        case encoded = 1
        case event = 2
    }

    private struct EncodedHeader {
        var kind = Kind.encoded.rawValue
        var count: UInt32
    }

    private struct EventHeader {
        var kind = Kind.event.rawValue
        var lineCount: UInt32
        var layoutCount: UInt32
        /// The record's length in the file, layout record included: set with the latency.
        var fileBytes: UInt32 = 0
        var seq: Int
        var t: UInt64
        var client: Int
        var digest: UInt64
        /// The time the event's line was read until its layout is queued (`settle`), then
        /// its latency: the slot waits for the one value the latency is computed from.
        var readNsThenLatency: UInt64
    }

    private static let eventHeaderSize = MemoryLayout<EventHeader>.size
    private static let encodedHeaderSize = MemoryLayout<EncodedHeader>.size

    @exclusivity(unchecked) private var base: UnsafeMutableRawPointer
    /// Bytes in use. Read from the daemon through `count`: a stored property read from another
    /// module comes with the runtime's exclusivity check, whatever its attribute says.
    @exclusivity(unchecked) private var used = 0
    @exclusivity(unchecked) private var capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = max(capacity, 64)
        base = malloc(self.capacity)!
    }

    deinit { free(base) }

    var count: Int { used }

    /// Empties the buffer, and lets its memory go past `keptCapacity`.
    /// Empties the buffer, shrinking its storage to `keptCapacity` when larger; returns
    /// whether it shrank.
    @discardableResult
    func removeAll(keepingAtMost keptCapacity: Int) -> Bool {
        used = 0
        guard capacity > keptCapacity else { return false }
        capacity = max(keptCapacity, 64)
        base = realloc(base, capacity)!
        return true
    }

    @inline(__always)
    private static func padded(_ n: Int) -> Int { (n &+ 7) & ~7 }

    /// Room for `n` more bytes at `base + used`.
    @inline(__always)
    private func reserve(_ n: Int) {
        if used &+ n > capacity { grow(to: used + n) }
    }

    private func grow(to needed: Int) {
        var c = capacity
        while c < needed { c *= 2 }
        base = realloc(base, c)!
        capacity = c
    }

    /// Appends `other`'s bytes `range`: whole entries.
    func append(_ other: PendingRecords, _ range: Range<Int>) {
        reserve(range.count)
        (base + used).copyMemory(from: other.base + range.lowerBound, byteCount: range.count)
        used &+= range.count
    }

    /// Appends `n` bytes from `p`, padded.
    private func appendPadded(_ p: UnsafeRawPointer, _ n: Int) {
        let size = PendingRecords.padded(n)
        reserve(size)
        (base + used).copyMemory(from: p, byteCount: n)
        used &+= size
    }

    // MARK: Loop side

    /// Appends an event's entry: its latency is not known yet (`settle` sets it).
    func appendEvent(seq: Int, t: UInt64, readNs: UInt64, client: Int, line: UnsafeRawBufferPointer, digest: UInt64) {
        let bytes = line.bindMemory(to: UInt8.self)
        let (lo, hi) = TraceEncoding.trimmed(bytes)
        let n = hi - lo
        let size = PendingRecords.eventHeaderSize + PendingRecords.padded(n)
        reserve(size)
        let at = base + used
        at.storeBytes(of: EventHeader(lineCount: UInt32(n), layoutCount: 0, seq: seq, t: t, client: client, digest: digest,
                                      readNsThenLatency: readNs), as: EventHeader.self)
        if n > 0 { BoundedLine.copy(bytes.baseAddress! + lo, n, to: (at + PendingRecords.eventHeaderSize).assumingMemoryBound(to: UInt8.self)) }
        used &+= size
    }

    /// Appends the layout record of the event whose entry opens at `entry`, the last one.
    func appendLayout(seq: Int, layout: UnsafeRawBufferPointer, toEntryAt entry: Int) {
        var record: [UInt8] = []
        TraceEncoding.appendLayout(seq: seq, layout: layout, to: &record)
        record.withUnsafeBytes { appendPadded($0.baseAddress!, $0.count) }
        var header = (base + entry).load(as: EventHeader.self)
        header.layoutCount = UInt32(record.count)
        (base + entry).storeBytes(of: header, as: EventHeader.self)
    }

    /// Appends an encoded record, which `encode` appends to the array it is given; returns its length.
    @discardableResult
    func appendEncoded(_ encode: (inout [UInt8]) -> Void) -> Int {
        var record: [UInt8] = []
        encode(&record)
        withUnsafeBytes(of: EncodedHeader(count: UInt32(record.count))) { appendPadded($0.baseAddress!, $0.count) }
        record.withUnsafeBytes { if let p = $0.baseAddress { appendPadded(p, $0.count) } }
        return record.count
    }

    /// The events' layouts were queued at `queuedNs`: the latency of each entry from `start`
    /// on (events' entries only) goes where its read time waited, with the length its record
    /// will have. Returns the records' length in the file, all together.
    func settle(from start: Int, queuedNs: UInt64) -> UInt64 {
        var total: UInt64 = 0
        var at = start
        while at < used {
            var e = (base + at).load(as: EventHeader.self)
            let readNs = e.readNsThenLatency
            e.readNsThenLatency = queuedNs >= readNs ? queuedNs - readNs : 0
            let length = TraceEncoding.eventRecordLength(seq: e.seq, t: e.t, client: e.client, eventBytes: Int(e.lineCount),
                                                         latencyNs: e.readNsThenLatency) + Int(e.layoutCount)
            e.fileBytes = UInt32(length)
            (base + at).storeBytes(of: e, as: EventHeader.self)
            total += UInt64(length)
            at += PendingRecords.size(of: e)
        }
        return total
    }

    /// The entry at `at`: its size in the buffer, its record's length in the file, and its
    /// event's `t` (nil for another record).
    func entry(at: Int) -> (size: Int, fileBytes: Int, t: UInt64?) {
        if (base + at).load(as: UInt32.self) == Kind.event.rawValue {
            let e = (base + at).load(as: EventHeader.self)
            return (PendingRecords.size(of: e), Int(e.fileBytes), e.t)
        }
        let n = Int((base + at).load(as: EncodedHeader.self).count)
        return (PendingRecords.encodedHeaderSize + PendingRecords.padded(n), n, nil)
    }

    @inline(__always)
    private static func size(of e: EventHeader) -> Int {
        eventHeaderSize + padded(Int(e.lineCount)) + padded(Int(e.layoutCount))
    }

    // MARK: Writer side

    /// The length in the file of the record whose entry opens at `at`: what `encode` needs
    /// room for to write it.
    func fileBytes(at: Int) -> Int { entry(at: at).fileBytes }

    /// Writes the records as they go to the file into `out`, from the entry at `start` on,
    /// as many whole ones as fit (the first must: `fileBytes(at: start)`). Returns where the
    /// next entry opens (`count` when done) and the bytes written. Each record's length is
    /// known from its entry, so the writer thread encodes straight into its write buffer.
    func encode(from start: Int, into out: UnsafeMutableRawBufferPointer) -> (next: Int, bytes: Int) {
        let begin = out.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var p = begin
        var at = start
        while at < used {
            let (size, fileBytes, _) = entry(at: at)
            guard begin.distance(to: p) + fileBytes <= out.count else { break }
            let recordStart = p
            if (base + at).load(as: UInt32.self) == Kind.event.rawValue {
                let e = (base + at).load(as: EventHeader.self)
                let line = at + PendingRecords.eventHeaderSize, layout = line + PendingRecords.padded(Int(e.lineCount))
                let event = UnsafeBufferPointer(start: (base + line).assumingMemoryBound(to: UInt8.self), count: Int(e.lineCount))
                TraceEncoding.putEvent(seq: e.seq, t: e.t, client: e.client, event: event, digest: e.digest, latencyNs: e.readNsThenLatency, &p)
                UnsafeMutableRawPointer(p).copyMemory(from: base + layout, byteCount: Int(e.layoutCount))
                p += Int(e.layoutCount)
            } else {
                UnsafeMutableRawPointer(p).copyMemory(from: base + at + PendingRecords.encodedHeaderSize, byteCount: fileBytes)
                p += fileBytes
            }
            // The length counted on the loop side is the length written: else rotation sizes drift, or worse.
            precondition(recordStart.distance(to: p) == fileBytes, "a pending record's length is not the length it encodes to")
            at += size
        }
        return (at, begin.distance(to: p))
    }
}
