/// `crease trace slice`: a new, self-contained trace holding events `from…to`, whose
/// header holds the state just before `from` (after event `from - 1`).
public enum TraceSlice {
    public struct Result: Sendable {
        public var bytes: [UInt8]
        public var events: Int
    }

    public static func slice(_ file: TraceFile, from: Int, to: Int) throws(TraceError) -> Result {
        let start = file.header.initialSeq
        guard from > start else {
            throw TraceError("--from \(from): this trace starts after seq \(start); the first event is \(start + 1)", line: 1, offset: 0)
        }
        guard to >= from else { throw TraceError("--to \(to) is before --from \(from)", line: 1, offset: 0) }

        var replayer = TraceReplayer(header: file.header, verify: false)
        var cursor = file.cursor()
        var headerWritten = false
        var out: [UInt8] = []
        var events = 0

        func writeHeader(_ r: TraceReplayer) {
            let h = TraceHeader(daemon: file.header.daemon, started: file.header.started, part: 0, reason: "slice",
                                labels: file.header.labels, config: file.header.config, layouts: file.header.layouts,
                                monotonicOrigin: file.header.monotonicOrigin, t: r.lastT, engine: r.engine)
            out = h.encode()
            out.append(0x0A)
            headerWritten = true
        }

        while let traced = try cursor.next() {
            let record = traced.record
            if let seq = record.appliedSeq, seq == from, !headerWritten { writeHeader(replayer) }
            if let seq = record.appliedSeq, seq > to { break }
            _ = try replayer.apply(traced)
            guard headerWritten else { continue }
            switch record {
            case .batch(let first, let last):
                // A batch that began before the slice is cut to the slice's part of it.
                let clipped = max(first, from)
                if clipped < last { TraceEncoding.appendBatch(first: clipped, last: last, to: &out) }
            case .event, .load:
                events += 1
                appendLine(of: traced, from: file, to: &out)
            default:
                appendLine(of: traced, from: file, to: &out)
            }
        }
        guard headerWritten else {
            throw TraceError("--from \(from): the trace's events end at seq \(replayer.engine.seq)", line: 1, offset: 0)
        }
        return Result(bytes: out, events: events)
    }

    private static func appendLine(of traced: TracedRecord, from file: TraceFile, to out: inout [UInt8]) {
        out.append(contentsOf: file.bytes[traced.offset..<(traced.offset + traced.length)])
        out.append(0x0A)
    }
}
