#if canImport(Glibc)
import Glibc
#endif

/// Reads a file Crease was pointed at (a trace, a manifest, a profile, an events or
/// observations file) as a regular file with a size bound. A FIFO, a device (`/dev/zero`),
/// a directory or a socket is refused with a clear error instead of blocking for ever or
/// reading without end; a symbolic link is followed and its target checked the same way.
/// Standard input (`-`, where a command takes it) is read up to the same bound.
public enum InputFile {
    /// Bounds by kind of input. Traces are read whole: a day of 1 kHz hinge ticks is a few
    /// hundred megabytes, so 4 GiB leaves room while keeping a mistake from eating the machine.
    public static let traceLimit = 4 << 30
    /// Manifests are a few kilobytes; a 10 MB one lays out in under half a second.
    public static let manifestLimit = 16 << 20
    public static let profileLimit = 1 << 20
    /// Events, observations and other line files.
    public static let linesLimit = 1 << 30

    public struct Failure: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The whole file at `path`; `what` names it in errors ("trace", "app manifest").
    public static func read(_ path: String, what: String, limit: Int) throws(Failure) -> [UInt8] {
        if path == "-" { return try readStream(fd: 0, name: "standard input", what: what, limit: limit) }
        let (fd, size) = try openRegular(path, what: what, limit: limit)
        defer { close(fd) }
        return try readStream(fd: fd, name: path, what: what, limit: limit, expected: size)
    }

    /// `path` opened for reading, checked to be a regular file of at most `limit` bytes: the
    /// descriptor (the caller closes it) and the size. For a reader that streams the file.
    public static func openRegular(_ path: String, what: String, limit: Int) throws(Failure) -> (fd: Int32, size: Int) {
        // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { throw Failure(message: "cannot read \(what) \(path): \(errnoText(errno))") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw Failure(message: "cannot read \(what) \(path): \(errnoText(e))")
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Failure(message: "\(path) is \(kind(st.st_mode)), not a regular file: \(what)s are read only from regular files")
        }
        guard Int(st.st_size) <= limit else {
            close(fd)
            throw tooLarge(path, what: what, limit: limit)
        }
        return (fd, Int(st.st_size))
    }

    /// Reads to the end, failing past `limit` (a file still being written may grow past its
    /// size). The expected size is read straight into the array: traces run to hundreds of megabytes.
    static func readStream(fd: Int32, name: String, what: String, limit: Int, expected: Int = 1 << 16) throws(Failure) -> [UInt8] {
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: min(limit, expected) + 1) { buffer, count in
            while count < buffer.count {
                let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { failure = n < 0 ? errno : 0; break }
                count += n
            }
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while failure == 0, bytes.count > min(limit, expected) {
            guard bytes.count <= limit else { throw tooLarge(name, what: what, limit: limit) }
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { failure = n < 0 ? errno : 0; break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        guard failure == 0 else { throw Failure(message: "cannot read \(what) \(name): \(errnoText(failure))") }
        guard bytes.count <= limit else { throw tooLarge(name, what: what, limit: limit) }
        return bytes
    }

    static func tooLarge(_ name: String, what: String, limit: Int) -> Failure {
        Failure(message: "\(name) is over the limit of \(limit) bytes for \(what)s")
    }

    static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    static func errnoText(_ e: Int32) -> String { String(cString: strerror(e)) }
}
