import CreaseDaemonCore

/// One `--allow-read` / `--allow-publish` rule as written: `user:NAME`, `uid:N`,
/// `group:NAME` or `gid:N`. A group rule matches a peer's primary group or any of its
/// supplementary groups.
public enum AccessRule: Sendable, Equatable, CustomStringConvertible {
    case user(String)
    case uid(UInt32)
    case group(String)
    case gid(UInt32)

    public init(parsing text: String) throws(DaemonOptions.UsageError) {
        guard let colon = text.firstIndex(of: ":") else {
            throw .init(description: "an access rule is user:NAME, uid:N, group:NAME or gid:N, not \"\(text)\"")
        }
        let kind = String(text[..<colon])
        let value = String(text[text.index(after: colon)...])
        func number() throws(DaemonOptions.UsageError) -> UInt32 {
            // 4294967295 is (uid_t)-1, "no user": never a peer.
            guard let n = UInt32(value), n != .max else {
                throw .init(description: "\(kind):N needs a numeric id, not \"\(value)\"")
            }
            return n
        }
        guard !value.isEmpty else { throw .init(description: "the access rule \"\(text)\" names nobody") }
        switch kind {
        case "user": self = .user(value)
        case "uid": self = .uid(try number())
        case "group": self = .group(value)
        case "gid": self = .gid(try number())
        default:
            throw .init(description: "an access rule is user:NAME, uid:N, group:NAME or gid:N, not \"\(text)\"")
        }
    }

    public var description: String {
        switch self {
        case .user(let n): "user:\(n)"
        case .uid(let n): "uid:\(n)"
        case .group(let n): "group:\(n)"
        case .gid(let n): "gid:\(n)"
        }
    }
}

/// A rule with its name looked up: the numeric id it matches.
/// `creased`'s socket and access flags (the daemon's parser hands them here).
public struct AccessOptions: Sendable, Equatable {
    /// `--socket-mode`: permission bits of the socket file (octal on the command line).
    public var socketMode: UInt32 = 0o660
    /// `--socket-group NAME|GID`: the socket file's group.
    public var socketGroup: String?
    public var allowRead: [AccessRule] = []
    public var allowPublish: [AccessRule] = []

    public init() {}

    public static let usage = """
          --socket-mode MODE     the socket's permission bits, octal (default 0660); the directory
                                 creased creates for it is made traversable by the same classes
          --socket-group GROUP   the socket's group (a name or a number)
          --allow-publish RULE   who may send events (incl. app), mark and trace; repeatable
          --allow-read RULE      who may use read-only commands (hello, layout, state, subscribe,
                                 stats, sync); repeatable. RULE is user:NAME, uid:N, group:NAME or gid:N.
                                 With neither, anyone who can open the socket may do anything.
        """

    /// Flags that take a value.
    public static let valueFlags: Set<String> = ["--socket-mode", "--socket-group", "--allow-publish", "--allow-read"]

    /// Sets one valued flag; the error is the message to show.
    public mutating func set(_ flag: String, _ value: String) throws(DaemonOptions.UsageError) {
        switch flag {
        case "--socket-mode":
            let digits = value.hasPrefix("0o") ? String(value.dropFirst(2)) : value
            guard let m = UInt32(digits, radix: 8), m <= 0o777, !digits.isEmpty else {
                throw .init(description: "--socket-mode takes octal permission bits such as 0660, not \"\(value)\"")
            }
            guard m & 0o600 == 0o600 else {
                throw .init(description: "--socket-mode \(value) would lock out the daemon's own user (needs 0600 at least)")
            }
            socketMode = m
        case "--socket-group":
            guard !value.isEmpty else { throw .init(description: "--socket-group needs a group name or number") }
            socketGroup = value
        case "--allow-publish": allowPublish.append(try AccessRule(parsing: value))
        case "--allow-read": allowRead.append(try AccessRule(parsing: value))
        default:
            throw .init(description: "unknown access flag \(flag)")
        }
    }

    /// The mode of a directory creased creates for the socket: owner rwx, and search
    /// (r-x) for group and others exactly when the socket mode grants them anything.
    /// 0660 gives the 0750; 0600 gives 0700; 0666 gives 0755.
    public static func directoryMode(forSocketMode m: UInt32) -> UInt32 {
        0o700 | (m & 0o070 != 0 ? 0o050 : 0) | (m & 0o007 != 0 ? 0o005 : 0)
    }

    /// The policy once names are looked up by `resolve` (the shell's part).
    public func policy(resolve: (AccessRule) throws(StartupError) -> Principal) throws(StartupError) -> AccessPolicy {
        func list(_ rules: [AccessRule]) throws(StartupError) -> [Principal]? {
            guard !rules.isEmpty else { return nil }
            var out: [Principal] = []
            for r in rules { out.append(try resolve(r)) }
            return out
        }
        return AccessPolicy(publish: try list(allowPublish), read: try list(allowRead))
    }
}
