#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseDaemon
import CreaseDaemonCore
import Foundation
import Testing
import CreaseTestSupport

/// Access control against a real creased: the socket's mode and group, and the
/// read/publish policy checked on each connection's peer credentials. The tests run
/// as root; rules that do and do not name root show both sides, and `setpriv` runs
/// clients as other users and groups.

/// `crease send LINES` as `uid`/`gid` with supplementary `groups`, through setpriv.
func creaseAs(uid: UInt32, gid: UInt32, groups: [UInt32], socket: String, _ lines: [String]) throws -> (status: Int32, out: String, err: String) {
    let groupArgs = groups.isEmpty ? ["--clear-groups"] : ["--groups", groups.map(String.init).joined(separator: ",")]
    return try run(try findTool("setpriv"),
                   ["--reuid", "\(uid)", "--regid", "\(gid)"] + groupArgs + [try creaseBinary(), "send", "--socket", socket] + lines)
}

let asRoot = ConditionTrait.enabled(if: getuid() == 0, "setpriv and chown need root")

@Suite(.serialized) struct AccessControlTests {
    @Test func withoutRulesAnyoneMayDoAnythingAndTheConnectionIsLogged() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        let hello = try c.request(#"{"cmd":"hello","id":1}"#)
        #expect(hello["access"] == .string("publish"))
        #expect(hello["peer"]?["uid"] == .number(0) || getuid() != 0)
        #expect(hello["peer"]?["pid"] == .number(Double(getpid())))
        #expect(try c.request(#"{"event":"hinge","angle":90,"id":2}"#)["ok"] == .bool(true))
        #expect(try c.request(#"{"cmd":"mark","label":"x","id":3}"#)["ok"] == .bool(true))
        #expect(d.log().contains("connected: pid \(getpid()) uid \(getuid()) gid \(getgid()); may publish"), "\(d.log())")
    }

    @Test(asRoot) func aPublishRuleThatDoesNotNameRootLeavesRootReading() throws {
        let d = try DaemonProcess(arguments: ["--allow-publish", "uid:12345"])
        let sub = try Client(d.socketPath)
        #expect(try sub.request(#"{"cmd":"subscribe","topics":["layout"],"id":"s"}"#)["ok"] == .bool(true))
        #expect(try sub.readJSON()["push"] == .string("layout"))
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"cmd":"hello","id":1}"#)["access"] == .string("read"))
        let before = try c.request(#"{"cmd":"sync","id":2}"#)
        // Every publishing line is refused with `forbidden` and changes nothing.
        let refused = [
            (#"{"event":"hinge","angle":180,"id":3}"#, JSONValue.number(3)),
            (#"{"event":"app","manifest":{"name":"x","root":{"kind":"navigationStack","id":"n","screens":[{"id":"a","toolbar":[]}]}},"id":4}"#, .number(4)),
            (#"{"cmd":"mark","label":"nope","id":5}"#, .number(5)),
            (#"{"cmd":"trace","action":"rotate","id":6}"#, .number(6)),
            (#"{"cmd":"load","id":7}"#, .number(7)),
            (#"{"cmd":"stats","reset":true,"id":8}"#, .number(8)),
        ]
        for (line, id) in refused {
            let r = try c.request(line)
            #expect(r["ok"] == .bool(false), "\(line)")
            #expect(r["id"] == id)
            #expect(r["error"]?["code"] == .string("forbidden"))
            #expect(r["error"]?["message"]?.str?.contains("--allow-publish") == true)
        }
        // Without an id the refusal is still answered, as errors are.
        c.sendLine(#"{"event":"keyboard","visible":true}"#)
        #expect(try c.readJSON()["error"]?["code"] == .string("forbidden"))
        // Reading still works, and nothing moved.
        let after = try c.request(#"{"cmd":"sync","id":7}"#)
        #expect(after["seq"] == before["seq"] && after["digest"] == before["digest"])
        #expect(try c.request(#"{"cmd":"layout"}"#)["layout"]?["seq"] == .number(0))
        let stats = try c.request(#"{"cmd":"stats","id":8}"#)["stats"]
        #expect(stats?["events"] == .number(0))
        #expect(stats?["forbidden"] == .number(7))
        #expect(sub.readAvailable(quiet: 0.2).isEmpty)
        #expect(d.log().split(separator: "\n").contains { $0.contains("uid 0 gid 0") && $0.contains("may read") }, "\(d.log())")
    }

    @Test(asRoot) func aPublishRuleNamingRootLetsRootPublish() throws {
        let d = try DaemonProcess(arguments: ["--allow-publish", "uid:0", "--allow-read", "gid:12345"])
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"cmd":"hello","id":1}"#)["access"] == .string("publish"))
        #expect(try c.request(#"{"event":"hinge","angle":180,"id":2}"#)["seq"] == .number(1))
    }

    @Test(asRoot) func aReadRuleThatDoesNotNameRootShutsRootOut() throws {
        let d = try DaemonProcess(arguments: ["--allow-read", "gid:12345"])
        let c = try Client(d.socketPath)
        let r = try c.readJSON()
        #expect(r["ok"] == .bool(false))
        #expect(r["error"]?["code"] == .string("forbidden"))
        #expect(r["error"]?["message"]?.str?.contains("may not use this daemon") == true)
        #expect(c.drainToEOF(timeout: 5).eof)
        // The daemon serves on: a refused peer costs nothing else.
        let again = try Client(d.socketPath)
        #expect(try again.readJSON()["error"]?["code"] == .string("forbidden"))
    }

    /// A refused peer that keeps its end open and sends nothing once held its descriptor for
    /// ever (with nofile 64, a hundred of them locked the rig's publisher out): each is
    /// closed within the refusal's grace.
    @Test(asRoot) func refusedPeersThatHangOnAreClosed() throws {
        let d = try DaemonProcess(arguments: ["--no-trace", "--allow-read", "gid:12345"])
        func descriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(d.process.processIdentifier)/fd").count) ?? -1 }
        let baseline = descriptors()
        var held: [Client] = []
        for _ in 0..<20 { held.append(try Client(d.socketPath)) }
        for c in held { #expect(try c.readJSON()["error"]?["code"] == .string("forbidden")) }
        // The peers never close; the daemon does, on its own.
        try waitUntil("the refused peers' descriptors closed") { descriptors() <= baseline }
        #expect(d.process.isRunning)
        withExtendedLifetime(held) {}
    }

    /// With `nofile` 64, one user holding 100 connections once locked the rig's publisher
    /// out. Read-only connections stop short of a reserve of descriptors kept for
    /// publishers, and count against a per-uid limit; the publisher always gets in.
    @Test(asRoot) func readersCannotTakeThePublishersDescriptors() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/creased.sock"
        let d = try DaemonProcess(arguments: ["--nofile=64", try creasedBinary(), "--socket", path, "--no-trace", "--socket-mode", "0666",
                                              "--allow-read", "uid:0", "--allow-publish", "uid:12345"],
                                  socketPath: path, executable: "/usr/bin/prlimit")
        chmod(d.dir, 0o711)
        chmod(dir, 0o711)
        var readers: [Client] = [], refused = 0
        for _ in 0..<100 {
            guard let c = try? Client(path) else { continue }
            c.sendLine(#"{"cmd":"hello","id":1}"#)
            guard let reply = try? c.readJSON(timeout: 10) else { continue }
            if reply["ok"] == .bool(true) { readers.append(c) } else { refused += 1 }
        }
        #expect(readers.count >= 20 && readers.count < 64 - 16, "\(readers.count) readers held")
        #expect(refused > 0)
        #expect(d.log().contains("as many as the daemon takes (it keeps its last descriptors for publishers)"))
        let rig = try creaseAs(uid: 12345, gid: 12345, groups: [], socket: path, [#"{"event":"hinge","angle":180}"#])
        #expect(rig.status == 0, "the publisher was locked out: \(rig.out)\(rig.err)")
        withExtendedLifetime(readers) {}
    }

    @Test func oneUidHoldsAtMostItsShareOfReadOnlyConnections() throws {
        let d = try DaemonProcess(arguments: ["--no-trace", "--allow-read", "uid:0", "--allow-publish", "uid:12345", "--max-readers-per-uid", "3"])
        var held: [Client] = []
        for i in 0..<3 {
            let c = try Client(d.socketPath)
            #expect(try c.request(#"{"cmd":"hello","id":\#(i)}"#)["access"] == .string("read"))
            held.append(c)
        }
        let fourth = try Client(d.socketPath)
        let refusal = try fourth.readJSON()
        #expect(refusal["error"]?["code"] == .string("forbidden"))
        #expect(refusal["error"]?["message"]?.str?.contains("uid 0 has 3 read-only connections open") == true, "\(refusal)")
        held.removeLast().close()
        try waitUntil("a reader's place freed") {
            guard let c = try? Client(d.socketPath), let r = try? c.request(#"{"cmd":"hello","id":9}"#) else { return false }
            return r["access"] == .string("read")
        }
        withExtendedLifetime(held) {}
    }

    @Test(asRoot) func otherUsersGetWhatTheRulesGiveThem() throws {
        // The rig user publishes, the lab group reads, a visitor who can open the socket gets nothing.
        let d = try DaemonProcess(arguments: ["--socket-mode", "0666", "--allow-publish", "user:nobody", "--allow-publish", "uid:12345",
                                              "--allow-read", "group:nogroup", "--allow-read", "gid:2000"])
        chmod(d.dir, 0o711)
        var st = stat()
        #expect(stat(d.socketPath, &st) == 0 && st.st_mode & 0o777 == 0o666)
        #expect(stat((d.socketPath as NSString).deletingLastPathComponent, &st) == 0 && st.st_mode & 0o777 == 0o755)

        let rig = try creaseAs(uid: 12345, gid: 12345, groups: [], socket: d.socketPath, [#"{"event":"hinge","angle":180}"#])
        #expect(rig.status == 0, "\(rig.out)\(rig.err)")
        #expect(parseJSON(rig.out.trimmingCharacters(in: .newlines))?["seq"] == .number(1))

        let student = try creaseAs(uid: 23456, gid: 23456, groups: [2000], socket: d.socketPath,
                                   [#"{"cmd":"layout","id":"l"}"#, #"{"event":"hinge","angle":0}"#])
        #expect(student.status == 2)
        let replies = student.out.split(separator: "\n").compactMap { parseJSON(String($0)) }
        #expect(replies.first?["layout"]?["seq"] == .number(1))
        #expect(replies.last?["error"]?["code"] == .string("forbidden"))

        // The visitor is told `forbidden` and cut off; its own write still goes through first.
        let visitor = try creaseAs(uid: 34567, gid: 34567, groups: [], socket: d.socketPath, [#"{"cmd":"layout","id":"l"}"#])
        #expect(visitor.status == 1)
        #expect(parseJSON(visitor.out.trimmingCharacters(in: .newlines))?["error"]?["code"] == .string("forbidden"), "\(visitor.out)\(visitor.err)")
        #expect(visitor.err.contains("creased closed the connection"))

        let log = d.log().split(separator: "\n")
        for (who, level) in [("uid 12345 gid 12345", "may publish"), ("uid 23456 gid 23456 groups 2000", "may read"),
                             ("uid 34567 gid 34567", "refused")] {
            #expect(log.contains { $0.contains(who) && $0.contains(level) }, "\(who) \(level)\n\(log.joined(separator: "\n"))")
        }
        // Root is named by no rule here either.
        #expect(try Client(d.socketPath).readJSON()["error"]?["code"] == .string("forbidden"))
    }

    @Test(asRoot) func theSocketGroupLetsItsMembersInAndNobodyElse() throws {
        let d = try DaemonProcess(arguments: ["--socket-group", "2000"])
        chmod(d.dir, 0o711)
        var st = stat()
        #expect(stat(d.socketPath, &st) == 0 && st.st_gid == 2000 && st.st_mode & 0o777 == 0o660)
        let dir = (d.socketPath as NSString).deletingLastPathComponent
        #expect(stat(dir, &st) == 0 && st.st_gid == 2000 && st.st_mode & 0o777 == 0o750)
        let member = try creaseAs(uid: 23456, gid: 23456, groups: [2000], socket: d.socketPath, [#"{"event":"hinge","angle":90}"#])
        #expect(member.status == 0, "\(member.err)")
        let outsider = try creaseAs(uid: 34567, gid: 34567, groups: [], socket: d.socketPath, [#"{"event":"hinge","angle":90}"#])
        #expect(outsider.status == 1)
        #expect(outsider.err.contains("Permission denied"))
    }

    @Test func badRulesAndUnknownNamesStopTheDaemonAtStart() throws {
        let usage = try run(try creasedBinary(), ["--allow-publish", "root"])
        #expect(usage.status == 2 && usage.err.contains("user:NAME"))
        let unknown = try run(try creasedBinary(), ["--socket", "/tmp/creased-never.sock", "--allow-read", "user:no-such-user-here"])
        #expect(unknown.status == 1 && unknown.err.contains("no user named \"no-such-user-here\""))
        let group = try run(try creasedBinary(), ["--socket", "/tmp/creased-never.sock", "--socket-group", "no-such-group-here"])
        #expect(group.status == 1 && group.err.contains("no group named"))
    }

    @Test func theLabDropInsPassSystemdAnalyzeAndTheirFlagsParse() throws {
        let (dir, _) = try stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var execStart = ""
        for unit in ["creased.socket", "creased.service"] {
            let source = packageRoot.appendingPathComponent("systemd/lab/\(unit).d/lab.conf")
            let text = try String(contentsOf: source, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: "\(dir)/\(unit).d", withIntermediateDirectories: true)
            try text.replacingOccurrences(of: "/usr/local/bin/creased", with: try creasedBinary())
                .write(toFile: "\(dir)/\(unit).d/lab.conf", atomically: true, encoding: .utf8)
            if let line = text.split(separator: "\n").last(where: { $0.hasPrefix("ExecStart=/") }) { execStart = String(line) }
        }
        let verify = try run(try findTool("systemd-analyze"), ["verify", "--man=no", "\(dir)/creased.socket", "\(dir)/creased.service"])
        #expect(verify.status == 0 && verify.err.isEmpty, "\(verify.err)")
        // The drop-ins are read: a mistake in one is reported.
        try "[Service]\nPrivateUserz=no\n".write(toFile: "\(dir)/creased.service.d/typo.conf", atomically: true, encoding: .utf8)
        let broken = try run(try findTool("systemd-analyze"), ["verify", "--man=no", "\(dir)/creased.service"])
        #expect(broken.err.contains("PrivateUserz"))

        let args = execStart.split(separator: " ").dropFirst().map(String.init)
        guard case .run(let o) = try DaemonOptions.parse(args) else {
            Issue.record("\(execStart) does not parse")
            return
        }
        #expect(o.access.allowPublish == [.user("rig")])
        #expect(o.access.allowRead == [.group("crease")])
    }
}
