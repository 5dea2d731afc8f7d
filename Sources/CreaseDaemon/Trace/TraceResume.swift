#if canImport(Glibc)
import Glibc
#endif
import CreaseCore

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
    /// its part; nil for a file that is not a readable trace. Reads the header line and the
    /// file's last 64 KiB only.
    static func lastSeq(of path: String) -> (seq: Int, part: Int)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        func read(at offset: Int, count: Int) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
            return n > 0 ? Array(buffer[..<n]) : []
        }
        let head = read(at: 0, count: min(Int(st.st_size), 16 << 20))
        guard let headerEnd = head.firstIndex(of: 0x0A), let header = try? TraceHeader.decode(head[..<headerEnd]) else { return nil }
        var seq = header.initialSeq
        let size = Int(st.st_size)
        let tailStart = max(headerEnd + 1, size - (64 << 10))
        let tail = read(at: tailStart, count: size - tailStart)
        // Complete lines only (a cut tail is no record), last first; the first one that decodes.
        if let lastNewline = tail.lastIndex(of: 0x0A) {
            var end = lastNewline
            while end > 0 {
                let start = (tail[..<end].lastIndex(of: 0x0A)).map { $0 + 1 } ?? 0
                if start == 0 && tailStart > headerEnd + 1 { break }  // a line cut by the window
                let line = tail[start..<end]
                if let record = try? line.withUnsafeBufferPointer({ (b) throws(TraceError) in try TraceRecord.decode(b) }) {
                    seq = max(seq, record.seq)
                    break
                }
                end = start > 0 ? start - 1 : 0
            }
        }
        return (seq, header.part)
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
