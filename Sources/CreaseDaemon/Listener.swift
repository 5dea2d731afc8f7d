#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseDaemonCore

/// The listening socket: bound under a staging name with its mode and group, or
/// taken from systemd, then put in place.
extension Daemon {
    func listen() throws(StartupError) {
        uv_pipe_init(loop, server, 0)
        server.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        serverOpen = true
        if let fd = try SocketSetup.activatedSocket(environment: environment, log: log) {
            let rc = uv_pipe_open(server, fd)
            guard rc == 0 else { throw StartupError("cannot use the socket-activated fd: \(uvErrorName(rc))") }
            activated = true
            let path = SocketSetup.boundPath(of: fd)
            if !path.isEmpty, path != socketPath { log.info("socket activation: listening on \(path)") }
            if options.access.socketMode != AccessOptions().socketMode || socketGroup != nil {
                log.warning("--socket-mode and --socket-group do not apply to a socket systemd passed; set SocketMode= and SocketGroup= in the .socket unit")
            }
        } else {
            let mode = options.access.socketMode
            try SocketSetup.prepare(socketPath, socketMode: mode, group: socketGroup, log: log)
            // Bound under a staging name and renamed into place once it listens, so
            // whoever sees the path can connect (when the name fits; else bound in place).
            let bindPath = SocketSetup.stagingPath(for: socketPath, pid: getpid()) ?? socketPath
            // Bound with no more than `mode` allows, so there is no moment of a wider mode.
            let old = umask(mode_t(~mode & 0o777))
            let rc = uv_pipe_bind(server, bindPath)
            umask(old)
            guard rc == 0 else { throw StartupError("cannot bind \(bindPath): \(uvErrorName(rc))") }
            boundPath = bindPath
            chmod(bindPath, mode_t(mode))
            if let g = socketGroup, chown(bindPath, uid_t.max, g) != 0 {
                let why = SocketSetup.errnoText()
                unlink(bindPath)
                throw StartupError("cannot give \(socketPath) to group \(g): \(why)")
            }
        }
        let rc = uv_listen(asStream(server), SocketSetup.listenBacklog()) { s, status in
            let d = Unmanaged<Daemon>.fromOpaque(s!.pointee.data).takeUnretainedValue()
            d.accept(status: status)
        }
        guard rc == 0 else {
            if let p = boundPath { unlink(p) }
            throw StartupError("cannot listen on \(socketPath): \(uvErrorName(rc))")
        }
        if let staged = boundPath, staged != socketPath {
            // link, not rename: a daemon that took the path meanwhile is not replaced.
            let linked = link(staged, socketPath) == 0
            let e = errno
            unlink(staged)
            boundPath = linked ? socketPath : nil
            guard linked else {
                throw StartupError(e == EEXIST ? "another daemon took \(socketPath) while this one started; refusing to replace it"
                                               : "cannot put the socket in place at \(socketPath): \(SocketSetup.errnoText(e))")
            }
        }
        if !policy.isOpen {
            let list = { (l: [Principal]?) in l.map { $0.map(\.description).joined(separator: ", ") } ?? "anyone who can open the socket" }
            log.notice("access: publish: \(policy.publish == nil ? "whoever may read" : list(policy.publish)); read: \(list(policy.read))")
        }
    }
}
