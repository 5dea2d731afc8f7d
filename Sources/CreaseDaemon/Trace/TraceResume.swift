#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// `creased --resume`: the state a restarted daemon continues from. The newest trace file
/// creased wrote in the trace directory (`creased-….jsonl`) is read, its cut tail (a crash, kill -9) truncated as `crease
/// trace check --fix` does, and replayed to its last record: profile, app, state and seq.
/// A file it cannot replay is left as it is, and the daemon starts fresh and says why.
public enum TraceResume {
    public struct Point {
        public var engine: Engine
        public var from: TraceHeader.ResumedFrom
        /// Bytes of an incomplete last record cut off the file.
        public var truncatedBytes: Int
    }

    public enum Outcome {
        case resumed(Point)
        /// No trace to resume from (a first start): fresh, and nothing wrong.
        case nothing
        case failed(String)
    }

    /// The trace file that reached the highest seq, read from the files' contents (the
    /// seq of each one's last complete record): a modification time is no witness (a copied
    /// or touched old trace looked newest, and a restart resumed from it and reused seqs).
    /// Ties (a file whose last record shares the seq, as a rotation's next part starts) go to
    /// the later part, then the later modification, then the name.
    static func newest(in directory: String) -> String? {
        var best: (seq: Int, part: Int, modified: Int, nanoseconds: Int, name: String)?
        let files = TraceRetention.traceFiles(in: directory)
        for f in files {
            guard let reached = lastSeq(of: directory + "/" + f.name) else { continue }
            let key = (reached.seq, reached.part, f.modified, f.modifiedNanoseconds, f.name)
            if best.map({ key > $0 }) ?? true { best = key }
        }
        // None readable: the newest is named, so the resume says why it cannot use it.
        let fallback = files.max { ($0.modified, $0.modifiedNanoseconds, $0.name) < ($1.modified, $1.modifiedNanoseconds, $1.name) }
        return (best?.name ?? fallback?.name).map { directory + "/" + $0 }
    }

    /// The seq the file's last complete record holds (its header's when it has none), and
    /// its part; nil for a file that is not a readable trace. Reads the header line and a
    /// window at the end only (see below).
    static func lastSeq(of path: String) -> (seq: Int, part: Int)? {
        guard let (fd, size) = try? InputFile.openRegular(path, what: "trace", limit: InputFile.traceLimit) else { return nil }
        defer { close(fd) }
        func read(at offset: Int, count: Int) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n > 0 ? Array(buffer[..<n]) : []
        }
        // The header line: usually a few KiB (a large manifest makes it longer), so the
        // first 16 KiB, and more only when its newline is not in them.
        var head = read(at: 0, count: min(size, 16 << 10))
        if head.firstIndex(of: 0x0A) == nil, head.count < size { head = read(at: 0, count: min(size, 16 << 20)) }
        guard let headerEnd = head.firstIndex(of: 0x0A), let header = try? TraceHeader.decode(head[..<headerEnd]) else { return nil }
        var seq = header.initialSeq
        // The last complete record, in a window from the end that grows until it holds one
        // whole (a load of a large manifest is a long line).
        for window in [16 << 10, 1 << 20, 64 << 20] {
            let tailStart = max(headerEnd + 1, size - window)
            if let found = lastRecordSeq(in: read(at: tailStart, count: size - tailStart), whole: tailStart == headerEnd + 1) {
                seq = max(seq, found)
                break
            }
            if tailStart == headerEnd + 1 { break }
        }
        return (seq, header.part)
    }

    /// The seq of the last complete line of `tail` that decodes as a record; `whole`: `tail`
    /// begins at a line's start (else its first line may be cut and is not read).
    static func lastRecordSeq(in tail: [UInt8], whole: Bool) -> Int? {
        guard var end = tail.lastIndex(of: 0x0A) else { return nil }
        while true {
            let previous = tail[..<end].lastIndex(of: 0x0A)
            guard previous != nil || whole else { return nil }
            let start = previous.map { $0 + 1 } ?? 0
            let line = tail[start..<end]
            if let seq = line.withUnsafeBufferPointer({ TraceRecord.seq(ofLine: $0) }) { return seq }
            guard let p = previous else { return nil }
            end = p
        }
    }

    public static func resume(directory: String) -> Outcome {
        guard let path = newest(in: directory) else { return .nothing }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path, what: "trace", limit: InputFile.traceLimit) } catch {
            return .failed("\(name): \(error.message)")
        }
        let file: TraceFile
        do { file = try TraceFile(bytes: bytes) } catch {
            return .failed("\(name): \(error)")
        }
        var replayer = TraceReplayer(header: file.header, verify: false)
        var cursor = file.cursor()
        do {
            while let traced = try cursor.next() {
                if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                    return .failed("\(name): seq \(d.seq) cannot be applied: \(error)")
                }
            }
        } catch {
            return .failed("\(name): damaged: \(error)")
        }
        var truncated = 0
        if let cut = file.cut {
            guard truncate(path, off_t(cut.offset)) == 0 else {
                return .failed("\(name): its cut tail cannot be truncated: \(String(cString: strerror(errno)))")
            }
            truncated = cut.length
        }
        let old = replayer.engine
        // A proposal pending on the old run's clock means nothing on the new one.
        var state = old.state
        state.pendingOrientation = nil
        let engine = Engine(profile: old.profile, app: old.app, state: state, seq: old.seq)
        return .resumed(Point(engine: engine, from: .init(file: name, seq: old.seq, digest: engine.digest), truncatedBytes: truncated))
    }
}
