import CreaseCore

// Who may do what on the socket (issue 6, "Access control"). Everything in this file
// is pure: the daemon reads a peer's credentials once, when it accepts the
// connection, asks `AccessPolicy.level(for:)`, and keeps the answer as one boolean
// per connection for the event path.

/// What a connection may do. Publishing includes reading.
public enum AccessLevel: Int, Sendable, Comparable, CustomStringConvertible {
    /// Nothing: the connection gets one `forbidden` error and is closed.
    case none = 0
    /// `hello`, `layout`, `state`, `subscribe`, `unsubscribe`, `stats`, `sync`.
    case read
    /// Also events (including `app`), `mark` and `trace`.
    case publish

    public static func < (a: AccessLevel, b: AccessLevel) -> Bool { a.rawValue < b.rawValue }

    public var description: String {
        switch self {
        case .none: "none"
        case .read: "read"
        case .publish: "publish"
        }
    }
}

extension Command {
    /// Whether the command changes what the daemon records (the trace) rather than
    /// only reading: `mark`, `trace` and `observe` need the publish level, like events.
    public var needsPublish: Bool {
        switch self {
        case .mark, .trace, .load, .observe: true
        case .stats(let reset): reset
        case .hello, .layout, .state, .subscribe, .unsubscribe, .sync, .clock: false
        }
    }
}

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
public enum Principal: Sendable, Equatable, CustomStringConvertible {
    case uid(UInt32)
    case gid(UInt32)

    public var description: String {
        switch self {
        case .uid(let n): "uid \(n)"
        case .gid(let n): "gid \(n)"
        }
    }
}

/// Who is at the other end of a connection, from SO_PEERCRED (and SO_PEERGROUPS for
/// the supplementary groups), as of its `connect`.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    public func matches(_ p: Principal) -> Bool {
        switch p {
        case .uid(let u): uid == u
        case .gid(let g): gid == g || groups.contains(g)
        }
    }

    public var description: String {
        "pid \(pid) uid \(uid) gid \(gid)" + (groups.isEmpty ? "" : " groups \(groups.map(String.init).joined(separator: ","))")
    }
}

/// The daemon's access policy. A list that is not configured (nil) restricts
/// nothing at its level:
///
/// - a peer named by a publish rule may publish (and read);
/// - otherwise, with read rules, a peer they name may read, and any other peer may
///   do nothing; without read rules, any peer that can open the socket may read;
/// - without publish rules, whoever may read may also publish.
///
/// So no rules at all is the open default (the socket's file mode and group are the
/// only gate); `--allow-publish` alone keeps reading open to everyone who can reach
/// the socket; `--allow-read` alone admits only those it names, with full rights.
public struct AccessPolicy: Sendable, Equatable {
    public var publish: [Principal]?
    public var read: [Principal]?

    public init(publish: [Principal]? = nil, read: [Principal]? = nil) {
        self.publish = publish
        self.read = read
    }

    public static let open = AccessPolicy()

    public var isOpen: Bool { publish == nil && read == nil }

    /// Whether a rule names a group, so the peer's supplementary groups matter.
    public var needsGroups: Bool {
        func hasGroup(_ l: [Principal]?) -> Bool { l?.contains { if case .gid = $0 { true } else { false } } ?? false }
        return hasGroup(publish) || hasGroup(read)
    }

    public func level(for peer: PeerCredentials) -> AccessLevel {
        if let p = publish, p.contains(where: peer.matches) { return .publish }
        if let r = read, !r.contains(where: peer.matches) { return .none }
        return publish == nil ? .publish : .read
    }

    /// Why a peer at `level` may not do what it asked (`wanted`), for the `forbidden` error.
    public func refusal(_ level: AccessLevel, peer: PeerCredentials?, wanted: String) -> String {
        let who = peer.map { "uid \($0.uid) (gid \($0.gid))" } ?? "a peer whose credentials are unknown"
        switch level {
        case .none: return "\(who) may not use this daemon; see --allow-read and --allow-publish"
        case .read, .publish: return "\(who) may only read; \(wanted) needs a peer named by --allow-publish"
        }
    }
}

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
