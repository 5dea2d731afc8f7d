import CreaseCore
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Testing

extension PendingRecords {
    /// All the records as they go to the file, appended to `out`, a record at a time.
    func encode(to out: inout [UInt8]) {
        var at = 0
        while at < count {
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: fileBytes(at: at)))
            at = out.withUnsafeMutableBytes { encode(from: at, into: UnsafeMutableRawBufferPointer(rebasing: $0[start...])).next }
        }
    }
}

/// The trace writer's hand-off form: what the loop stages and the writer thread encodes
/// must be, byte for byte, the records the loop used to encode itself.
@Suite struct PendingRecordsTests {
    /// A line of `n` bytes of JSON-ish text, with whitespace around it now and then (trimmed on the way).
    static func line(_ n: Int, padded: Bool) -> [UInt8] {
        var bytes = Array(#"{"event":"hinge","angle":"#.utf8)
        while bytes.count < n - 1 { bytes.append(UInt8(ascii: "1")) }
        bytes.append(UInt8(ascii: "}"))
        return padded ? Array(" \t".utf8) + bytes + Array("\r\n".utf8) : bytes
    }

    @Test("staged, handed over in pieces and encoded, entries give the records encoded directly, and their lengths")
    func entriesEncodeAsTheRecordsDo() {
        var rng = SplitMix64(seed: 41)
        for round in 0..<40 {
            let staged = PendingRecords(capacity: 64)   // small, so appends grow it
            let queue = PendingRecords(capacity: 64)
            var expected: [UInt8] = []
            var batchStart = 0
            for i in 0..<Int(rng.next() % 12 + 1) {
                if rng.next() % 4 == 0 {
                    // A record encoded on the loop (a batch, a mark): it goes straight into the queue.
                    let label = String(repeating: "m", count: Int(rng.next() % 20))
                    var direct: [UInt8] = []
                    TraceEncoding.appendMark(seq: i, t: UInt64(i), label: label, to: &direct)
                    expected += direct
                    #expect(queue.appendEncoded { TraceEncoding.appendMark(seq: i, t: UInt64(i), label: label, to: &$0) } == direct.count)
                    continue
                }
                let seq = Int(rng.next() % 100_000), t = rng.next() >> UInt64(rng.next() % 64), readNs = rng.next() >> 2
                let client = Int(rng.next() % 1000), digest = rng.next()
                let bytes = PendingRecordsTests.line(Int(rng.next() % 90) + 2, padded: rng.next() % 3 == 0)
                let layout: [UInt8]? = rng.next() % 3 == 0 ? Array(#"{"bars":[]}"#.utf8) + Array(repeating: UInt8(ascii: " "), count: Int(rng.next() % 9)) : nil
                let entry = staged.count
                bytes.withUnsafeBytes { staged.appendEvent(seq: seq, t: t, readNs: readNs, client: client, line: $0, digest: digest) }
                if let layout { layout.withUnsafeBytes { staged.appendLayout(seq: seq, layout: $0, toEntryAt: entry) } }
                // The layouts are queued at a time before or after the read: a latency, or none below zero.
                let queuedNs = rng.next() % 2 == 0 ? readNs &+ rng.next() % 5_000_000 : readNs &- rng.next() % 1000
                let latency = queuedNs >= readNs ? queuedNs - readNs : 0
                var direct: [UInt8] = []
                bytes.withUnsafeBytes {
                    TraceEncoding.appendEvent(seq: seq, t: t, client: client, event: $0, digest: digest, latencyNs: latency, to: &direct)
                }
                if let layout { TraceEncoding.appendLayout(seq: seq, layout: layout, to: &direct) }
                expected += direct
                #expect(staged.settle(from: batchStart, queuedNs: queuedNs) == UInt64(direct.count), "round \(round), event \(i)")
                queue.append(staged, batchStart..<staged.count)
                batchStart = staged.count
            }
            var out: [UInt8] = [0x41]   // appends after what is there
            queue.encode(to: &out)
            #expect(out == [0x41] + expected, "round \(round)")
            // In pieces of 200 bytes (or one record, if larger): as many whole records as fit.
            var pieces: [UInt8] = []
            var at = 0
            while at < queue.count {
                let room = max(200, queue.fileBytes(at: at))
                var piece = [UInt8](repeating: 0, count: room)
                let (next, n) = piece.withUnsafeMutableBytes { queue.encode(from: at, into: $0) }
                #expect(next > at && n > 0 && n <= room)
                #expect(next == queue.count || n + queue.fileBytes(at: next) > room, "stopped only where the next record does not fit")
                pieces += piece[..<n]
                at = next
            }
            #expect(pieces == expected, "round \(round)")
            // Walking the entries gives each one's file length, and their sum.
            var walked = 0
            at = 0
            while at < queue.count {
                let entry = queue.entry(at: at)
                walked += entry.fileBytes
                at += entry.size
            }
            #expect(at == queue.count)
            #expect(walked == expected.count)
            queue.removeAll(keepingAtMost: 64)
            #expect(queue.count == 0)
            var empty: [UInt8] = []
            queue.encode(to: &empty)
            #expect(empty.isEmpty)
        }
    }
}
