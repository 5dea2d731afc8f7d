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

    /// The newest trace file creased wrote in `directory`, by modification time (then name).
    static func newest(in directory: String) -> String? {
        TraceRetention.traceFiles(in: directory)
            .max { ($0.modified, $0.modifiedNanoseconds, $0.name) < ($1.modified, $1.modifiedNanoseconds, $1.name) }
            .map { directory + "/" + $0.name }
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
