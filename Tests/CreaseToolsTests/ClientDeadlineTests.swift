#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// A Unix socket in the test process that misbehaves as a hung or hostile daemon would.
final class HostileServer: @unchecked Sendable {
    enum Behaviour { case silent, trickle, fullBacklog }
    let path: String
    private let fd: Int32
    private var held: [Int32] = []
    private let lock = NSLock()
    private var stopped = false

    init(path: String, _ behaviour: Behaviour) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in for (i, b) in path.utf8.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard bound == 0, listen(fd, behaviour == .fullBacklog ? 0 : 16) == 0 else { throw CheckError("cannot listen on \(path)") }
        switch behaviour {
        case .fullBacklog:
            // Nobody accepts: connect until the kernel refuses (the backlog is full).
            for _ in 0..<64 {
                let c = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(c, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
                if rc != 0 { close(c); break }
                held.append(c)
            }
        case .silent, .trickle:
            let trickle = behaviour == .trickle
            Thread { [self] in
                while true {
                    let c = accept(fd, nil, nil)
                    if c < 0 { return }
                    lock.lock(); held.append(c); lock.unlock()
                    guard trickle else { continue }
                    // One byte of a line that never ends, every 0.3 s.
                    Thread { [self] in
                        while !isStopped, send(c, "x", 1, Int32(MSG_NOSIGNAL)) == 1 { usleep(300_000) }
                    }.start()
                }
            }.start()
        }
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    deinit {
        lock.lock(); stopped = true; let fds = held; lock.unlock()
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        for c in fds { close(c) }
        unlink(path)
    }
}

struct CheckError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Every client command has a deadline, the one the user gave with `--timeout`: `fleet
/// --timeout 1` once took 15 s against a socket trickling an endless line, and `stats`,
/// `send`, `replay --to` and `gen --to` waited for ever on a socket that never answered.
@Suite struct ClientDeadlineTests {
    @Test(arguments: [HostileServer.Behaviour.silent, .trickle, .fullBacklog])
    func everyClientCommandEndsWithinItsTimeout(_ behaviour: HostileServer.Behaviour) throws {
        let scratch = Scratch()
        let server = try HostileServer(path: "\(scratch.path)/rig.sock", behaviour)
        let trace = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Traces/slow-unfold.jsonl").path
        let commands: [[String]] = [
            ["stats", "--socket", server.path, "--timeout", "1"],
            ["send", "--socket", server.path, "--timeout", "1", #"{"event":"hinge","angle":90}"#],
            ["watch", "--socket", server.path, "--timeout", "1"],
            ["gen", "--scenario", "unfold", "--seconds", "0.01", "--to", server.path, "--timeout", "1", "--speed", "max"],
            ["replay", trace, "--to", server.path, "--timeout", "1", "--speed", "max"],
            ["fleet", scratch.path, "--timeout", "1", "--count", "1", "--interval", "0.1", "--json"],
        ]
        for args in commands {
            let started = Date()
            let r = try runBounded(Built.crease, args, in: scratch, seconds: 20)
            let took = Date().timeIntervalSince(started)
            #expect(!r.hung, "\(args[0]) hung against a \(behaviour) socket")
            // The timeout (twice for fleet: a first sample, then the round), plus the time to
            // start a process and tear down, with room for a loaded machine; a command that
            // waited for ever is cut at 20 s.
            #expect(took < 8, "\(args[0]) took \(took) s with --timeout 1 against a \(behaviour) socket")
            if args[0] != "fleet" {
                // Issue 37: every client command says so with 1 (gen --to used to exit 2).
                #expect(r.finished.status == 1, "\(args[0]): \(r.finished.status) \(r.finished.stdout)")
                #expect(r.finished.stderr.contains("1 s"), "\(args[0]) against a \(behaviour) socket: \(r.finished.stderr)")
            } else {
                #expect(r.finished.stdout.contains("\"down\""), "\(r.finished.stdout)")
            }
        }
        withExtendedLifetime(server) {}
    }
}

/// A trace Crease wrote is always replayable into Crease: one recorded with a 100 KB
/// `--app` once failed `replay --to` with only "the daemon closed the connection", its
/// load line past the 64 KiB line limit.
@Suite struct LargeManifestReplayTests {
    @Test func aTraceWithALargeAppReplaysIntoADaemonThatTakesLongLines() throws {
        let scratch = Scratch()
        let title = String(repeating: "A long title for a title-only item ", count: 2)
        let items = (0..<1_000).map { #"{"id":"i\#($0)","title":"\#(title)\#($0)","symbol":"star"}"# }.joined(separator: ",")
        let app = "\(scratch.path)/big.json"
        try Data(#"{"name":"Big","root":{"kind":"navigationStack","id":"s","screens":[{"id":"r","toolbar":[\#(items)]}]}}"#.utf8)
            .write(to: URL(fileURLWithPath: app))
        let recorder = try LiveDaemon(scratch, name: "rec", ["--app", app])
        #expect(try runProgram(Built.crease, ["send", "--socket", recorder.socket, #"{"event":"hinge","angle":180}"#,
                                              #"{"event":"orientation","value":"landscapeLeft"}"#], in: scratch).status == 0)
        #expect(recorder.stop().status == 0)
        let trace = try recorder.traceFiles()[0]

        let plain = try LiveDaemon(scratch, name: "plain", ["--no-trace"])
        let refused = try runBounded(Built.crease, ["replay", trace, "--to", plain.socket, "--verify"], in: scratch).finished
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("more than the daemon's 65536-byte line limit: start creased with --max-line-bytes 131072 or more"),
                "\(refused.stderr)")
        _ = plain.stop()

        let wide = try LiveDaemon(scratch, name: "wide", ["--no-trace", "--max-line-bytes", "131072"])
        let replayed = try runBounded(Built.crease, ["replay", trace, "--to", wide.socket, "--verify"], in: scratch).finished
        #expect(replayed.status == 0 && replayed.stderr.contains("every reply's digest matches"), "\(replayed.stderr)")
        _ = wide.stop()
    }
}
