#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import Testing
import CreaseTestSupport

/// Test harness: a real `creased` process and plain POSIX socket clients.

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// The built `creased`, next to the test bundle (or `$CREASED_BIN`).
func creasedBinary() throws -> String {
    if let p = ProcessInfo.processInfo.environment["CREASED_BIN"] { return p }
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    // Swift Testing may run from inside the .xctest bundle directory.
    for _ in 0..<3 {
        let candidate = dir.appendingPathComponent("creased").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        dir = dir.deletingLastPathComponent()
    }
    throw HarnessError("creased was not built next to the tests (\(CommandLine.arguments[0])); run `swift build` first or set CREASED_BIN")
}

/// A fresh, short temporary directory (Unix socket paths are limited to 107 bytes).
func makeTempDir() throws -> String {
    var template = Array("/tmp/creased-test-XXXXXX".utf8CString)
    guard let p = mkdtemp(&template) else { throw HarnessError("mkdtemp failed") }
    return String(cString: p)
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// A blocking Unix stream socket connected to `path` (close-on-exec).
func connectUnixSocket(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
    var (addr, len) = sockaddrUn(path)
    let rc = withUnsafePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, len) }
    }
    guard rc == 0 else {
        let e = errno
        Glibc.close(fd)
        throw HarnessError("connect \(path): \(String(cString: strerror(e)))")
    }
    return fd
}

func sockaddrUn(_ path: String) -> (sockaddr_un, socklen_t) {
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    var bytes = Array(path.utf8)
    let abstract = bytes.first == UInt8(ascii: "@")
    if abstract { bytes[0] = 0 }
    withUnsafeMutableBytes(of: &addr.sun_path) { buf in
        for (i, b) in bytes.enumerated() { buf[i] = b }
    }
    let base = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
    return (addr, socklen_t(base + bytes.count + (abstract ? 0 : 1)))
}

/// A running creased. Its stderr goes to a file, read by `log()`.
final class DaemonProcess {
    let process = Process()
    /// Signalled once, when the process exits (its termination handler).
    private let exited = DispatchSemaphore(value: 0)
    let dir: String
    let socketPath: String
    let logPath: String

    /// Starts creased on `socketPath` (default: a fresh temp dir) and waits until it accepts.
    init(arguments: [String] = [], socketPath: String? = nil, environment: [String: String] = [:],
         waitUntilReady: Bool = true, journal: Bool = false, executable: String? = nil) throws {
        dir = try makeTempDir()
        self.socketPath = socketPath ?? "\(dir)/run/creased.sock"
        logPath = "\(dir)/creased.log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: try executable ?? creasedBinary())
        process.arguments = (executable == nil ? ["--socket", self.socketPath] : []) + arguments
        var env = ProcessInfo.processInfo.environment
        for k in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC", "JOURNAL_STREAM", "CREASE_SOCKET"] { env[k] = nil }
        // creased records a trace by default: into this test's directory, not the working one.
        env["STATE_DIRECTORY"] = "\(dir)/state"
        for (k, v) in environment { env[k] = v }
        if journal {
            var st = stat()
            _ = stat(logPath, &st)
            env["JOURNAL_STREAM"] = "\(st.st_dev):\(st.st_ino)"
        }
        process.environment = env
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.terminationHandler = { [exited] _ in exited.signal() }
        // creased says it listens by writing a byte to --ready-fd (its standard output, a pipe
        // here): no polling of the socket.
        let ready = waitUntilReady && executable == nil ? Pipe() : nil
        process.standardOutput = ready ?? FileHandle.nullDevice
        if ready != nil { process.arguments! += ["--ready-fd", "1"] }
        try process.run()
        guard waitUntilReady else { return }
        if let ready {
            try ready.fileHandleForWriting.close()
            try waitForReadyByte(ready.fileHandleForReading.fileDescriptor)
            try ready.fileHandleForReading.close()
        } else {
            try waitForSocket()
        }
    }

    /// Until creased writes its byte (it listens), or exits; other children that inherited the
    /// pipe's write end cannot hold this up past the process's own exit.
    private func waitForReadyByte(_ fd: Int32, timeout: Double = 20) throws {
        let deadline = monotonicSeconds() + timeout
        var byte: UInt8 = 0
        while monotonicSeconds() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 100) == 1 {
                if read(fd, &byte, 1) == 1 { return }
                break   // the pipe ended: creased exited (or closed it) without a byte
            }
            if !process.isRunning { break }
        }
        if exited.wait(timeout: .now() + 5) == .success {
            throw HarnessError("creased exited (\(process.terminationStatus)) before it listened: \(log())")
        }
        throw HarnessError("creased did not listen on \(socketPath) within \(timeout)s: \(log())")
    }

    /// For a creased started by another executable (a wrapper): waits until the socket accepts.
    func waitForSocket(timeout: Double = 10) throws {
        let accepted = (try? waitUntil("creased to accept", timeout: timeout) {
            if let c = try? Client(socketPath) { c.close(); return true }
            return !process.isRunning
        }) != nil
        guard accepted, process.isRunning else { throw HarnessError("creased did not accept on \(socketPath) within \(timeout)s: \(log())") }
    }

    func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    func signal(_ s: Int32) { kill(process.processIdentifier, s) }

    /// Waits for the process to exit; returns its status, or nil on timeout.
    func waitForExit(timeout: Double = 10) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
        exited.signal()   // a later call finds it exited too
        return process.terminationStatus
    }

    /// Stops it with SIGTERM (SIGKILL if it hangs).
    func stop() {
        if process.isRunning {
            signal(SIGTERM)
            if waitForExit(timeout: 5) == nil { signal(SIGKILL); _ = waitForExit(timeout: 5) }
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// A blocking POSIX Unix-socket client with poll-based timed reads.
final class Client {
    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var eof = false
    /// How the stream ended: "end of stream" (the daemon closed it) or the read's error
    /// (ECONNRESET: closed with our bytes unread), and whether `fd` was still this socket
    /// (a double close elsewhere in the process can close it, or give its number to another file).
    private(set) var endReason = ""
    /// The socket `fd` named when it connected.
    private let identity: Identity?

    init(_ path: String) throws {
        fd = try connectUnixSocket(path)
        identity = Identity(fd)
    }

    deinit { close() }

    private var closed = false
    func close() {
        if !closed { closed = true; Glibc.close(fd) }
    }

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 { if errno == EINTR { continue }; return }
            off += n
        }
    }

    /// Sends `line` plus a newline.
    func sendLine(_ line: String) { send(line + "\n") }

    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// The next line (without newline), or nil at EOF or after `timeout` seconds.
    func readLine(timeout: Double = 5) -> String? {
        let deadline = monotonicSeconds() + timeout
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            if eof { return nil }
            // Always look at the socket once, even with no time left.
            let left = max(0, deadline - monotonicSeconds())
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, Int32(min(left * 1000, 1000)))
            if r <= 0 {
                if monotonicSeconds() >= deadline { return nil }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                endReason = n == 0 ? "end of stream" : String(cString: strerror(errno))
                if !closed, Identity(fd) != identity { endReason += "; fd \(fd) is no longer this client's socket" }
                eof = true
                continue
            }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }

    /// The next line parsed as JSON; fails the test on timeout or bad JSON.
    func readJSON(timeout: Double = 5, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        guard let line = readLine(timeout: timeout) else {
            throw HarnessError("no line within \(timeout)s (eof: \(eof)\(eof ? ", \(endReason)" : ""))")
        }
        do {
            return try JSON.parse(Array(line.utf8))
        } catch {
            throw HarnessError("not JSON: \(line.prefix(300))")
        }
    }

    /// Sends one line and reads the next reply.
    func request(_ line: String, timeout: Double = 5) throws -> JSONValue {
        sendLine(line)
        return try readJSON(timeout: timeout)
    }

    /// Reads lines until EOF (true) or until `timeout` passes without EOF (false).
    func drainToEOF(timeout: Double = 5) -> (lines: [String], eof: Bool) {
        var lines: [String] = []
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            if let l = readLine(timeout: deadline - monotonicSeconds()) { lines.append(l) } else if eof { return (lines, true) }
        }
        return (lines, eof)
    }

    /// Every complete line available within `timeout` seconds of quiet.
    func readAvailable(quiet: Double = 0.05) -> [String] {
        var lines: [String] = []
        while let l = readLine(timeout: quiet) { lines.append(l) }
        return lines
    }
}

extension JSONValue {
    var int: Int? { if case .number(let n) = self { return Int(exactly: n) }; return nil }
    var str: String? { if case .string(let s) = self { return s }; return nil }
    var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    var double: Double? { if case .number(let n) = self { return n }; return nil }
}

func parseJSON(_ line: String) -> JSONValue? { try? JSON.parse(Array(line.utf8)) }

/// Runs a command to completion; returns status, stdout and stderr.
func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, out: String, err: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    if let environment { p.environment = environment }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}
