#if canImport(Glibc)
import Glibc
#endif
import CreaseCore

/// `creased --resume`: the state a restarted daemon continues from. The newest trace file
/// of the trace directory is read, its cut tail (a crash, kill -9) truncated as `crease
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

    /// The newest `*.jsonl` regular file in `directory`, by modification time (then name).
    static func newest(in directory: String) -> String? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        var best: (sec: Int, nsec: Int, name: String)?
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { p in
                p.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            guard name.hasSuffix(".jsonl"), !name.hasPrefix(".") else { continue }
            var st = stat()
            guard lstat(directory + "/" + name, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { continue }
            let key = (Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec), name)
            if let b = best, (b.sec, b.nsec, b.name) >= key { continue }
            best = key
        }
        return best.map { directory + "/" + $0.name }
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
