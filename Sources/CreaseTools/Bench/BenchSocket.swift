#if canImport(Glibc)
import Glibc
#endif
import CreaseCore

/// A blocking Unix stream socket client, with send and receive time-outs so no wait is
/// unbounded. Lines are read into one reusable buffer: reading a reply allocates nothing.
final class BenchSocket {
    let fd: Int32
    private var buffer: UnsafeMutableRawPointer
    private var capacity = 1 << 16
    private var start = 0
    private var end = 0

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(path: String, timeoutSeconds: Int = 30) throws {
        let fd: Int32
        do { fd = try UnixSocket.connect(path, timeoutSeconds: Double(timeoutSeconds)) } catch { throw Failure(description: error.description) }
        self.fd = fd
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        close(fd)
        buffer.deallocate()
    }

    func send(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: errno == EAGAIN ? "send timed out" : "send: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try send($0) }
    }

    /// The next line (without its newline), valid only during `body`.
    func readLine<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        while true {
            if end > start, let nl = memchr(buffer + start, 0x0A, end - start) {
                let lineEnd = buffer.distance(to: nl)
                let line = UnsafeRawBufferPointer(start: buffer + start, count: lineEnd - start)
                start = lineEnd + 1
                return try body(line)
            }
            if start > 0 {
                // Keep the partial line at the front.
                memmove(buffer, buffer + start, end - start)
                end -= start
                start = 0
            }
            if end == capacity {
                let bigger = UnsafeMutableRawPointer.allocate(byteCount: capacity * 2, alignment: 16)
                bigger.copyMemory(from: buffer, byteCount: end)
                buffer.deallocate()
                buffer = bigger
                capacity *= 2
            }
            let n = recv(fd, buffer + end, capacity - end, 0)
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: errno == EAGAIN ? "no reply within the time-out" : "recv: \(String(cString: strerror(errno)))")
            }
            if n == 0 { throw Failure(description: "the peer closed the connection") }
            end += n
        }
    }

    /// Sends a command with `id` and returns its reply, skipping other lines; error
    /// replies to earlier lines are counted in `errors`.
    func request(_ command: [UInt8], id: String, errors: inout Int) throws -> JSONValue {
        var line = command
        line.append(0x0A)
        try send(line)
        while true {
            let value = try readLine { try? JSON.parse($0) }
            guard let value else { continue }
            if value["id"] == .string(id) { return value }
            if value["ok"] == .bool(false) { errors += 1 }
        }
    }
}

/// Small readers over reply bytes, so timing loops never build a JSONValue.
enum ReplyBytes {
    /// Where `key` first occurs in `line`.
    static func find(_ key: StaticString, in line: UnsafeRawBufferPointer) -> Int? {
        let n = key.utf8CodeUnitCount
        guard n > 0, line.count >= n else { return nil }
        for i in 0...(line.count - n) where memcmp(line.baseAddress! + i, key.utf8Start, n) == 0 { return i }
        return nil
    }

    /// The number right after `key` (e.g. `"seq":`) in a line, if there is one.
    static func number(after key: StaticString, in line: UnsafeRawBufferPointer) -> Double? {
        guard let at = find(key, in: line) else { return nil }
        var j = at + key.utf8CodeUnitCount
        var whole = 0.0, scale = 0.0, negative = false, digits = 0
        if j < line.count, line[j] == UInt8(ascii: "-") { negative = true; j += 1 }
        while j < line.count {
            let c = line[j]
            if c >= 0x30, c <= 0x39 {
                whole = whole * 10 + Double(c - 0x30)
                digits += 1
                if scale > 0 { scale *= 10 }
            } else if c == UInt8(ascii: "."), scale == 0 {
                scale = 1
            } else {
                break
            }
            j += 1
        }
        guard digits > 0 else { return nil }
        let v = scale > 1 ? whole / scale : whole
        return negative ? -v : v
    }

    static func hasPrefix(_ line: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        line.count >= prefix.utf8CodeUnitCount && memcmp(line.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }
}
