#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem

/// `crease trace why` on a large trace: its checkpoints live beside it in `TRACE.why`
/// (`WhyCheckpoint`), made by the first query (one replay of the whole trace) and read by the
/// next, which then reads the trace's header and only the records from the nearest
/// checkpoint to the next one. A checkpoints file that does not belong to the trace (it grew,
/// or was replaced) is made again; one that cannot be written is only warned about.
enum WhyCheckpointFile {
    /// Below this a trace is read whole and replayed from its start: checkpoints would save
    /// less than they cost.
    static let minimumTraceBytes = 4 << 20
    static let limit = 1 << 30

    static func path(of trace: String) -> String { trace + ".why" }

    static func explain(_ trace: String, seq: Int, subject: WhySubject) throws -> (why: TraceWhy, origin: UInt64) {
        guard trace != "-" else { return try whole(trace, seq: seq, subject: subject) }
        let (fd, size): (Int32, Int)
        do { (fd, size) = try InputFile.openRegular(trace, what: "trace", limit: InputFile.traceLimit) } catch { throw UsageError(error.message) }
        defer { close(fd) }
        guard size >= minimumTraceBytes else { return try whole(trace, seq: seq, subject: subject) }
        let header = try headerLine(fd, trace: trace, size: size)
        let sidecar = path(of: trace)
        if let bytes = try? InputFile.read(sidecar, what: "checkpoints file", limit: limit),
           WhyCheckpoint.belongs(bytes, traceBytes: size, header: header) {
            let headerFile = try TraceFile(bytes: header + [0x0A])
            if let (point, readTo) = WhyCheckpoint.nearest(bytes, before: seq, app: headerFile.header.app) {
                // Before the first checkpoint, the records from the trace's start.
                let from = point?.offset ?? header.count + 1, to = readTo ?? size
                // A checkpoint of a build whose rules differ is made again below.
                if from <= to, to <= size, point?.resumes(headerFile.header) ?? true {
                    let file = try TraceFile(bytes: header + [0x0A] + (try range(fd, trace: trace, from: from, to: to)))
                    return (try TraceWhy.explain(file, seq: seq, subject: subject, from: point), file.header.initialT)
                }
            }
        }
        // None yet: one replay of the whole trace makes them, for the next query.
        let file = try TraceIO.loadForReading(trace).file
        TraceIO.warnIfCut(file, name: trace)
        let points = try WhyCheckpoint.build(file)
        do {
            try OutputFile.write(WhyCheckpoint.encode(points, traceBytes: size, header: header, app: file.header.app), to: sidecar)
            Console.err("crease trace why: kept \(points.count) checkpoints (one every \(Format.grouped(WhyCheckpoint.every)) events) in \(sidecar); later questions start from the nearest")
        } catch {
            Console.err("warning: crease trace why: checkpoints not kept (\(error)): every question replays from the trace's start")
        }
        return (try TraceWhy.explain(file, seq: seq, subject: subject), file.header.initialT)
    }

    static func whole(_ trace: String, seq: Int, subject: WhySubject) throws -> (why: TraceWhy, origin: UInt64) {
        let file = try TraceIO.loadForReading(trace).file
        TraceIO.warnIfCut(file, name: trace)
        return (try TraceWhy.explain(file, seq: seq, subject: subject), file.header.initialT)
    }

    /// The header line, without its newline (a manifest may make it megabytes long).
    static func headerLine(_ fd: Int32, trace: String, size: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while out.count < min(size, InputFile.manifestLimit * 2) {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(out.count)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            if let nl = chunk[0..<n].firstIndex(of: 0x0A) { return out + chunk[0..<nl] }
            out += chunk[0..<n]
        }
        throw UsageError("\(trace): the header line does not end within \(Format.grouped(out.count)) bytes")
    }

    static func range(_ fd: Int32, trace: String, from: Int, to: Int) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: to - from)
        var done = 0
        while done < out.count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(from + done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw UsageError("cannot read trace \(trace) at byte \(from + done): \(n < 0 ? String(cString: strerror(errno)) : "it ended")") }
            done += n
        }
        return out
    }
}
