import CreaseDaemonCore
#if canImport(Glibc)
import Glibc
#endif

public struct StartupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// Readying the socket path before bind, and socket activation.
enum SocketSetup {
    /// What is at the socket path now.
    enum Existing: Equatable {
        case nothing
        case notASocket
        /// A socket nobody accepts on: left by a crashed run.
        case stale
        /// A socket something answers on.
        case live
        /// A socket something listens on but accepts no one now (its backlog is full).
        case busy
        case unreachable(String)
    }

    static func errnoText(_ e: Int32 = errno) -> String { String(cString: strerror(e)) }

    /// The listen backlog: the kernel's maximum (`net.core.somaxconn`, which caps any
    /// larger value anyway), as systemd's socket units ask for, so a crowd of clients
    /// connecting at once waits in the queue instead of being refused with EAGAIN.
    /// `SOMAXCONN` when the sysctl cannot be read.
    static func listenBacklog(sysctlPath: String = "/proc/sys/net/core/somaxconn") -> Int32 {
        let fd = open(sysctlPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return SOMAXCONN }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 32)
        let n = read(fd, &buf, buf.count)
        guard n > 0 else { return SOMAXCONN }
        var value: Int64 = 0
        for b in buf[..<n] {
            guard b >= 0x30 && b <= 0x39 else { break }   // the number ends at its newline
            value = min(value * 10 + Int64(b - 0x30), Int64(Int32.max))
        }
        return value > 0 ? Int32(value) : SOMAXCONN
    }

    /// Creates the socket's directory (and missing parents) when absent; the
    /// directories it creates get `mode` (0750 for the default socket mode 0660) and, when
    /// given, the socket's `group`, so whoever may open the socket can reach it. An
    /// existing directory is left as it is.
    static func makeDirectory(for path: String, mode: mode_t, group: gid_t?) throws(StartupError) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let dir = String(path[..<slash])
        var st = stat()
        if stat(dir, &st) == 0 {
            guard st.st_mode & S_IFMT == S_IFDIR else { throw StartupError("\(dir) is not a directory") }
            return
        }
        try makeDirectory(for: dir, mode: mode, group: group)
        if mkdir(dir, mode) != 0, errno != EEXIST {
            throw StartupError("cannot create \(dir): \(errnoText())")
        }
        chmod(dir, mode)  // whatever the umask
        if let group, chown(dir, uid_t.max, group) != 0 {
            throw StartupError("cannot give \(dir) to group \(group): \(errnoText())")
        }
    }

    static func inspect(_ path: String) -> Existing {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            return errno == ENOENT ? .nothing : .unreachable(errnoText())
        }
        guard st.st_mode & S_IFMT == S_IFSOCK else { return .notASocket }
        guard let (addr, len) = Notifier.address(for: path) else { return .unreachable("path too long") }
        // Non-blocking: a blocking connect to a listener whose backlog is full waits for ever.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return .unreachable(errnoText()) }
        defer { close(fd) }
        var a = addr
        let rc = withUnsafePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, len) }
        }
        if rc == 0 { return .live }
        switch errno {
        case ECONNREFUSED, ENOENT: return .stale
        case EAGAIN: return .busy
        default: return .unreachable(errnoText())
        }
    }

    /// Makes `path` free to bind, or says why it must not be; a missing directory is
    /// created for a socket of mode `socketMode` and group `group`.
    static func prepare(_ path: String, socketMode: UInt32, group: gid_t?, log: Logger) throws(StartupError) {
        guard path.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw StartupError("socket path \(path) is too long for a Unix socket (\(path.utf8.count) bytes)")
        }
        try makeDirectory(for: path, mode: mode_t(AccessOptions.directoryMode(forSocketMode: socketMode)), group: group)
        switch inspect(path) {
        case .nothing: return
        case .notASocket:
            throw StartupError("\(path) exists and is not a socket; refusing to replace it")
        case .live:
            throw StartupError("another daemon is answering on \(path); refusing to take it over")
        case .busy:
            throw StartupError("another daemon is listening on \(path) but accepts no connection now (its backlog is full); refusing to take it over")
        case .unreachable(let why):
            throw StartupError("cannot check \(path): \(why)")
        case .stale:
            guard unlink(path) == 0 else { throw StartupError("cannot remove stale socket \(path): \(errnoText())") }
            log.notice("replaced stale socket \(path)")
        }
    }

    /// A name beside `path` to bind before the socket listens (`.NAME.PID.new`), or
    /// nil when that would not fit in a socket address.
    static func stagingPath(for path: String, pid: Int32) -> String? {
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let staged = "\(dir).\(name).\(pid).new"
        return staged.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) ? staged : nil
    }

    /// The listening socket passed by systemd (LISTEN_FDS/LISTEN_PID), if any for
    /// this process; the variables are removed so children do not inherit them.
    static func activatedSocket(environment env: [String: String], log: Logger) throws(StartupError) -> Int32? {
        guard let fdsText = env["LISTEN_FDS"] else { return nil }
        defer {
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pidText = env["LISTEN_PID"], let pid = Int32(pidText), pid == getpid() else {
            log.info("LISTEN_FDS is set for another process; ignoring it")
            return nil
        }
        guard let n = Int(fdsText), n >= 1 else { return nil }
        if n > 1 { log.warning("\(n) sockets passed; using the first (fd 3)") }
        let fd: Int32 = 3
        var type: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 else {
            throw StartupError("LISTEN_FDS: fd 3 is not a socket: \(errnoText())")
        }
        var listening: Int32 = 0
        len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len)
        var addr = sockaddr_un()
        var alen = socklen_t(MemoryLayout<sockaddr_un>.size)
        _ = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &alen) }
        }
        guard type == Int32(SOCK_STREAM.rawValue), addr.sun_family == sa_family_t(AF_UNIX), listening == 1 else {
            throw StartupError("LISTEN_FDS: fd 3 is not a listening Unix stream socket")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return fd
    }

    /// The path a socket is bound to, for logs ("" for an unnamed one).
    static func boundPath(of fd: Int32) -> String {
        var addr = sockaddr_un()
        var alen = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &alen) }
        }
        guard rc == 0 else { return "" }
        return withUnsafeBytes(of: &addr.sun_path) { buf in
            let bytes = buf.prefix(while: { $0 != 0 })
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
