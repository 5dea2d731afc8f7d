import CreaseDaemonCore
#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3), written directly: a datagram to `$NOTIFY_SOCKET`. A name starting
/// with `@` is in the abstract namespace.
public enum NotifyMessage {
    public static func ready(status: String) -> String { "READY=1\nSTATUS=\(status)\nMAINPID=\(getpid())" }
    public static func status(_ s: String) -> String { "STATUS=\(s)" }
    public static func stopping(status: String) -> String { "STOPPING=1\nSTATUS=\(status)" }
    public static let watchdog = "WATCHDOG=1"

    /// The watchdog period to ping at (half of `WATCHDOG_USEC`), when the watchdog is
    /// enabled for this process (`WATCHDOG_PID` absent or ours).
    public static func watchdogIntervalMs(environment env: [String: String], pid: Int32) -> UInt64? {
        guard let s = env["WATCHDOG_USEC"], let usec = UInt64(s), usec > 0 else { return nil }
        if let p = env["WATCHDOG_PID"], Int32(p) != pid { return nil }
        return max(1, usec / 2000)
    }
}

/// Sends notifications when `NOTIFY_SOCKET` is set; silently does nothing otherwise.
public final class Notifier {
    private let fd: Int32
    private var address = sockaddr_un()
    private let addressLength: socklen_t
    public let enabled: Bool

    public init(socketName: String?) {
        guard let name = socketName, !name.isEmpty,
              let (addr, len) = Notifier.address(for: name) else {
            fd = -1; addressLength = 0; enabled = false
            return
        }
        address = addr
        addressLength = len
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        enabled = fd >= 0
    }

    deinit { if fd >= 0 { close(fd) } }

    /// A `sockaddr_un` for `name`: a path, or `@name` for the abstract namespace.
    static func address(for name: String) -> (sockaddr_un, socklen_t)? {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: addr.sun_path)
        let minimum = abstract ? 2 : 1
        guard bytes.count >= minimum, capacity > bytes.count else { return nil }
        withUnsafeMutableBytes(of: &addr.sun_path) { buf in
            for (i, b) in bytes.enumerated() { buf[i] = b }
        }
        let base = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        // A path includes its terminating NUL; an abstract name is exactly its bytes.
        return (addr, socklen_t(base + bytes.count + (abstract ? 0 : 1)))
    }

    /// Sends one message; returns false when it could not be sent.
    @discardableResult
    public func send(_ message: String) -> Bool {
        guard enabled else { return false }
        var bytes = Array(message.utf8)
        let n = withUnsafePointer(to: &address) { ap in
            ap.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, &bytes, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), sa, addressLength)
            }
        }
        return n == bytes.count
    }
}
