#if canImport(Glibc)
import Glibc
#endif
import CreaseCore

/// `crease demo`: starts a real creased on a socket of its own, streams the built-in
/// session into it (unfold, rotate, Live Activities, keyboard, a tab switch, fold,
/// Split View, right-to-left) like a rig at `--rate` events per second, prints one
/// line per layout the daemon publishes, then its latency summary, and stops it with
/// SIGTERM, checking that it exits 0 and removes its socket. `--json`: the pushes as
/// sent on stdout, the narration on stderr.
enum DemoCommand {
    static let usage = "crease demo [--app builtin:NAME|FILE] [--rate HZ|max] [--json]   (default: builtin:tabs at 1000 Hz)"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let appSpec = try args.option("--app") ?? "builtin:\(BuiltinApps.defaultName)"
        guard appSpec != "-" else { throw UsageError("--app needs a file creased can read, not stdin") }
        let app = try Inputs.app(appSpec)
        let intervalNs = try interval(rate: try args.option("--rate"))
        let json = args.flag("--json")
        try args.finish()
        var demo = DemoSession(json: json, intervalNs: intervalNs)
        do {
            try demo.run(app: app, appSpec: appSpec)
            return ExitStatus.success
        } catch is DemoSession.OutputClosed {
            return 141  // as if by SIGPIPE, once the daemon is stopped and its directory gone
        } catch {
            Console.err("crease demo: \(error)")
            return ExitStatus.checkFailed
        }
    }

    /// Nanoseconds between events: `--rate HZ` (default 1000, a rig's hinge encoder), `max` for none.
    static func interval(rate: String?) throws -> UInt64 {
        guard let rate else { return 1_000_000 }
        if rate == "max" { return 0 }
        guard let hz = Double(rate), hz.isFinite, hz > 0, hz <= 1_000_000 else {
            throw UsageError("--rate takes events per second (0 < HZ <= 1000000) or max, not \"\(rate)\"")
        }
        return UInt64((1e9 / hz).rounded())
    }
}

/// One run of the demo against its own creased.
struct DemoSession {
    /// Whoever read stdout went away (`crease demo | head`).
    struct OutputClosed: Error {}

    let json: Bool
    let intervalNs: UInt64
    private var rejected = 0
    private var syncs = 0

    init(json: Bool, intervalNs: UInt64) {
        self.json = json
        self.intervalNs = intervalNs
    }

    /// Narration: stdout, or stderr when stdout carries the raw pushes.
    private func say(_ s: String) throws {
        if json { Console.err(s) } else { try show(Array(s.utf8)) }
    }

    private func show(_ bytes: [UInt8]) throws {
        guard Console.line(bytes, to: 1) else { throw OutputClosed() }
    }

    mutating func run(app: App, appSpec: String) throws {
        let daemon = try LocalDaemon(executable: try LocalDaemon.besideSelf(), arguments: ["--no-trace", "--app", appSpec])
        // Interrupted, the demo stops its daemon the regular way and still cleans up.
        SignalForwarding.start(to: daemon.pid)
        defer { SignalForwarding.stop() }

        let watcher = try daemon.connect()
        let hello = try watcher.command(#"{"cmd":"hello","id":"hello"}"#)
        try say("crease demo: \(text(hello["daemon"])) (pid \(daemon.pid)) on \(daemon.socketPath)")
        try say("app \"\(text(hello["app"]))\" on \(text(hello["profile"])), latency budget \(text(hello["budgetUs"])) us; "
            + (intervalNs == 0 ? "events as fast as the socket takes them" : "one event every \(Double(intervalNs / 1000) / 1000) ms"))
        try watcher.writeLine(#"{"cmd":"subscribe","topics":["layout"],"id":"subscribe"}"#)
        try say("-- subscribed: the layout as the daemon starts")
        try drain(watcher)
        let publisher = try daemon.connect()

        // The layouts the daemon computes, computed here too, so the demo can show the rig's side.
        var mirror = Engine(profile: .builtin, app: app)
        let start = DemoClock.now()
        var next = start
        for step in DemoScript.steps(for: app) {
            if let caption = step.caption { try say("-- \(caption)") }
            for event in step.events {
                _ = try? mirror.apply(event)
                var w = JSONWriter()
                event.write(to: &w, ts: Int64(DemoClock.now() &- start))
                w.bytes.append(0x0A)
                try publisher.write(w.bytes)
                next += intervalNs
                try showPushes(from: watcher, until: next)
            }
            // Everything sent is applied and published once the publisher's sync is
            // answered, and every push is on the watcher's socket once its own is.
            try drain(publisher)
            try drain(watcher)
        }
        if rejected > 0 { throw LocalDaemon.Failure(description: "creased rejected \(rejected) of the demo's events") }
        try observations(publisher: publisher, watcher: watcher, mirror: &mirror)

        try say("-- latency, from creased's stats (read to layout queued to every subscriber)")
        let stats = try publisher.command(#"{"cmd":"stats","id":"stats"}"#)
        guard let s = stats["stats"] else { throw LocalDaemon.Failure(description: "creased answered stats with \(line(stats))") }
        try say(StatsText.render(s))

        try say("-- stop creased with SIGTERM")
        publisher.close()
        daemon.signal(SIGTERM)
        try awaitShutdown(watcher)
        guard let exit = daemon.waitForExit(timeout: 10) else {
            throw LocalDaemon.Failure(description: "creased did not exit within 10 s of SIGTERM\(daemon.logTail())")
        }
        guard exit == .status(0) else { throw LocalDaemon.Failure(description: "creased ended with \(exit)\(daemon.logTail())") }
        guard access(daemon.socketPath, F_OK) != 0 else {
            throw LocalDaemon.Failure(description: "creased exited but left its socket \(daemon.socketPath)")
        }
        try say("creased pushed shutdown, exited 0 and removed its socket")
    }

    /// A rig looks at the device three times: it shows the current layout (match), it has
    /// not caught up with a rotation yet (stale), one control sits 30 pt too low (mismatch).
    private mutating func observations(publisher: DaemonConnection, watcher: DaemonConnection, mirror: inout Engine) throws {
        try say("-- a rig compares the device with the layout: one observation of each verdict")
        let shown = mirror.layout
        try observe(Observation(describing: shown), on: publisher, id: "observe-match")
        let turn = Event.orientation(mirror.state.orientation == .portrait ? .landscapeLeft : .portrait)
        try publisher.writeLine(String(decoding: turn.jsonBytes(), as: UTF8.self))
        _ = try? mirror.apply(turn)
        try drain(publisher)
        try drain(watcher)
        try observe(Observation(describing: shown), on: publisher, id: "observe-stale")
        var wrong = Observation(describing: mirror.layout)
        if let i = wrong.items?.firstIndex(where: { $0.frame != nil }) { wrong.items![i].frame!.y += 30 }
        try observe(wrong, on: publisher, id: "observe-mismatch")
    }

    private func observe(_ observation: Observation, on c: DaemonConnection, id: String) throws {
        let request = ObserveRequest(observed: observation, id: .string(id))
        let reply = try c.command(String(decoding: request.jsonBytes(), as: UTF8.self))
        guard case .string(let verdict)? = reply["verdict"] else {
            throw LocalDaemon.Failure(description: "creased answered an observation with \(line(reply))")
        }
        // The replies are not pushes: with --json they go with the narration, to stderr.
        if json { return try say(String(decoding: JSONWriter.encode(reply), as: UTF8.self)) }
        var text = "observe  \(verdict.padding(toLength: 8, withPad: " ", startingAt: 0))  against seq \(text(reply["layoutSeq"]))"
        if verdict == "stale", let m = reply["matchedSeq"] { text += ": the device still shows seq \(self.text(m))" }
        if case .array(let differences)? = reply["differences"], !differences.isEmpty {
            let first = differences[0]
            text += verdict == "stale" ? " (\(differences.count) fields differ)"
                : ": \(self.text(first["path"])) expected \(self.text(first["expected"])), observed \(self.text(first["observed"]))"
        }
        try say(text)
    }

    /// Sends `sync` on `c` and handles every line before its reply: layout pushes are
    /// shown, rejected events counted.
    private mutating func drain(_ c: DaemonConnection) throws {
        syncs += 1
        let id = "sync-\(syncs)"
        try c.writeLine("{\"cmd\":\"sync\",\"id\":\"\(id)\"}")
        while true {
            guard let raw = try c.readLine(timeout: 10) else { throw LocalDaemon.Failure(description: "creased closed the connection") }
            let v = try parse(raw)
            if v["id"] == .string(id) { return }
            try handle(v, raw: raw)
        }
    }

    /// Shows what reaches the watcher until the monotonic clock passes `deadline`.
    private mutating func showPushes(from c: DaemonConnection, until deadline: UInt64) throws {
        while true {
            while let raw = c.bufferedLine() { try handle(try parse(raw), raw: raw) }
            let now = DemoClock.now()
            guard now < deadline else { return }
            var p = pollfd(fd: c.fd, events: Int16(POLLIN), revents: 0)
            let ms = Int32((deadline - now) / 1_000_000)
            if ms == 0 {
                DemoClock.sleep(until: deadline)
                continue
            }
            if poll(&p, 1, ms) > 0, !(try c.fill()) { throw LocalDaemon.Failure(description: "creased closed the connection") }
        }
    }

    private mutating func handle(_ v: JSONValue, raw: [UInt8]) throws {
        if v["ok"] == .bool(false) {
            rejected += 1
            Console.err("crease demo: creased rejected an event: \(String(decoding: raw, as: UTF8.self))")
            return
        }
        switch v["push"] {
        case .string("layout")?:
            try show(json ? raw : Array(LayoutSummary.line(push: v).utf8))
        case .string("shutdown")?:
            if json { try show(raw) }
            throw LocalDaemon.Failure(description: "creased shut down before the demo finished")
        default:
            break
        }
    }

    /// After SIGTERM: the watcher gets `{"push":"shutdown"}`, then the end of the stream.
    private func awaitShutdown(_ c: DaemonConnection) throws {
        var pushed = false
        while let raw = try c.readLine(timeout: 10) {
            let v = try parse(raw)
            if v["push"] == .string("shutdown") {
                pushed = true
                if json { try show(raw) }
            }
        }
        guard pushed else { throw LocalDaemon.Failure(description: "creased closed the watcher's connection without a shutdown push") }
    }

    private func parse(_ raw: [UInt8]) throws -> JSONValue {
        guard let v = try? JSON.parse(raw) else {
            throw LocalDaemon.Failure(description: "creased sent a line that is not JSON: \(String(decoding: raw.prefix(200), as: UTF8.self))")
        }
        return v
    }

    private func text(_ v: JSONValue?) -> String {
        switch v {
        case .string(let s)?: s
        case let other?: line(other)
        case nil: "-"
        }
    }

    private func line(_ v: JSONValue) -> String { String(decoding: JSONWriter.encode(v), as: UTF8.self) }
}

/// The monotonic clock the demo paces its events by.
enum DemoClock {
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func sleep(until deadline: UInt64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// SIGINT, SIGTERM and SIGHUP to `crease demo` become SIGTERM to its daemon, which
/// then shuts down as it should; the demo sees the shutdown push, reports it and
/// removes its temporary directory.
enum SignalForwarding {
    nonisolated(unsafe) private static var target: pid_t = 0
    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    static func start(to pid: pid_t) {
        target = pid
        for s in signals {
            signal(s) { _ in
                if SignalForwarding.target > 0 { kill(SignalForwarding.target, SIGTERM) }
            }
        }
    }

    static func stop() {
        for s in signals { signal(s, SIG_DFL) }
        target = 0
    }
}

/// The demo's event script: what `crease demo` streams into creased.
public enum DemoScript {
    public struct Step {
        public var caption: String?
        public var events: [Event]
    }

    /// A noisy hinge sweep: the rig's encoder jitters by ±1.5° around each step.
    static func sweep(from a: Double, to b: Double, steps: Int) -> [Event] {
        (0...steps).map { i in
            let t = Double(i) / Double(steps)
            let jitter = [0.0, 1.5, -1.2, 0.7, -1.5, 1.1][i % 6]
            return .hinge(angle: min(180, max(0, a + (b - a) * t + jitter)))
        }
    }

    public static func steps(for app: App) -> [Step] {
        var s: [Step] = [
            Step(caption: "unfold slowly, with encoder noise around the thresholds", events: sweep(from: 0, to: 180, steps: 90)),
            Step(caption: "rotate the open device to landscape", events: [.orientation(.landscapeLeft)]),
            Step(caption: "three Live Activities arrive", events: [.liveActivities(count: 1), .liveActivities(count: 2), .liveActivities(count: 3)]),
            Step(caption: "keyboard up, then down", events: [.keyboard(visible: true, height: nil), .keyboard(visible: false, height: nil)]),
            Step(caption: "Picture in Picture", events: [.pip(active: true), .pip(active: false)]),
        ]
        if case .tabView(let t) = app.containers[app.root], t.tabs.count > 1 {
            s.append(Step(caption: "switch to a task screen", events: [.select(tab: t.tabs[1].id)]))
        }
        s += [
            Step(caption: "fold shut and hold the outer display in landscape", events: sweep(from: 180, to: 0, steps: 30) + [.orientation(.landscapeRight)]),
            Step(caption: "keyboard on the outer display in landscape", events: [.keyboard(visible: true, height: nil), .keyboard(visible: false, height: nil)]),
            Step(caption: "back to portrait, open flat, Split View on each side", events: [.orientation(.portrait), .hinge(angle: 180), .orientation(.landscapeLeft),
                                                                                          .splitView(.left), .splitView(.right), .splitView(.none)]),
            // Its own step, so the right-to-left layout is published before left-to-right
            // returns: paced events a loaded machine reads together are applied as one batch.
            Step(caption: "right-to-left", events: [.layoutDirection(.rtl)]),
            Step(caption: "and back to left-to-right", events: [.layoutDirection(.ltr)]),
            Step(caption: "Reduce Transparency", events: [.reduceTransparency(enabled: true), .reduceTransparency(enabled: false)]),
        ]
        return s
    }
}
