import CreaseCore

// Who may do what on the socket (issue 6, "Access control"). Everything in this file
// is pure: the daemon reads a peer's credentials once, when it accepts the
// connection, asks `AccessPolicy.level(for:)`, and keeps the answer as one boolean
// per connection for the event path.

/// What a connection may do. Publishing includes reading.
public enum AccessLevel: Int, Sendable, Comparable, CustomStringConvertible {
    /// Nothing: the connection gets one `forbidden` error and is closed.
    case none = 0
    /// The commands whose kind needs only reading (`CommandKind.access`).
    case read
    /// Also events (including `app`) and the commands that need publishing (`Command.needsPublish`).
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

