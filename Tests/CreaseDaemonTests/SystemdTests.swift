#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import CreaseTestSupport
import Testing

/// The units under the real systemd-analyze, a real start through
/// systemd-socket-activate, and sd_notify into a test NOTIFY_SOCKET.

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

func findTool(_ name: String) throws -> String {
    for dir in ["/usr/bin", "/bin", "/usr/local/bin"] where FileManager.default.isExecutableFile(atPath: "\(dir)/\(name)") {
        return "\(dir)/\(name)"
    }
    throw HarnessError("\(name) is not installed (Debian package systemd)")
}

/// The units copied to a temp dir, ExecStart pointing at the built creased, and
/// the templates also as instance `rig1`.
func stagedUnits() throws -> (dir: String, files: [String]) {
    let dir = try makeTempDir()
    let binary = try creasedBinary()
    var files: [String] = []
    for name in ["creased.socket", "creased.service", "creased@.socket", "creased@.service"] {
        let text = try String(contentsOf: packageRoot.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/creased", with: binary)
        let path = "\(dir)/\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        files.append(path)
        if name.contains("@") {
            let instance = "\(dir)/\(name.replacingOccurrences(of: "@", with: "@rig1"))"
            try text.write(toFile: instance, atomically: true, encoding: .utf8)
            files.append(instance)
        }
    }
    return (dir, files)
}

/// Receives sd_notify datagrams on a path or an abstract ('@') name.
final class NotifyListener {
    let fd: Int32
    let name: String

    /// `fd` is set only once bound: an init that throws before every property is set runs
    /// no deinit, so a failed bind's socket is closed here, once (a deinit closing it again
    /// would close whatever another test opened under that number meanwhile).
    init(name: String) throws {
        self.name = name
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(String(cString: strerror(errno)))") }
        var (addr, len) = sockaddrUn(name)
        let rc = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw HarnessError("bind \(name): \(String(cString: strerror(e)))")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// The next datagram, or nil after `timeout` seconds.
    func receive(timeout: Double = 5) -> String? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buf, buf.count, 0)
        return n > 0 ? String(decoding: buf[0..<n], as: UTF8.self) : nil
    }

    /// Datagrams until one contains `needle`; nil if none within `timeout`.
    func wait(for needle: String, timeout: Double = 5) -> [String]? {
        var got: [String] = []
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            guard let m = receive(timeout: max(0.01, deadline - monotonicSeconds())) else { continue }
            got.append(m)
            if m.split(separator: "\n").contains(Substring(needle)) { return got }
        }
        return nil
    }
}

@Suite(.serialized) struct SystemdTests {
    @Test func everyUnitPassesSystemdAnalyzeVerify() throws {
        let (dir, files) = try stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try run(try findTool("systemd-analyze"), ["verify", "--man=no"] + files)
        #expect(r.status == 0, "\(r.err)")
        // verify only warns about unknown keys and bad values: any output is a finding.
        #expect(r.err.isEmpty, "\(r.err)")
        #expect(files.count == 6)
    }

    @Test func verifyWouldCatchAMistake() throws {
        // The check above can fail: a broken copy of the unit is reported.
        let (dir, _) = try stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/broken.service"
        let text = try String(contentsOfFile: "\(dir)/creased.service", encoding: .utf8)
            .replacingOccurrences(of: "Type=notify", with: "Type=notifyy")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try run(try findTool("systemd-analyze"), ["verify", "--man=no", path])
        #expect(r.err.contains("notifyy"))
    }

    @Test func hardeningExposureIsLow() throws {
        let (dir, _) = try stagedUnits()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for unit in ["creased.service", "creased@rig1.service"] {
            let r = try run(try findTool("systemd-analyze"), ["security", "--offline=yes", "--no-pager", "\(dir)/\(unit)"])
            let line = try #require(r.out.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(r.out)\(r.err)")
            // "→ Overall exposure level for creased.service: 0.5 SAFE"
            let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }
            #expect(score != nil && score! <= 1.0, "\(line)")
        }
    }

    @Test func templatesPutTheInstanceInSocketAndTracePaths() throws {
        let service = try String(contentsOf: packageRoot.appendingPathComponent("systemd/creased@.service"), encoding: .utf8)
        let socket = try String(contentsOf: packageRoot.appendingPathComponent("systemd/creased@.socket"), encoding: .utf8)
        #expect(socket.contains("ListenStream=%t/crease/%i.sock"))
        #expect(service.contains("--socket %t/crease/%i.sock"))
        #expect(service.contains("--trace-dir %S/crease/%i"))
        // Each rig's traces, index and hello name the rig.
        #expect(service.contains("--label rig=%i"))
        #expect(service.contains("StateDirectory=crease/%i"))
        #expect(service.contains("Requires=creased@%i.socket"))
    }

    @Test func startsThroughSystemdSocketActivate() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/activated.sock"
        // systemd-socket-activate listens, then execs creased on the first connection.
        let d = try DaemonProcess(arguments: ["-l", path, try creasedBinary(), "--log-level", "debug"],
                                  socketPath: path, waitUntilReady: false,
                                  executable: try findTool("systemd-socket-activate"))
        var client: Client?
        pollUntil(timeout: 10) {
            client = try? Client(path)
            return client != nil
        }
        let c = try #require(client, "\(d.log())")
        let hello = try c.request(#"{"cmd":"hello","id":1}"#, timeout: 10)
        #expect(hello["socketActivated"] == .bool(true), "\(d.log())")
        #expect(try c.request(toggle(0, id: "a"))["seq"] == .number(1))
        #expect(d.log().contains("socket activation"))
        d.signal(SIGTERM)
        #expect(d.waitForExit() == 0)
        // The socket belongs to whoever passed it: creased leaves it in place.
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func listenFDsForAnotherProcessAreIgnored() throws {
        let d = try DaemonProcess(arguments: ["--log-level", "info"], environment: ["LISTEN_FDS": "1", "LISTEN_PID": "1"])
        #expect(try Client(d.socketPath).request(#"{"cmd":"hello"}"#)["socketActivated"] == .bool(false))
        #expect(d.log().contains("another process"))
    }

    @Test func readyOnlyOnceTheSocketAcceptsThenWatchdogAndStopping() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let notify = try NotifyListener(name: "\(dir)/notify.sock")
        let d = try DaemonProcess(arguments: ["--stats-interval-ms", "50"],
                                  environment: ["NOTIFY_SOCKET": notify.name, "WATCHDOG_USEC": "200000"],
                                  waitUntilReady: false)
        let ready = try #require(notify.wait(for: "READY=1"), "\(d.log())")
        // The moment READY=1 arrives, the socket must already accept.
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"cmd":"hello","id":1}"#)["ok"] == .bool(true))
        #expect(ready.last?.contains("STATUS=listening on \(d.socketPath)") == true)
        // WATCHDOG_USEC=200000: a ping every 100 ms.
        let start = monotonicSeconds()
        #expect(notify.wait(for: "WATCHDOG=1", timeout: 2) != nil)
        #expect(notify.wait(for: "WATCHDOG=1", timeout: 2) != nil)
        #expect(monotonicSeconds() - start < 1.5)
        // STATUS= follows what the daemon does.
        _ = try c.request(toggle(0, id: "s"))
        let deadline = monotonicSeconds() + 5
        var status: String?
        while status == nil, monotonicSeconds() < deadline, let m = notify.receive(timeout: 1) {
            if m.hasPrefix("STATUS=1 events, 1 clients") { status = m }
        }
        #expect(status != nil)
        d.signal(SIGTERM)
        #expect(notify.wait(for: "STOPPING=1") != nil)
        #expect(d.waitForExit() == 0)
    }

    @Test func notifySocketInTheAbstractNamespace() throws {
        let name = "@crease-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let notify = try NotifyListener(name: name)
        let d = try DaemonProcess(environment: ["NOTIFY_SOCKET": name], waitUntilReady: false)
        #expect(notify.wait(for: "READY=1") != nil, "\(d.log())")
        #expect(try Client(d.socketPath).request(#"{"cmd":"sync"}"#)["seq"] == .number(0))
    }
}
