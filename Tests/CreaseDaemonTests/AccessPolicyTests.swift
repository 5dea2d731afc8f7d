import CreaseCore
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Testing

/// The access policy's decisions and its flags, without sockets.
@Suite struct AccessPolicyTests {
    let root = PeerCredentials(pid: 1, uid: 0, gid: 0)
    let rig = PeerCredentials(pid: 2, uid: 1001, gid: 1001, groups: [1001, 2000])
    let student = PeerCredentials(pid: 3, uid: 1002, gid: 1002, groups: [1002, 2000])
    let visitor = PeerCredentials(pid: 4, uid: 1003, gid: 1003)

    @Test func noRulesLetsEveryoneDoEverything() {
        #expect(AccessPolicy.open.isOpen)
        for p in [root, rig, student, visitor] { #expect(AccessPolicy.open.level(for: p) == .publish) }
    }

    @Test func publishRulesAloneKeepReadingOpen() {
        let policy = AccessPolicy(publish: [.uid(1001)])
        #expect(policy.level(for: rig) == .publish)
        #expect(policy.level(for: root) == .read)
        #expect(policy.level(for: visitor) == .read)
    }

    @Test func readRulesAloneAdmitOnlyThoseTheyNameWithFullRights() {
        let policy = AccessPolicy(read: [.gid(2000)])
        #expect(policy.level(for: rig) == .publish)
        #expect(policy.level(for: student) == .publish)
        #expect(policy.level(for: visitor) == .none)
        #expect(policy.level(for: root) == .none)
    }

    @Test func bothListsMakeThreeLevels() {
        // The lab: the rig user publishes, the lab group watches, nobody else gets in.
        let policy = AccessPolicy(publish: [.uid(1001)], read: [.gid(2000)])
        #expect(policy.level(for: rig) == .publish)
        #expect(policy.level(for: student) == .read)
        #expect(policy.level(for: visitor) == .none)
        // A publisher need not also be named by a read rule.
        #expect(AccessPolicy(publish: [.uid(0)], read: [.gid(2000)]).level(for: root) == .publish)
    }

    @Test func groupRulesMatchThePrimaryOrASupplementaryGroup() {
        #expect(PeerCredentials(pid: 0, uid: 5, gid: 7).matches(.gid(7)))
        #expect(PeerCredentials(pid: 0, uid: 5, gid: 7, groups: [8, 9]).matches(.gid(9)))
        #expect(!PeerCredentials(pid: 0, uid: 5, gid: 7, groups: [8]).matches(.gid(5)))
        #expect(!PeerCredentials(pid: 0, uid: 5, gid: 7).matches(.uid(7)))
        #expect(AccessPolicy(read: [.gid(1)]).needsGroups)
        #expect(!AccessPolicy(publish: [.uid(1)], read: [.uid(2)]).needsGroups)
    }

    @Test func commandsThatWriteToTheTraceNeedPublish() {
        let publishing: [Command] = [.mark(label: "x"), .trace(.rotate), .load(LoadRequest()), .stats(reset: true)]
        let reading: [Command] = [.hello, .layout, .state, .subscribe([.layout]), .unsubscribe([]), .stats(reset: false), .sync]
        #expect(publishing.allSatisfy { $0.needsPublish })
        #expect(!reading.contains { $0.needsPublish })
    }

    @Test func rulesParseAndBadOnesNameTheProblem() throws {
        #expect(try AccessRule(parsing: "user:rig") == .user("rig"))
        #expect(try AccessRule(parsing: "uid:0") == .uid(0))
        #expect(try AccessRule(parsing: "group:lab") == .group("lab"))
        #expect(try AccessRule(parsing: "gid:2000") == .gid(2000))
        for bad in ["rig", "uid:x", "uid:-1", "uid:4294967295", "user:", "role:admin"] {
            #expect(throws: DaemonOptions.UsageError.self, "\(bad)") { try AccessRule(parsing: bad) }
        }
    }

    @Test func socketFlags() throws {
        var o = AccessOptions()
        #expect(o.socketMode == 0o660)
        try o.set("--socket-mode", "0600")
        #expect(o.socketMode == 0o600)
        try o.set("--socket-mode", "666")
        #expect(o.socketMode == 0o666)
        for bad in ["0999", "1777", "", "0o", "0060", "rw"] {
            #expect(throws: DaemonOptions.UsageError.self, "\(bad)") { try o.set("--socket-mode", bad) }
        }
        try o.set("--allow-publish", "uid:12345")
        try o.set("--allow-publish", "user:root")
        try o.set("--allow-read", "gid:0")
        #expect(o.allowPublish == [.uid(12345), .user("root")])
        #expect(o.allowRead == [.gid(0)])
        #expect(AccessOptions.directoryMode(forSocketMode: 0o660) == 0o750)
        #expect(AccessOptions.directoryMode(forSocketMode: 0o600) == 0o700)
        #expect(AccessOptions.directoryMode(forSocketMode: 0o666) == 0o755)
        #expect(AccessOptions.directoryMode(forSocketMode: 0o606) == 0o705)
    }

    @Test func policyResolvesNamesThroughTheShell() throws {
        var o = AccessOptions()
        #expect(try o.policy { _ throws(StartupError) in .uid(9) } == .open)
        try o.set("--allow-publish", "user:rig")
        try o.set("--allow-read", "gid:7")
        let p = try o.policy { r throws(StartupError) in
            if case .user("rig") = r { return .uid(1001) }
            if case .gid(let g) = r { return .gid(g) }
            throw StartupError("unexpected \(r)")
        }
        #expect(p == AccessPolicy(publish: [.uid(1001)], read: [.gid(7)]))
        #expect(throws: StartupError.self) { try o.policy { r throws(StartupError) in throw StartupError("no \(r)") } }
    }
}
