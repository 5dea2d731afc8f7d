import CreaseDaemonCore
#if canImport(Glibc)
import Glibc
#endif

/// A failed file operation, with errno's name and text.
public struct TraceIOError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int32
    public var operation: String
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }
    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}

/// The few file operations the writer thread makes, so tests can fill the disk at will.
public protocol TraceFileSystem: Sendable {
    /// Creates a new file (never replacing one) for writing.
    func create(_ path: String) -> Result<Int32, TraceIOError>
    /// Writes every byte, or fails.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> TraceIOError?
    func sync(_ fd: Int32) -> TraceIOError?
    /// Cuts the file back to `length` and moves the write position there.
    func truncate(_ fd: Int32, to length: Int) -> TraceIOError?
    func close(_ fd: Int32)
}

extension TraceFileSystem {
    /// Creates `path` holding `header`, open for appending. The file is written as
    /// `path.partial` and takes its name only once the header is in it, so a process killed
    /// at any moment leaves no trace file without its header (at worst a `.partial` file,
    /// which no tool reads).
    public func create(_ path: String, header: UnsafeRawBufferPointer) -> Result<Int32, TraceIOError> {
        let partial = path + ".partial"
        switch create(partial) {
        case .failure(let e):
            return .failure(e)
        case .success(let fd):
            var failure = write(fd, header)
            if failure == nil, link(partial, path) != 0 { failure = TraceIOError(code: errno, operation: "link \(path)") }
            unlink(partial)
            if let failure {
                close(fd)
                return .failure(failure)
            }
            return .success(fd)
        }
    }

    /// Whether the open file `fd` has no name left (it was unlinked, or its directory
    /// removed), so nothing written to it can be read again. A file moved elsewhere keeps
    /// its records and is not unlinked. Asks the kernel (`fstat`): every implementation's
    /// descriptors are real.
    public func isUnlinked(_ fd: Int32) -> Bool {
        var st = stat()
        return fstat(fd, &st) == 0 && st.st_nlink == 0
    }
}

public struct PosixTraceFileSystem: TraceFileSystem {
    public init() {}

    public func create(_ path: String) -> Result<Int32, TraceIOError> {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o640)
        return fd >= 0 ? .success(fd) : .failure(TraceIOError(code: errno, operation: "create \(path)"))
    }

    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> TraceIOError? {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return TraceIOError(code: errno, operation: "write")
            }
            offset += n
        }
        return nil
    }

    public func sync(_ fd: Int32) -> TraceIOError? {
        fdatasync(fd) == 0 ? nil : TraceIOError(code: errno, operation: "fdatasync")
    }

    public func truncate(_ fd: Int32, to length: Int) -> TraceIOError? {
        guard ftruncate(fd, off_t(length)) == 0 else { return TraceIOError(code: errno, operation: "ftruncate") }
        guard lseek(fd, off_t(length), SEEK_SET) >= 0 else { return TraceIOError(code: errno, operation: "lseek") }
        return nil
    }

    public func close(_ fd: Int32) { _ = Glibc.close(fd) }
}

/// The trace directory, made with its parents (mode 0750) if missing.
public enum TraceDirectoryMaker {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static func make(_ directory: String) throws(Failure) {
        var built = directory.hasPrefix("/") ? "" : "."
        for part in directory.split(separator: "/", omittingEmptySubsequences: true) {
            built += "/\(part)"
            var st = stat()
            if stat(built, &st) == 0 {
                guard st.st_mode & S_IFMT == S_IFDIR else {
                    throw Failure(description: "the trace directory \(directory) cannot be made: \(built) is not a directory")
                }
                continue
            }
            if mkdir(built, 0o750) != 0, errno != EEXIST {
                throw Failure(description: "the trace directory \(directory) cannot be made: mkdir \(built): \(String(cString: strerror(errno)))")
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw Failure(description: "the trace directory \(directory) is not writable: \(String(cString: strerror(errno)))")
        }
    }
}

/// A disk that takes `delayMs` for every write: the fault injection behind
/// `CREASE_TRACE_SLOW_DISK_MS`, which tests use to widen the window between an event's
/// reply and its record reaching the file.
public struct SlowTraceFileSystem: TraceFileSystem {
    let base: any TraceFileSystem
    let delayMs: UInt32

    public init(base: any TraceFileSystem = PosixTraceFileSystem(), delayMs: UInt32) {
        self.base = base
        self.delayMs = delayMs
    }

    public func create(_ path: String) -> Result<Int32, TraceIOError> { base.create(path) }
    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> TraceIOError? {
        usleep(delayMs * 1000)
        return base.write(fd, bytes)
    }
    public func sync(_ fd: Int32) -> TraceIOError? { base.sync(fd) }
    public func truncate(_ fd: Int32, to length: Int) -> TraceIOError? { base.truncate(fd, to: length) }
    public func close(_ fd: Int32) { base.close(fd) }
}
