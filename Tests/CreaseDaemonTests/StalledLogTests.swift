#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import CreaseTestSupport
import Testing

/// creased with its stderr on a pipe nobody reads: logging must never stall the loop.

/// A creased whose stderr is a pipe the test reads only when it chooses to.
final class StderrPipeDaemon {
    let process = Process()
    let dir: String
    let socketPath: String
    let stderr = Pipe()

    init() throws {
        dir = try makeTempDir()
        socketPath = dir + "/creased.sock"
        process.executableURL = URL(fileURLWithPath: try creasedBinary())
        process.arguments = ["--socket", socketPath, "--log-level", "debug", "--no-trace"]
        var env = ProcessInfo.processInfo.environment
        for k in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC", "JOURNAL_STREAM"] { env[k] = nil }
        process.environment = env
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let started = pollUntil(timeout: 10) { (try? Client(socketPath)) != nil || !process.isRunning }
        guard started, process.isRunning else { throw HarnessError("creased did not start") }
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Floods the log: every bad line is answered and logged (debug). Each round's
    /// event reply must still come back within `limit` seconds.
    func flood(_ c: Client, rounds: Int, limit: Double) throws -> Double {
        var worst = 0.0
        for round in 0..<rounds {
            let t0 = monotonicSeconds()
            c.send(String(repeating: "{bad\n", count: 500))
            c.sendLine("{\"event\":\"keyboard\",\"visible\":\(round % 2 == 0),\"id\":\"r\(round)\"}")
            while true {
                let r = try c.readJSON(timeout: limit)
                if r["id"] == .string("r\(round)") { break }
            }
            worst = max(worst, monotonicSeconds() - t0)
        }
        return worst
    }

    /// What stderr holds now, up to `until` appearing (or `timeout` passing).
    func readStderr(until marker: String, timeout: Double = 5) -> String {
        let fd = stderr.fileHandleForReading.fileDescriptor
        var out: [UInt8] = []
        let deadline = monotonicSeconds() + timeout
        var chunk = [UInt8](repeating: 0, count: 65536)
        while monotonicSeconds() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { break }
            out += chunk[0..<n]
            if String(decoding: out, as: UTF8.self).contains(marker) { break }
        }
        return String(decoding: out, as: UTF8.self)
    }

    func waitForExit(timeout: Double) -> Int32? {
        pollUntil(timeout: timeout) { !process.isRunning }
        return process.isRunning ? nil : process.terminationStatus
    }
}

@Suite(.serialized) struct StalledLogTests {
    @Test func eventsFlowWhileStderrIsStalledAndTheGapIsReportedInPlace() throws {
        let d = try StderrPipeDaemon()
        let c = try Client(d.socketPath)
        // 10,000 log lines, far more than the pipe (64 KiB) and the log queue hold.
        let worst = try d.flood(c, rounds: 20, limit: 5)
        #expect(worst < 1.0, "slowest round \(worst) s")
        let stats = try #require(try c.request(#"{"cmd":"stats","id":"s"}"#)["stats"])
        #expect(stats["events"] == .number(20))
        let dropped = try #require(stats["logDroppedLines"]?.int)
        #expect(dropped > 0)

        // Once somebody reads, the queue drains and the gap is named where it was;
        // lines logged afterwards follow it.
        var text = d.readStderr(until: "stderr was not being read")
        c.sendLine(#"{"cmd":"mark","label":"after the stall","id":"m"}"#)
        #expect(try c.readJSON()["id"] == .string("m"))
        text += d.readStderr(until: "after the stall")
        let lines = text.split(separator: "\n")
        let notice = try #require(lines.firstIndex { $0.contains("log lines dropped: stderr was not being read") }, "\(text.suffix(2000))")
        let mark = try #require(lines.firstIndex { $0.contains("mark at seq 20: after the stall") })
        #expect(notice < mark)
        #expect(lines[notice] == "creased: warning: \(dropped) log lines dropped: stderr was not being read")
        #expect(lines[..<notice].contains { $0.contains("rejected") })
        #expect(lines.allSatisfy { $0.hasPrefix("creased: ") }, "no line is cut or interleaved")

        kill(d.process.processIdentifier, SIGTERM)
        let rest = d.readStderr(until: "stopped after 20 events")
        #expect(rest.contains("stopped after 20 events"))
        #expect(d.waitForExit(timeout: 5) == 0)
    }

    @Test func aStalledStderrDoesNotHoldTheExit() throws {
        let d = try StderrPipeDaemon()
        let c = try Client(d.socketPath)
        _ = try d.flood(c, rounds: 10, limit: 5)
        let t0 = monotonicSeconds()
        kill(d.process.processIdentifier, SIGTERM)
        #expect(d.waitForExit(timeout: 5) == 0)
        #expect(monotonicSeconds() - t0 < 2.0)
    }
}
