import CreaseDaemonCore
#if canImport(Glibc)
import Glibc
#endif

/// `--trace-keep-bytes` and `--trace-keep-days`: which trace files of a directory go.
/// The decision is pure; `TraceRetention.prune` performs it on the writer thread (at
/// start and whenever a new file begins), so the loop never waits for the disk.
public struct TraceRetention: Sendable, Equatable {
    public var keepBytes: UInt64
    public var keepDays: UInt64

    public init(keepBytes: UInt64, keepDays: UInt64) {
        self.keepBytes = keepBytes
        self.keepDays = keepDays
    }

    public var isActive: Bool { keepBytes > 0 || keepDays > 0 }

    public struct File: Sendable, Equatable {
        public var name: String
        public var bytes: UInt64
        /// Last modification, seconds since the epoch, and the nanoseconds within that second.
        public var modified: Int
        public var modifiedNanoseconds: Int
        public init(name: String, bytes: UInt64, modified: Int, modifiedNanoseconds: Int = 0) {
            self.name = name
            self.bytes = bytes
            self.modified = modified
            self.modifiedNanoseconds = modifiedNanoseconds
        }
    }

    /// The files to remove, oldest first: every file last written more than `keepDays`
    /// ago, then the oldest of the rest until all left total at most `keepBytes`. The file
    /// being written (`current`) is never among them, even when it alone is over the limit.
    public func filesToRemove(_ files: [File], current: String, now: Int) -> [File] {
        let oldestFirst = files.sorted { ($0.modified, $0.name) < ($1.modified, $1.name) }
        var total = files.reduce(UInt64(0)) { $0 + $1.bytes }
        let cutoff = now - Int(keepDays) * 86_400
        var remove: [File] = []
        for f in oldestFirst where f.name != current {
            let expired = keepDays > 0 && f.modified < cutoff
            let over = keepBytes > 0 && total > keepBytes
            guard expired || over else { continue }
            remove.append(f)
            total -= f.bytes
        }
        return remove
    }

    /// Whether `name` is a trace file creased wrote (`creased-….jsonl`): nothing else in the
    /// directory is ever removed.
    public static func isTraceFile(_ name: String) -> Bool {
        name.hasPrefix("creased-") && name.hasSuffix(".jsonl")
    }

    /// The trace files creased wrote in `directory` (regular files: a link is not followed),
    /// in no particular order; none when it cannot be listed.
    public static func traceFiles(in directory: String) -> [File] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var files: [File] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard isTraceFile(name) else { continue }
            var st = stat()
            guard lstat("\(directory)/\(name)", &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            files.append(File(name: name, bytes: UInt64(st.st_size), modified: Int(st.st_mtim.tv_sec),
                              modifiedNanoseconds: Int(st.st_mtim.tv_nsec)))
        }
        return files
    }

    /// Removes what `filesToRemove` picks among `directory`'s trace files; returns the
    /// files and bytes removed. Files that cannot be listed or removed are left alone.
    public func prune(directory: String, currentPath: String) -> (files: Int, bytes: UInt64) {
        guard isActive else { return (0, 0) }
        let files = Self.traceFiles(in: directory)
        let current = currentPath.split(separator: "/").last.map(String.init) ?? currentPath
        var removed = (files: 0, bytes: UInt64(0))
        for f in filesToRemove(files, current: current, now: Int(time(nil))) where unlink("\(directory)/\(f.name)") == 0 {
            removed.files += 1
            removed.bytes += f.bytes
        }
        return removed
    }
}
