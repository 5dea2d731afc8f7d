#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
@testable import CreaseTools
import Foundation
import Testing

@Suite struct FleetTests {
    func rows(_ out: String) -> [JSONValue] {
        out.split(separator: "\n").compactMap { try? JSON.parse(Array($0.utf8)) }
    }

    @Test func twoRealRigsThenOneKilledShowsAsDown() throws {
        let scratch = Scratch()
        let rig1 = try LiveDaemon(scratch, name: "rig1")
        let rig2 = try LiveDaemon(scratch, name: "rig2")
        let send = try runProgram(Built.crease, ["send", "--socket", rig1.socket, #"{"event":"hinge","angle":180}"#], in: scratch)
        #expect(send.status == 0, "\(send.stderr)")
        let digest1 = try DaemonConnection(path: rig1.socket).command(#"{"cmd":"sync"}"#)["digest"]
        let digest2 = try DaemonConnection(path: rig2.socket).command(#"{"cmd":"sync"}"#)["digest"]

        let before = try runProgram(Built.crease, ["fleet", scratch.path, "--json", "--interval", "0.2"], in: scratch)
        #expect(before.status == 0, "\(before.stderr)")
        let up = rows(before.stdout)
        #expect(up.map { $0["rig"] } == [.string("rig1"), .string("rig2")], "\(before.stdout)")
        #expect(up.allSatisfy { $0["status"] == .string("up") })
        #expect(up[0]["digest"] == digest1 && up[1]["digest"] == digest2)
        #expect(up[0]["pose"] == .string("fullyOpen") && up[1]["pose"] == .string("closed"), "\(before.stdout)")
        #expect(up[0]["seq"] == .number(1))

        rig2.killHard()
        let after = try runProgram(Built.crease, ["fleet", scratch.path, "--interval", "0.2"], in: scratch)
        let lines = after.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("rig") == true && lines.count == 3, "\(after.stdout)")
        #expect(lines[1].hasPrefix("rig1") && lines[1].contains(" up "))
        #expect(lines[2].hasPrefix("rig2") && lines[2].contains(" down ") && lines[2].contains("Connection refused"), "\(lines[2])")
        _ = rig1.stop()
    }

    @Test func aRigThatStopsAnsweringShowsAsDownWithinTheTimeout() throws {
        let scratch = Scratch()
        let rig = try LiveDaemon(scratch, name: "frozen")
        rig.signal(SIGSTOP)
        defer { rig.signal(SIGCONT) }
        let r = try runProgram(Built.crease, ["fleet", scratch.path, "--json", "--interval", "0.1", "--timeout", "0.5"], in: scratch)
        let rows = r.stdout.split(separator: "\n").compactMap { try? JSON.parse(Array($0.utf8)) }
        #expect(rows.count == 1, "\(r.stdout)")
        #expect(rows.first?["status"] == .string("down"))
        #expect(text(rows.first?["error"])?.contains("did not answer within 0.5 s") == true, "\(r.stdout)")
    }

    /// Issue 37: rigs were probed as many at once as there are cores, so 12 hung rigs took
    /// 10 s a round under --timeout 1. Probed in parallel, 24 silent rigs under --timeout 0.5
    /// take one timeout, where two at a time would take at least 6 s.
    @Test func hungRigsAreProbedAtOnce() throws {
        let scratch = Scratch()
        let servers = try (0..<24).map { try HostileServer(path: "\(scratch.path)/rig\($0).sock", .silent) }
        let started = Date()
        let r = try runProgram(Built.crease, ["fleet", scratch.path, "--json", "--timeout", "0.5"], in: scratch)
        let took = Date().timeIntervalSince(started)
        let rows = r.stdout.split(separator: "\n").compactMap { try? JSON.parse(Array($0.utf8)) }
        #expect(rows.count == 24 && rows.allSatisfy { $0["status"] == .string("down") }, "\(r.stdout)")
        #expect(took < 4, "24 hung rigs took \(took) s")
        withExtendedLifetime(servers) {}
    }

    func answer(events: Double, uptime: Double) -> FleetProbe.Answer {
        FleetProbe.Answer(hello: .object([("digest", .string("d"))]), state: .object([]),
                          stats: .object([("events", .number(events)), ("uptimeS", .number(uptime)),
                                          ("glitches", .object([("flapping", .number(2)), ("flash", .number(1))]))]))
    }

    @Test func ratesFromConsecutiveRoundsAndRigsThatWentAway() {
        var fleet = Fleet()
        let first = fleet.observe([FleetProbe(name: "a", path: "a.sock", answer: .success(answer(events: 10, uptime: 1)))])
        #expect(first[0].eventsPerSecond == nil)
        #expect(first[0].glitches == 3)
        let second = fleet.observe([FleetProbe(name: "a", path: "a.sock", answer: .success(answer(events: 30, uptime: 2)))])
        #expect(second[0].eventsPerSecond == 20)
        let third = fleet.observe([])
        #expect(third.map(\.status) == ["gone"])
        #expect(third[0].line.contains("its socket was removed"))
    }
}

@Suite struct StatsMetricsCommandTests {
    @Test func openMetricsAndPrometheusTextFromARealDaemon() throws {
        let scratch = Scratch()
        let d = try LiveDaemon(scratch, name: "bench-3")
        #expect(try runProgram(Built.crease, ["send", "--socket", d.socket, #"{"event":"hinge","angle":90}"#], in: scratch).status == 0)
        let om = try runProgram(Built.crease, ["stats", "--socket", d.socket, "--openmetrics"], in: scratch)
        #expect(om.status == 0 && om.stdout.hasSuffix("# EOF\n"), "\(om.stdout.suffix(100))")
        #expect(om.stdout.contains("# TYPE crease_events counter\n"))
        #expect(om.stdout.contains("crease_events_total{rig=\"bench-3\"} 1\n"))
        let text = try runProgram(Built.crease, ["stats", "--socket", d.socket, "--prometheus"], in: scratch)
        #expect(text.stdout.contains("# TYPE crease_events_total counter\n") && !text.stdout.contains("# EOF"))
        let both = try runProgram(Built.crease, ["stats", "--socket", d.socket, "--openmetrics", "--json"], in: scratch)
        #expect(both.status == 2 && both.stderr.contains("exclude each other"))
        _ = d.stop()
    }
}
