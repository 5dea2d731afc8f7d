import CreaseCore
import CreaseDaemon

/// `rtt`: an event with an id and its reply over the Unix socket, against the bare libuv
/// echo server answering the same event bytes with the bytes of a real reply, in the
/// same run: blocks of each alternate, so both see the same machine noise.
enum RTTScenario {
    static let block = 250

    /// The events: hinge readings inside one pose (what a rig sends most), each with an id.
    static func lines(count: Int) -> [[UInt8]] {
        (0..<count).map { i in
            var w = JSONWriter(capacity: 64)
            Event.hinge(angle: i % 2 == 0 ? 90.25 : 90.75).write(to: &w, id: .number(Double(i + 1)))
            w.bytes.append(0x0A)
            return w.bytes
        }
    }

    static func run(count: Int, settings: DaemonSettings, progress: Progress) throws -> ScenarioReport {
        try Children.scope { children in try measure(count: count, settings: settings, progress: progress, children: children) }
    }

    static func measure(count: Int, settings: DaemonSettings, progress: Progress, children: Children) throws -> ScenarioReport {
        var report = ScenarioReport(name: "rtt")
        progress.phase("rtt: starting creased and the echo server")
        let daemon = try DaemonSession(settings, tag: "rtt")
        _ = children.add(daemon.child)

        // One event into the pose the timed events stay in, and the reply bytes to echo.
        let first = lines(count: 1)[0]
        try daemon.publisher.send(Array(#"{"event":"hinge","angle":90,"id":0}"#.utf8) + [0x0A])
        let reply: [UInt8] = try daemon.publisher.readLine { Array($0) }
        guard (try? JSON.parse(reply))?["ok"] == .bool(true) else {
            throw CheckFailed("rtt: the daemon did not accept the first event: \(String(decoding: reply, as: UTF8.self))")
        }
        let echoSocket = "\(settings.directory.path)/echo.sock"
        _ = children.add(try BenchChild(name: "echo server", executable: settings.binaries.path("crease"),
                                        arguments: ["bench", "serve-echo", "--socket", echoSocket, "--reply", String(decoding: reply, as: UTF8.self)],
                                        socketPath: echoSocket, logPath: "\(settings.directory.path)/echo.log"))
        let echoClient = try BenchSocket(path: echoSocket)

        let events = lines(count: count)
        var daemonRTT = LatencyHistogram(budgetNs: .max)
        var echoRTT = LatencyHistogram(budgetNs: .max)
        var inDaemon = LatencyHistogram(budgetNs: UInt64(settings.budgetUs) * 1000)
        var replyBytes = (daemon: 0, echo: 0)

        // Warm both paths up, untimed.
        for line in events.prefix(200) {
            _ = try roundTrip(daemon.publisher, line) { _ in }
            _ = try roundTrip(echoClient, line) { _ in }
        }
        var done = 0
        while done < count {
            let n = min(block, count - done)
            for line in events[done..<(done + n)] {
                daemonRTT.record(try roundTrip(daemon.publisher, line) { r in
                    replyBytes.daemon = r.count
                    if let us = ReplyBytes.number(after: "\"latencyUs\":", in: r) { inDaemon.record(UInt64(us * 1000)) }
                })
            }
            for line in events[done..<(done + n)] {
                echoRTT.record(try roundTrip(echoClient, line) { r in replyBytes.echo = r.count })
            }
            done += n
            progress.update("rtt", done: done, total: count)
        }
        let stats = try daemon.stats()
        let rejected = stats.int("rejected")
        if rejected > 0 { report.problems.append("the daemon rejected \(rejected) rtt events") }

        let d = Distribution(label: "creased: event + reply", histogram: daemonRTT)
        let e = Distribution(label: "bare libuv echo", histogram: echoRTT)
        let inside = Distribution(label: "inside creased (reply latencyUs)", histogram: inDaemon, withBudget: true)
        report.setup.append("\(Format.grouped(count)) round trips each, alternating blocks of \(block) (after 200 untimed each); one client, blocking reads")
        report.setup.append("event bytes e.g. \(String(decoding: first.dropLast(), as: UTF8.self)) (a hinge tick inside one pose: no layout change)")
        report.setup.append("reply: \(replyBytes.daemon) bytes from creased, \(replyBytes.echo) from the echo server; \(settings.description)")
        report.groups.append(DistributionGroup(title: "rtt: event with id -> reply, Unix socket", rows: [d, e, inside]))
        let p50Ratio = Double(d.p50Ns) / Double(max(1, e.p50Ns))
        let p99Ratio = Double(d.p99Ns) / Double(max(1, e.p99Ns))
        report.figures.append(Figure(name: "p50 ratio creased / echo", value: p50Ratio, unit: "x"))
        report.figures.append(Figure(name: "p99 ratio creased / echo", value: p99Ratio, unit: "x"))
        report.figures.append(Figure(name: "p50 added by creased", value: (Double(d.p50Ns) - Double(e.p50Ns)) / 1000, unit: "us"))
        report.targets.append(TargetCheck(name: "rtt p50 / echo p50", measured: p50Ratio, bound: .atMost, limit: 1.5, unit: "x"))
        report.targets.append(TargetCheck(name: "rtt p99 / echo p99", measured: p99Ratio, bound: .atMost, limit: 2, unit: "x"))
        return report
    }

    /// Sends one line and reads one reply line; returns the nanoseconds in between.
    @inline(__always)
    static func roundTrip(_ socket: BenchSocket, _ line: [UInt8], _ inspect: (UnsafeRawBufferPointer) -> Void) throws -> UInt64 {
        let t0 = Clock.now()
        try socket.send(line)
        let t1 = try socket.readLine { r -> UInt64 in
            let t = Clock.now()
            inspect(r)
            return t
        }
        return t1 &- t0
    }
}
