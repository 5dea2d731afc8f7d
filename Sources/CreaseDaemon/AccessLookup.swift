import CreaseDaemonCore
#if canImport(Glibc)
import Glibc
#endif

/// The system calls behind access control: names to ids (at startup only, never on
/// the loop: a user database may be remote) and a peer's credentials (once per
/// accepted connection).
enum AccessLookup {
    /// The numeric id a rule names; an unknown name stops the daemon at startup.
    static func principal(_ rule: AccessRule) throws(StartupError) -> Principal {
        switch rule {
        case .uid(let n): return .uid(n)
        case .gid(let n): return .gid(n)
        case .user(let name):
            guard let uid = userID(name) else { throw StartupError("--allow-*: no user named \"\(name)\"") }
            return .uid(uid)
        case .group(let name):
            guard let gid = groupID(name) else { throw StartupError("--allow-*: no group named \"\(name)\"") }
            return .gid(gid)
        }
    }

    /// `--socket-group`: a group name, or a number.
    static func socketGroup(_ spec: String) throws(StartupError) -> gid_t {
        if let n = UInt32(spec) { return n }
        guard let gid = groupID(spec) else { throw StartupError("--socket-group: no group named \"\(spec)\"") }
        return gid
    }

    private static func userID(_ name: String) -> uid_t? {
        var pw = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buf = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(name, &pw, &buf, buf.count, &result) == 0, result != nil else { return nil }
        return pw.pw_uid
    }

    private static func groupID(_ name: String) -> gid_t? {
        var gr = group()
        var result: UnsafeMutablePointer<group>?
        var buf = [CChar](repeating: 0, count: 65536)
        guard getgrnam_r(name, &gr, &buf, buf.count, &result) == 0, result != nil else { return nil }
        return gr.gr_gid
    }

    /// SO_PEERCRED of a connected Unix socket, plus SO_PEERGROUPS when `groups` is
    /// asked for (the supplementary groups; a kernel without it gives none).
    static func peer(fd: Int32, groups: Bool) -> PeerCredentials? {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
        var cred: (Int32, UInt32, UInt32) = (0, 0, 0)
        var len = socklen_t(MemoryLayout.size(ofValue: cred))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0, Int(len) == MemoryLayout.size(ofValue: cred) else {
            return nil
        }
        var peer = PeerCredentials(pid: cred.0, uid: cred.1, gid: cred.2)
        if groups {
            var list = [gid_t](repeating: 0, count: 64)
            for _ in 0..<2 {
                var glen = socklen_t(list.count * MemoryLayout<gid_t>.size)
                if getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, &list, &glen) == 0 {
                    peer.groups = Array(list.prefix(Int(glen) / MemoryLayout<gid_t>.size))
                    break
                }
                // ERANGE says how much room the list needs.
                guard errno == ERANGE else { break }
                list = [gid_t](repeating: 0, count: Int(glen) / MemoryLayout<gid_t>.size)
            }
        }
        return peer
    }
}
