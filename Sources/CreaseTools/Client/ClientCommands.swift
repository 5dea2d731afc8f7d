#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation

extension CLI {
    /// `crease send`, `crease watch`, `crease stats`: the commands that talk to a running creased.
    static let clientCommands: [Command] = [
        Command(name: "send", usage: SendCommand.usage, summary: "send events to creased and print its replies", run: SendCommand.run),
        Command(name: "watch", usage: WatchCommand.usage, summary: "one line per layout creased publishes", run: WatchCommand.run),
        Command(name: "stats", usage: StatsCommand.usage, summary: "creased's latency histogram and counters (--openmetrics for Prometheus)", run: StatsCommand.run),
        Command(name: "fleet", usage: FleetCommand.usage, summary: "every rig in /run/crease (or DIR), one live line each", run: FleetCommand.run),
    ]
}

/// `crease send [--socket PATH] [--quiet] [EVENT_JSON...]`: events (or commands) from
/// the arguments, else one per line from stdin. Events without an `"id"` get one, so
/// each is answered; replies print as they come. Exit 0 when all were accepted, 2
/// when the daemon rejected any, 1 when the daemon could not be reached.
enum SendCommand {
    static let usage = "crease send [--socket PATH] [--quiet] [--timeout S] [EVENT_JSON...]   (no events: one per line from stdin)"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let socket = try args.option("--socket")
        let quiet = args.flag("--quiet")
        let timeout = try args.timeout()
        let lines = args.remainingPositionals().filter { $0 != "-" }
        try args.finish()
        var session = SendSession()
        do {
            try send(lines, socket: socket, timeout: timeout, quiet: quiet, session: &session)
        } catch {
            Console.err("crease send: \(error)")
            return ExitStatus.checkFailed
        }
        if session.rejected > 0 {
            Console.err("crease send: \(session.rejected) of \(session.sent) rejected")
            return ExitStatus.usage
        }
        return ExitStatus.success
    }

    private static func send(_ lines: [String], socket: String?, timeout: Double, quiet: Bool, session: inout SendSession) throws(DaemonConnection.Failure) {
        let conn = try DaemonConnection(path: DaemonConnection.defaultPath(explicit: socket), timeout: timeout)
        if lines.isEmpty {
            try pump(stdin: 0, conn: conn, session: &session, quiet: quiet)
            return
        }
        var out: [UInt8] = []
        for l in lines { out += session.prepare(l) }
        out += session.finish()
        try conn.write(out)
        try drain(conn, &session, quiet: quiet)
    }

    /// Reads replies until the closing sync is answered, each within the timeout.
    private static func drain(_ conn: DaemonConnection, _ session: inout SendSession, quiet: Bool) throws(DaemonConnection.Failure) {
        while !session.done {
            guard let line = try conn.readLine(timeout: conn.timeout) else { throw DaemonConnection.Failure(description: "creased closed the connection") }
            if session.receive(line), !quiet { Console.out(bytes: line) }
        }
    }

    /// Streams stdin to the daemon while printing replies, so neither side blocks the other.
    private static func pump(stdin: Int32, conn: DaemonConnection, session: inout SendSession, quiet: Bool) throws(DaemonConnection.Failure) {
        var framer = LineSplitter()
        var outgoing: [UInt8] = []
        var inputOpen = true
        var chunk = [UInt8](repeating: 0, count: 65536)
        // While lines wait for their replies (or for the daemon to take them), the daemon must
        // show progress within the timeout; waiting on stdin alone has no deadline.
        var lastProgress = Clock.seconds()
        while !session.done {
            var fds = [pollfd(fd: conn.fd, events: Int16(POLLIN), revents: 0)]
            if inputOpen && outgoing.count < 1 << 20 { fds.append(pollfd(fd: stdin, events: Int16(POLLIN), revents: 0)) }
            if !outgoing.isEmpty { fds[0].events |= Int16(POLLOUT) }
            let awaiting = !outgoing.isEmpty || session.owed > 0
            if !awaiting { lastProgress = Clock.seconds() }
            let left = lastProgress + conn.timeout - Clock.seconds()
            if awaiting, left <= 0 { throw DaemonConnection.Failure(description: "creased did not answer within \(Clock.text(conn.timeout))") }
            let ready = poll(&fds, nfds_t(fds.count), awaiting ? Int32((left * 1000).rounded(.up)) : -1)
            if ready < 0 { if errno == EINTR { continue }; break }
            if ready == 0 { continue }
            if fds[0].revents != 0 { lastProgress = Clock.seconds() }
            if fds.count > 1, fds[1].revents != 0 {
                let n = read(stdin, &chunk, chunk.count)
                if n > 0 {
                    for line in framer.push(chunk[0..<n]) { outgoing += session.prepare(line) }
                } else {
                    if let last = framer.rest() { outgoing += session.prepare(last) }
                    outgoing += session.finish()
                    inputOpen = false
                }
            }
            if fds[0].revents & Int16(POLLOUT) != 0, !outgoing.isEmpty {
                let n = outgoing.withUnsafeBytes { Glibc.send(conn.fd, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
                if n > 0 { outgoing.removeFirst(n) } else if n < 0, errno != EAGAIN, errno != EINTR {
                    throw DaemonConnection.Failure(description: "write to creased: \(String(cString: strerror(errno)))")
                }
            }
            if fds[0].revents & Int16(POLLIN | POLLHUP) != 0 {
                let open = try conn.fill()
                while let line = conn.bufferedLine() {
                    if session.receive(line), !quiet { Console.out(bytes: line) }
                }
                if !open && !session.done { throw DaemonConnection.Failure(description: "creased closed the connection") }
            }
        }
    }
}

/// What `crease send` sent and what came back. Pure.
struct SendSession {
    static let syncID = "crease-send-done"
    private(set) var sent = 0
    private(set) var rejected = 0
    private(set) var done = false
    private var next = 1

    /// Lines sent whose reply has not come yet (every line sent is answered once: an event
    /// without an id is given one).
    private(set) var owed = 0

    /// The bytes to send for one input line: an event without an id gets one.
    mutating func prepare(_ line: String) -> [UInt8] {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return [] }
        sent += 1
        owed += 1
        guard let v = try? JSON.parse(Array(trimmed.utf8)), case .object(var members) = v,
              v["event"] != nil, v["id"] == nil else {
            return Array((trimmed + "\n").utf8)
        }
        members.append(("id", .number(Double(next))))
        next += 1
        var w = JSONWriter()
        w.value(.object(members))
        return w.bytes + [0x0A]
    }

    /// The closing `sync`: its reply means every earlier line was answered.
    mutating func finish() -> [UInt8] {
        owed += 1
        return Array("{\"cmd\":\"sync\",\"id\":\"\(Self.syncID)\"}\n".utf8)
    }

    /// One reply line; returns whether to print it.
    mutating func receive(_ line: [UInt8]) -> Bool {
        guard let v = try? JSON.parse(line) else { return true }
        if v["push"] == nil { owed = max(0, owed - 1) }
        if v["id"] == .string(Self.syncID) { done = true; return false }
        if v["ok"] == .bool(false) { rejected += 1 }
        return v["push"] == nil
    }
}

/// Splits stdin into lines.
struct LineSplitter {
    private var partial: [UInt8] = []

    mutating func push(_ bytes: ArraySlice<UInt8>) -> [String] {
        var lines: [String] = []
        var start = bytes.startIndex
        for i in bytes.indices where bytes[i] == 0x0A {
            partial += bytes[start..<i]
            lines.append(String(decoding: partial, as: UTF8.self))
            partial.removeAll(keepingCapacity: true)
            start = i + 1
        }
        partial += bytes[start...]
        return lines
    }

    mutating func rest() -> String? {
        defer { partial = [] }
        return partial.isEmpty ? nil : String(decoding: partial, as: UTF8.self)
    }
}

/// `crease watch [--socket PATH] [--json] [--count N]`: subscribes to layouts (and
/// diagnostics) and prints one line per change; `--json` prints the pushes as sent.
enum WatchCommand {
    static let usage = "crease watch [--socket PATH] [--json] [--count N] [--timeout S]   (S bounds the subscription; pushes are awaited for ever)"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let socket = try args.option("--socket")
        let json = args.flag("--json")
        let count = try args.int("--count")
        let timeout = try args.timeout()
        try args.finish()
        do {
            let conn = try DaemonConnection(path: DaemonConnection.defaultPath(explicit: socket), timeout: timeout)
            let reply = try conn.command(#"{"cmd":"subscribe","topics":["layout"],"id":"watch"}"#)
            guard reply["ok"] == .bool(true) else {
                Console.err("crease watch: \(String(decoding: JSONWriter.encode(reply), as: UTF8.self))")
                return ExitStatus.checkFailed
            }
            var shown = 0
            while count.map({ shown < $0 }) ?? true {
                guard let line = try conn.readLine() else {
                    Console.err("crease watch: creased closed the connection")
                    return ExitStatus.checkFailed
                }
                guard let v = try? JSON.parse(line), let topic = v["push"] else { continue }
                if topic == .string("shutdown") {
                    if !json { Console.out("creased is shutting down") } else { Console.out(bytes: line) }
                    return ExitStatus.success
                }
                guard topic == .string("layout") else { continue }
                Console.out(json ? String(decoding: line, as: UTF8.self) : LayoutSummary.line(push: v))
                shown += 1
            }
            return ExitStatus.success
        } catch {
            Console.err("crease watch: \(error)")
            return ExitStatus.checkFailed
        }
    }
}

/// `crease stats [--socket PATH] [--json | --openmetrics | --prometheus] [--reset]`: the
/// daemon's latency histogram and counters, as lines, as the stats object, or as metrics
/// text for Prometheus (OpenMetrics, or the text format node_exporter's textfile collector
/// reads); `--reset` starts a new period once they are printed.
enum StatsCommand {
    static let usage = "crease stats [--socket PATH] [--json | --openmetrics | --prometheus] [--reset] [--timeout S]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let socket = try args.option("--socket")
        let timeout = try args.timeout()
        let json = args.flag("--json")
        let reset = args.flag("--reset")
        let openMetrics = args.flag("--openmetrics"), prometheus = args.flag("--prometheus")
        try args.finish()
        guard [json, openMetrics, prometheus].filter({ $0 }).count <= 1 else {
            throw UsageError("--json, --openmetrics and --prometheus exclude each other")
        }
        let dialect: OpenMetrics.Dialect? = openMetrics ? .openMetrics : prometheus ? .prometheusText : nil
        do {
            let path = DaemonConnection.defaultPath(explicit: socket)
            let conn = try DaemonConnection(path: path, timeout: timeout)
            let reply = try conn.command(reset ? #"{"cmd":"stats","reset":true,"id":"stats"}"# : #"{"cmd":"stats","id":"stats"}"#)
            guard let stats = reply["stats"] else {
                var message = "unexpected reply"
                if case .string(let m)? = reply["error"]?["message"] { message = m }
                Console.err("crease stats: \(message)")
                return ExitStatus.checkFailed
            }
            if let dialect {
                // The text ends with a newline of its own.
                Console.out(String(OpenMetrics.format(stats: stats, dialect: dialect, rig: OpenMetrics.rigName(socketPath: path)).dropLast()))
            } else if json {
                Console.out(bytes: JSONWriter.encode(stats))
            } else {
                Console.out(StatsText.render(stats))
            }
            return ExitStatus.success
        } catch {
            Console.err("crease stats: \(error)")
            return ExitStatus.checkFailed
        }
    }
}

/// The stats object as a few human lines. Pure.
enum StatsText {
    static func render(_ stats: JSONValue) -> String {
        func n(_ v: JSONValue?) -> String {
            guard case .number(let x)? = v else { return "-" }
            return String(decoding: JSONWriter.encode(.number(x)), as: UTF8.self)
        }
        let l = stats["latency"] ?? .null
        var labels = ""
        if case .object(let members)? = stats["labels"], !members.isEmpty {
            labels = "\nlabels " + members.map { k, v in
                if case .string(let text) = v { "\(k)=\(text)" } else { k }
            }.joined(separator: ", ")
        }
        return """
            events \(n(stats["events"])) (rejected \(n(stats["rejected"]))), publishes \(n(stats["publishes"])) (batches \(n(stats["batches"])) of \(n(stats["batchedEvents"])) events)
            latency us: p50 \(n(l["p50Us"]))  p90 \(n(l["p90Us"]))  p99 \(n(l["p99Us"]))  p99.9 \(n(l["p999Us"]))  max \(n(l["maxUs"]))  over budget (\(n(l["budgetUs"])) us) \(n(l["overBudget"])) of \(n(l["count"]))
            observations: \(Verdict.allCases.map { "\(n(stats["observations"]?[$0.rawValue])) \($0.rawValue)" }.joined(separator: ", "))
            clients \(n(stats["clients"])), subscribers \(n(stats["subscribers"])), dropped \(n(stats["dropped"])), rss \(n(stats["rssKiB"])) KiB, up \(n(stats["uptimeS"])) s
            """ + labels
    }
}

extension JSONWriter {
    /// One value as canonical JSON bytes.
    static func encode(_ v: JSONValue) -> [UInt8] {
        var w = JSONWriter()
        w.value(v)
        return w.bytes
    }
}
