#if canImport(Glibc)
import Glibc
#endif

/// Connecting a blocking stream socket to a Unix socket path: the one place the
/// client tools (send, watch, replay into a daemon, bench) do it.
enum UnixSocket {
    struct Failure: Error, CustomStringConvertible {
        enum Stage { case pathTooLong, socket, connect }
        let stage: Stage
        let path: String
        /// strerror's text, for `socket` and `connect`.
        let reason: String

        var description: String {
            switch stage {
            case .pathTooLong: "socket path too long: \(path)"
            case .socket: "socket: \(reason)"
            case .connect: "cannot connect to \(path): \(reason)"
            }
        }
    }

    /// A connected socket; `timeoutSeconds` bounds every send and receive (and the connect) when given.
    static func connect(_ path: String, timeoutSeconds: Int? = nil) throws(Failure) -> Int32 {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            throw Failure(stage: .pathTooLong, path: path, reason: "")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(stage: .socket, path: path, reason: String(cString: strerror(errno))) }
        if let seconds = timeoutSeconds {
            var tv = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        }
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(stage: .connect, path: path, reason: reason)
        }
        return fd
    }
}
