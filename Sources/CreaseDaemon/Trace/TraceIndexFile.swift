#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// `index.ndjson` in the trace directory: one line per trace file begun (docs/traces.md),
/// appended with `O_APPEND` so daemons sharing a directory never interleave within a line.
/// Written at start (before the loop runs) and by the writer thread; a failure is logged
/// and never stops the trace. Retention prunes it with the files it removes, so it does not
/// grow for ever; appends and the rewrite hold `.index.lock` (flock), which daemons sharing
/// the directory share too.
final class TraceIndexFile: @unchecked Sendable {
    let path: String
    let directory: String
    let log: Logger
    private var failed = false

    init(directory: String, log: Logger) {
        self.directory = directory
        path = "\(directory)/\(TraceIndexEntry.fileName)"
        self.log = log
    }

    /// Runs `body` holding the directory's index lock (or without it, if the lock file
    /// cannot be made: the index is a convenience, never a reason to stop).
    private func locked<T>(_ body: () -> T) -> T {
        let fd = Glibc.open("\(directory)/.index.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { return body() }
        defer { Glibc.close(fd) }
        while flock(fd, LOCK_EX) != 0, errno == EINTR {}
        return body()
    }

    /// Drops the lines of files that are gone (retention removed them).
    func prune() {
        locked {
            guard let bytes = try? InputFile.read(path, what: "trace index", limit: 256 << 20) else { return }
            var kept: [UInt8] = []
            var dropped = 0
            for line in bytes.split(separator: 0x0A) {
                if case .string(let file)? = (try? JSON.parse(line))?["file"], access("\(directory)/\(file)", F_OK) != 0 {
                    dropped += 1
                    continue
                }
                kept += line
                kept.append(0x0A)
            }
            guard dropped > 0 else { return }
            do { try OutputFile.write(kept, to: path, mode: 0o640) } catch {
                log.warning("trace: cannot prune \(path): \(error)")
            }
        }
    }

    func append(_ line: [UInt8]) {
        locked { appendLocked(line) }
    }

    private func appendLocked(_ line: [UInt8]) {
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640)
        var error: Int32 = 0
        if fd < 0 {
            error = errno
        } else {
            let n = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, $0.count) }
            if n != line.count { error = n < 0 ? errno : ENOSPC }
            Glibc.close(fd)
        }
        if error != 0, !failed {
            failed = true
            log.warning("trace: cannot append to \(path): \(String(cString: strerror(error))); the trace files are written all the same")
        } else if error == 0 {
            failed = false
        }
    }
}
