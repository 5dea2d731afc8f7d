#if canImport(Glibc)
import Glibc
#endif
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Foundation
import Testing

/// The socket's path appears only once the daemon listens on it.
@Suite struct SocketPlacementTests {
    @Test func whoeverSeesThePathCanConnect() throws {
        for round in 0..<10 {
            let dir = try makeTempDir()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let path = "\(dir)/creased.sock"
            let p = Process()
            p.executableURL = URL(fileURLWithPath: try creasedBinary())
            p.arguments = ["--socket", path, "--no-trace", "--log-level", "error"]
            p.standardError = FileHandle.nullDevice
            try p.run()
            defer { kill(p.processIdentifier, SIGTERM); p.waitUntilExit() }
            let deadline = monotonicSeconds() + 10
            while access(path, F_OK) != 0 {
                #expect(monotonicSeconds() < deadline && p.isRunning)
                if monotonicSeconds() > deadline || !p.isRunning { return }
            }
            // No sleep: the first look at the path must find a listening socket.
            let c = try Client(path)
            #expect(try c.request(#"{"cmd":"sync"}"#)["ok"] == .bool(true), "round \(round)")
            // Nothing is left beside it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["creased.sock"])
        }
    }

    @Test func stagingNamesSitBesideThePathAndFitASocketAddress() {
        #expect(SocketSetup.stagingPath(for: "/run/crease/creased.sock", pid: 42) == "/run/crease/.creased.sock.42.new")
        #expect(SocketSetup.stagingPath(for: "rel.sock", pid: 7) == ".rel.sock.7.new")
        let long = "/tmp/" + String(repeating: "d", count: 90) + "/c.sock"
        #expect(long.utf8.count < 108)
        #expect(SocketSetup.stagingPath(for: long, pid: 1234567) == nil)
    }
}
