#if canImport(Glibc)
import Glibc
#endif

/// Writes a file Crease was told to write (`-o`, `--junit`, `--svg`, `--metrics-textfile`)
/// without ever destroying what the path names:
///
/// - a path that does not exist, or a regular file, gets the bytes through a temporary file
///   beside it renamed over it, so a reader sees the old file or the new one, never a part;
/// - a character device, FIFO or other special file (`/dev/null`, `/dev/stdout`, a pipe) is
///   written in place: renaming onto it would replace the device with a regular file;
/// - a symbolic link is followed: its target is written by the rules above and the link stays;
///   a link to nothing, or one owned by another user than us or root (planted to redirect
///   what we write), is refused;
/// - a regular file replaced keeps its mode and owner;
/// - a file the caller names as one of its inputs is refused, so `-o` naming an input never
///   destroys what cannot be recorded again;
/// - a directory or a socket is refused.
public enum OutputFile {
    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// A file by device and inode: what `write` must not replace (the caller's inputs).
    public struct FileIdentity: Hashable, Sendable {
        public var device: UInt64
        public var inode: UInt64
        public init(_ st: stat) { device = UInt64(st.st_dev); inode = UInt64(st.st_ino) }
        public init?(path: String) {
            var st = stat()
            guard stat(path, &st) == 0 else { return nil }
            self.init(st)
        }
    }

    /// `mode` applies to a file this creates (whatever the umask); a replaced one keeps its
    /// own. `inputs`: files the caller read, which a regular file written here must not be.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, inputs: Set<FileIdentity> = []) throws(Failure) {
        var st = stat()
        if lstat(path, &st) != 0 {
            guard errno == ENOENT else { throw Failure(message: "cannot write \(path): \(errnoText())") }
            return try replace(path, with: bytes, mode: mode, keeping: nil)
        }
        var target = path
        if st.st_mode & S_IFMT == S_IFLNK {
            guard st.st_uid == geteuid() || st.st_uid == 0 else {
                throw Failure(message: "cannot write \(path): it is a symbolic link owned by uid \(st.st_uid), not by us (uid \(geteuid())) or root: refusing to follow it")
            }
            guard let resolved = realpath(path, nil) else {
                throw Failure(message: "cannot write \(path): it is a symbolic link to nothing (\(errnoText()))")
            }
            target = String(cString: resolved)
            free(resolved)
            guard stat(target, &st) == 0 else { throw Failure(message: "cannot write \(path): \(errnoText())") }
        }
        switch st.st_mode & S_IFMT {
        case S_IFREG:
            guard !inputs.contains(FileIdentity(st)) else {
                throw Failure(message: "cannot write \(path): it is an input of this command, and written over it could not be read again; name another output")
            }
            try replace(target, with: bytes, mode: st.st_mode & 0o7777, keeping: st)
        case S_IFDIR: throw Failure(message: "cannot write \(path): it is a directory")
        case S_IFSOCK: throw Failure(message: "cannot write \(path): it is a socket")
        default: try writeInPlace(target, shownAs: path, bytes)
        }
    }

    /// Through `PATH.crease-PID.tmp`, created exclusively (never a file someone left there);
    /// `existing`: the file it replaces, whose owner the new one keeps.
    static func replace(_ path: String, with bytes: [UInt8], mode: mode_t, keeping existing: stat?) throws(Failure) {
        let temporary = "\(path).crease-\(getpid()).tmp"
        unlink(temporary)  // our own leftover from a crash; O_EXCL below refuses anything else raced in
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw Failure(message: "cannot write \(path): cannot create \(temporary): \(errnoText())") }
        var failed: String?
        if let e = existing, e.st_uid != geteuid() || e.st_gid != getegid(), fchown(fd, e.st_uid, e.st_gid) != 0 {
            failed = "cannot keep its owner (uid \(e.st_uid), gid \(e.st_gid)): \(errnoText())"
        }
        if failed == nil, fchmod(fd, mode) != 0 { failed = "chmod \(temporary): \(errnoText())" }
        if failed == nil { failed = writeAll(fd, bytes).map { "write \(temporary): \($0)" } }
        close(fd)
        if failed == nil, rename(temporary, path) != 0 { failed = "rename \(temporary) to \(path): \(errnoText())" }
        if let failed {
            unlink(temporary)
            throw Failure(message: "cannot write \(path): \(failed)")
        }
    }

    static func writeInPlace(_ path: String, shownAs name: String, _ bytes: [UInt8]) throws(Failure) {
        let fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw Failure(message: "cannot write \(name): \(errnoText())") }
        defer { close(fd) }
        if let e = writeAll(fd, bytes) { throw Failure(message: "cannot write \(name): \(e)") }
    }

    /// Nil when every byte was written, else the error's text.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { return n < 0 ? errnoText() : "nothing written" }
            offset += n
        }
        return nil
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
