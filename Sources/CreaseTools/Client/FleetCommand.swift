#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation

/// `crease fleet [DIR]`: every rig whose socket is in DIR (default /run/crease), one line
/// each, refreshed in place on a terminal; plain lines (or `--json`) when piped. A rig
/// that does not answer is shown as down, and one whose socket went away as gone.
enum FleetCommand {
    static let usage = """
        crease fleet [DIR] [--json] [--interval S] [--count N] [--timeout S]
          DIR          where the rigs' sockets are (default /run/crease): every NAME.sock is rig NAME
          --json       one JSON object per rig and round
          --interval S seconds between rounds (default 1); events/s is measured over it
          --count N    rounds to show (default: until interrupted on a terminal, 1 when piped)
          --timeout S  how long a rig may take to answer before it is shown as down (default 2)
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let json = args.flag("--json")
        let interval = try args.double("--interval") ?? 1
        let count = try args.int("--count")
        let timeout = args.has("--timeout") ? try args.timeout() : 2
        let directory = args.positional() ?? "/run/crease"
        try args.finish()
        guard interval > 0 else { throw UsageError("--interval must be above 0") }
        if let count, count < 1 { throw UsageError("--count must be at least 1") }
        let live = isatty(1) == 1 && !json
        let rounds = count ?? (live ? Int.max : 1)
        var fleet = Fleet()
        var shownLines = 0
        // The first round needs a sample before it to measure events/s. The interval runs
        // from the start of the round before: a rig slow to answer eats into it, not past it.
        var roundStart = Clock.seconds()
        fleet.observe(probeAll(in: directory, timeout: timeout))
        for round in 0..<rounds {
            let wait = roundStart + interval - Clock.seconds()
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
            roundStart = Clock.seconds()
            let rows = fleet.observe(probeAll(in: directory, timeout: timeout))
            if json {
                for r in rows { Console.out(bytes: JSONWriter.encode(r.json)) }
                continue
            }
            var lines = [FleetRow.header] + rows.map(\.line)
            if rows.isEmpty { lines.append("no rig sockets in \(directory)") }
            var text = lines.joined(separator: "\n")
            if live {
                // Back to the first line of the previous round, then clear below it.
                if shownLines > 0 { text = "\u{1B}[\(shownLines)A\u{1B}[J" + text }
                shownLines = lines.count
            } else if round > 0 {
                text = "\n" + text
            }
            Console.out(text)
        }
        return ExitStatus.success
    }

    /// The rigs' sockets in `directory`: (name, path), sorted by name.
    static func sockets(in directory: String) -> [(name: String, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".sock") }.sorted().compactMap { name in
            let path = "\(directory)/\(name)"
            var st = stat()
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK else { return nil }
            return (String(name.dropLast(5)), path)
        }
    }

    /// How many rigs are probed at once.
    static let parallelProbes = 128

    /// Every rig at once, so a round takes at most `timeout` however many rigs are down.
    static func probeAll(in directory: String, timeout: Double) -> [FleetProbe] {
        let rigs = sockets(in: directory)
        let probes = ProbeResults(count: rigs.count)
        // A thread per rig (a probe mostly waits on a socket): concurrentPerform ran as many at
        // once as there are cores, so 12 hung rigs on 2 cores took 6 timeouts a round. Up to
        // `parallelProbes` at once; a larger lab takes a few timeouts a round at most.
        let done = DispatchSemaphore(value: 0)
        let slots = DispatchSemaphore(value: parallelProbes)
        for i in rigs.indices {
            slots.wait()
            let thread = Thread {
                probes.set(i, probe(name: rigs[i].name, path: rigs[i].path, timeout: timeout))
                slots.signal()
                done.signal()
            }
            thread.stackSize = 256 << 10
            thread.start()
        }
        for _ in rigs.indices { done.wait() }
        return probes.all
    }

    /// `hello`, `state` and `stats` from one rig, written at once and read back in order.
    static func probe(name: String, path: String, timeout: Double) -> FleetProbe {
        // One deadline for the whole probe: connect, write and the three replies.
        let deadline = Clock.seconds() + timeout
        do {
            let conn = try DaemonConnection(path: path, timeout: timeout)
            defer { conn.close() }
            try conn.write(Array("{\"cmd\":\"hello\",\"id\":1}\n{\"cmd\":\"state\",\"id\":2}\n{\"cmd\":\"stats\",\"id\":3}\n".utf8))
            var replies: [JSONValue] = []
            while replies.count < 3 {
                guard let line = try conn.readLine(until: deadline, waited: timeout) else { throw DaemonConnection.Failure(description: "closed the connection") }
                guard let v = try? JSON.parse(line) else { throw DaemonConnection.Failure(description: "sent a line that is not JSON") }
                if v["push"] == nil { replies.append(v) }
            }
            guard replies.allSatisfy({ $0["ok"] == .bool(true) }) else {
                let refused = replies.first { $0["ok"] != .bool(true) }?["error"]?["message"]
                throw DaemonConnection.Failure(description: refused.map { "refused: \(String(decoding: JSONWriter.encode($0), as: UTF8.self))" } ?? "refused")
            }
            return FleetProbe(name: name, path: path, answer: .success(FleetProbe.Answer(hello: replies[0], state: replies[1]["state"] ?? .null,
                                                                                          stats: replies[2]["stats"] ?? .null)))
        } catch {
            return FleetProbe(name: name, path: path, answer: .failure(FleetProbe.Failure(message: "\(error)")))
        }
    }
}

/// The round's probes, filled in from several threads.
private final class ProbeResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [FleetProbe?]
    init(count: Int) { results = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ p: FleetProbe) { lock.lock(); results[i] = p; lock.unlock() }
    var all: [FleetProbe] { lock.lock(); defer { lock.unlock() }; return results.compactMap { $0 } }
}

/// What one rig said, or why it said nothing.
struct FleetProbe {
    struct Answer {
        var hello: JSONValue
        var state: JSONValue
        var stats: JSONValue
    }
    struct Failure: Error { var message: String }
    var name: String
    var path: String
    var answer: Result<Answer, Failure>
}

/// The rigs seen so far and their last counters, to turn probes into rows. Pure.
struct Fleet {
    private var last: [String: (events: Double, uptime: Double)] = [:]
    private var seen: [String] = []

    /// Rows for this round: every rig probed, and rigs seen before whose socket is gone.
    @discardableResult
    mutating func observe(_ probes: [FleetProbe]) -> [FleetRow] {
        var rows: [FleetRow] = []
        for p in probes {
            if !seen.contains(p.name) { seen.append(p.name) }
            switch p.answer {
            case .failure(let f):
                rows.append(FleetRow(name: p.name, status: "down", detail: f.message))
            case .success(let a):
                var row = FleetRow(name: p.name, status: "up", answer: a)
                let events = a.stats["events"]?.number ?? 0, uptime = a.stats["uptimeS"]?.number ?? 0
                if let before = last[p.name], uptime > before.uptime, events >= before.events {
                    row.eventsPerSecond = (events - before.events) / (uptime - before.uptime)
                }
                last[p.name] = (events, uptime)
                rows.append(row)
            }
        }
        for name in seen where !probes.contains(where: { $0.name == name }) {
            rows.append(FleetRow(name: name, status: "gone", detail: "its socket was removed"))
        }
        return rows.sorted { $0.name < $1.name }
    }
}

/// One rig's line. Counters the daemon does not report (an older creased without glitch
/// or observation counts) are nil, shown as `-`.
struct FleetRow {
    var name: String
    var status: String
    var detail: String?
    var labels: JSONValue = .object([])
    var pose: String?
    var display: String?
    var seq: Double?
    var digest: String?
    var eventsPerSecond: Double?
    var p99Us: Double?
    var overBudget: Double?
    var glitches: Double?
    var mismatches: Double?
    var subscribers: Double?

    init(name: String, status: String, detail: String) {
        self.name = name
        self.status = status
        self.detail = detail
    }

    init(name: String, status: String, answer a: FleetProbe.Answer) {
        self.name = name
        self.status = status
        labels = a.stats["labels"] ?? a.hello["labels"] ?? .object([])
        // The `state` reply's member is {"seq", "state": {...}}.
        let device = a.state["state"] ?? a.state
        pose = device["pose"]?.string
        display = device["display"]?.string
        seq = a.hello["seq"]?.number
        digest = a.hello["digest"]?.string
        p99Us = a.stats["latency"]?["p99Us"]?.number
        overBudget = a.stats["latency"]?["overBudget"]?.number
        glitches = FleetRow.total(a.stats["glitches"])
        mismatches = a.stats["observations"]?["mismatch"]?.number
        subscribers = a.stats["subscribers"]?.number
    }

    /// The sum of an object of counts by kind (`stats.glitches`).
    static func total(_ v: JSONValue?) -> Double? {
        guard case .object(let members)? = v else { return nil }
        return members.compactMap { $0.1.number }.reduce(0, +)
    }

    var labelText: String {
        guard case .object(let members) = labels, !members.isEmpty else { return "-" }
        return members.map { "\($0.0)=\($0.1.string ?? String(decoding: JSONWriter.encode($0.1), as: UTF8.self))" }.joined(separator: ",")
    }

    static let columns = [("rig", 10), ("status", 6), ("pose", 22), ("digest", 16), ("events/s", 9), ("p99 us", 8),
                          ("over", 6), ("glitch", 6), ("mism", 6), ("subs", 4), ("labels", 0)]

    static func format(_ cells: [String]) -> String {
        zip(cells, columns).map { c, col in col.1 == 0 ? c : c.padding(toLength: max(col.1, c.count), withPad: " ", startingAt: 0) }
            .joined(separator: " ")
    }

    static let header = format(columns.map(\.0))

    var line: String {
        guard status == "up" else { return FleetRow.format([name, status]) + " " + (detail ?? "") }
        func n(_ v: Double?, decimals: Int = 0) -> String {
            guard let v else { return "-" }
            return decimals == 0 ? String(Int(v.rounded())) : String(format: "%.\(decimals)f", v)
        }
        let where_ = [pose, display].compactMap { $0 }.joined(separator: "/")
        return FleetRow.format([name, status, where_.isEmpty ? "-" : where_, digest ?? "-", n(eventsPerSecond, decimals: 1),
                                n(p99Us, decimals: 1), n(overBudget), n(glitches), n(mismatches), n(subscribers), labelText])
    }

    var json: JSONValue {
        func num(_ v: Double?) -> JSONValue { v.map { .number(($0 * 10).rounded() / 10) } ?? .null }
        func str(_ v: String?) -> JSONValue { v.map { .string($0) } ?? .null }
        return .object([
            ("rig", .string(name)), ("status", .string(status)), ("error", str(detail)), ("labels", labels),
            ("pose", str(pose)), ("display", str(display)), ("seq", num(seq)), ("digest", str(digest)),
            ("eventsPerS", num(eventsPerSecond)), ("p99Us", num(p99Us)), ("overBudget", num(overBudget)),
            ("glitches", num(glitches)), ("mismatches", num(mismatches)), ("subscribers", num(subscribers)),
        ])
    }
}

extension JSONValue {
    var number: Double? { if case .number(let n) = self { n } else { nil } }
    var string: String? { if case .string(let s) = self { s } else { nil } }
}
