#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation

/// A client connection to creased. Every wait has a deadline: the connect, each write
/// (a daemon that stops reading), and each reply (`readLine(timeout:)` is a deadline for the
/// whole line, so a peer that trickles one byte at a time cannot stretch it), and a line is
/// at most `lineLimit` bytes.
public final class DaemonConnection {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The default for every client command's `--timeout`.
    public static let defaultTimeout = 10.0
    /// A reply's bound: a 10,000-item app's layout is 1.5 MB.
    public static let lineLimit = 256 << 20

    public let path: String
    public let fd: Int32
    /// How long a connect, a write or an awaited reply may take.
    public let timeout: Double
    private var buffer: [UInt8] = []
    public private(set) var closed = false

    /// The socket the daemon uses by default (`--socket`, `$CREASE_SOCKET`, `$XDG_RUNTIME_DIR`, /run).
    public static func defaultPath(explicit: String?) -> String {
        SocketPath.resolve(explicit: explicit, environment: ProcessInfo.processInfo.environment)
    }

    public init(path: String, timeout: Double = DaemonConnection.defaultTimeout) throws(Failure) {
        self.path = path
        self.timeout = timeout
        signal(SIGPIPE, SIG_IGN)
        do {
            fd = try UnixSocket.connect(path, timeoutSeconds: timeout)
        } catch {
            throw Failure(description: error.stage == .connect ? "cannot reach creased at \(path): \(error.reason)" : error.description)
        }
    }

    deinit { if !closed { Glibc.close(fd) } }

    /// Writes all of `bytes`; a daemon that takes none of them for `timeout` is an error.
    public func write(_ bytes: [UInt8]) throws(Failure) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN { throw Failure(description: "creased read nothing from us for \(Clock.text(timeout))") }
                throw Failure(description: "write to creased: \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }

    public func writeLine(_ line: String) throws(Failure) { try write(Array((line + "\n").utf8)) }

    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// A complete line already received, if any.
    public func bufferedLine() -> [UInt8]? {
        guard let nl = buffer.firstIndex(of: 0x0A) else { return nil }
        let line = Array(buffer[..<nl])
        buffer.removeSubrange(...nl)
        return line
    }

    /// Reads what is available into the buffer; false at end of stream.
    public func fill() throws(Failure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if n > 0 {
                guard buffer.count + n <= DaemonConnection.lineLimit || chunk[0..<n].contains(0x0A) else {
                    throw Failure(description: "creased sent a line longer than \(DaemonConnection.lineLimit) bytes")
                }
                buffer.append(contentsOf: chunk[0..<n])
                return true
            }
            if n == 0 { return false }
            if errno == EINTR { continue }
            if errno == EAGAIN { return true }
            if errno == ECONNRESET { return false }
            throw Failure(description: "read from creased: \(String(cString: strerror(errno)))")
        }
    }

    /// The next line, whole within `timeout` seconds (forever when nil); nil at end of stream.
    public func readLine(timeout: Double? = nil) throws(Failure) -> [UInt8]? {
        try readLine(until: timeout.map { Clock.seconds() + $0 }, waited: timeout)
    }

    /// The next line, whole by `deadline` (monotonic seconds, `Clock`); nil at end of stream.
    /// `waited` is what the error message says was waited.
    public func readLine(until deadline: Double?, waited: Double? = nil) throws(Failure) -> [UInt8]? {
        while true {
            if let line = bufferedLine() { return line }
            var ms: Int32 = -1
            if let deadline {
                let left = deadline - Clock.seconds()
                if left <= 0 { throw Failure(description: "creased did not answer within \(Clock.text(waited ?? timeout))") }
                ms = Int32(min(left * 1000, 3_600_000).rounded(.up))
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, ms)
            if r == 0 { continue }
            if r < 0 { if errno == EINTR { continue }; throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
            guard try fill() else { return nil }
        }
    }

    /// Sends one command and returns its reply (pushes that arrive first are skipped).
    public func command(_ json: String) throws(Failure) -> JSONValue {
        let deadline = Clock.seconds() + timeout
        try writeLine(json)
        while true {
            guard let line = try readLine(until: deadline) else { throw Failure(description: "creased closed the connection") }
            guard let v = try? JSON.parse(line) else { throw Failure(description: "creased sent a line that is not JSON") }
            if v["push"] == nil { return v }
        }
    }

    public func close() {
        if !closed { closed = true; Glibc.close(fd) }
    }
}
