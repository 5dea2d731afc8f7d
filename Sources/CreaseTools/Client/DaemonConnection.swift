#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseDaemon
import Foundation

/// A client connection to creased: blocking writes, line reads with a timeout.
public final class DaemonConnection {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let path: String
    public let fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var closed = false

    /// The socket the daemon uses by default (`--socket`, `$CREASE_SOCKET`, `$XDG_RUNTIME_DIR`, /run).
    public static func defaultPath(explicit: String?) -> String {
        SocketPath.resolve(explicit: explicit, environment: ProcessInfo.processInfo.environment)
    }

    public init(path: String) throws(Failure) {
        self.path = path
        signal(SIGPIPE, SIG_IGN)
        do {
            fd = try UnixSocket.connect(path)
        } catch {
            throw Failure(description: error.stage == .connect ? "cannot reach creased at \(path): \(error.reason)" : error.description)
        }
    }

    deinit { if !closed { Glibc.close(fd) } }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) throws(Failure) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
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
            let n = read(fd, &chunk, chunk.count)
            if n > 0 { buffer.append(contentsOf: chunk[0..<n]); return true }
            if n == 0 { return false }
            if errno == EINTR { continue }
            if errno == ECONNRESET { return false }
            throw Failure(description: "read from creased: \(String(cString: strerror(errno)))")
        }
    }

    /// The next line, waiting up to `timeout` seconds (forever when nil); nil at end of stream.
    public func readLine(timeout: Double? = nil) throws(Failure) -> [UInt8]? {
        while true {
            if let line = bufferedLine() { return line }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, timeout.map { Int32($0 * 1000) } ?? -1)
            if r == 0 { throw Failure(description: "creased did not answer within \(timeout ?? 0) s") }
            if r < 0 { if errno == EINTR { continue }; throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
            guard try fill() else { return nil }
        }
    }

    /// Sends one command and returns its reply (pushes that arrive first are skipped).
    public func command(_ json: String, timeout: Double = 10) throws(Failure) -> JSONValue {
        try writeLine(json)
        while true {
            guard let line = try readLine(timeout: timeout) else { throw Failure(description: "creased closed the connection") }
            guard let v = try? JSON.parse(line) else { throw Failure(description: "creased sent a line that is not JSON") }
            if v["push"] == nil { return v }
        }
    }

    public func close() {
        if !closed { closed = true; Glibc.close(fd) }
    }
}
