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

    /// A connected blocking socket. `timeoutSeconds` bounds the connect (a daemon whose
    /// backlog is full refuses with EAGAIN: we try again until the time is up) and then every
    /// send and receive (SO_SNDTIMEO, SO_RCVTIMEO), so a daemon that accepts and never reads
    /// or answers cannot hold a client for ever.
    static func connect(_ path: String, timeoutSeconds: Double) throws(Failure) -> Int32 {
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: addr.sun_path) else {
            throw Failure(stage: .pathTooLong, path: path, reason: "")
        }
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure(stage: .socket, path: path, reason: String(cString: strerror(errno))) }
        let deadline = Clock.seconds() + timeoutSeconds
        var pause: useconds_t = 1_000
        while true {
            let rc = withUnsafePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if rc == 0 { break }
            let e = errno
            if e == EINTR { continue }
            // A Unix socket's full backlog answers EAGAIN at once; nothing wakes us when it drains.
            if e == EAGAIN, Clock.seconds() < deadline {
                usleep(min(pause, useconds_t(max(1_000, (deadline - Clock.seconds()) * 1e6))))
                pause = min(pause * 2, 100_000)
                continue
            }
            close(fd)
            let reason = e == EAGAIN ? "it accepts no connection (its backlog stayed full for \(Clock.text(timeoutSeconds)))"
                                     : String(cString: strerror(e))
            throw Failure(stage: .connect, path: path, reason: reason)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        var tv = timeval(tv_sec: Int(timeoutSeconds), tv_usec: Int((timeoutSeconds - timeoutSeconds.rounded(.down)) * 1e6))
        if tv.tv_sec == 0 && tv.tv_usec == 0 { tv.tv_usec = 1 }
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }
}

extension Clock {
    /// The monotonic clock in seconds, for the clients' deadlines.
    static func seconds() -> Double { Double(now()) / 1e9 }

    /// "2 s", "0.5 s".
    static func text(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
