import CreaseCore
import CreaseDaemonCore
import Foundation

/// `crease replay --to SOCKET PLAN.jsonl`: each of a plan's sequences streamed into a daemon
/// from the start state (a `load` with no fields puts the daemon's app in its default state
/// before each), the digest of the reply to its last event checked against the sequence's.
/// A plan costs a reset per sequence, which a daemon does for free (a phone does not: that
/// is what `crease plan --tour` is for).
enum PlanReplay {
    struct Sequence {
        var number: Int
        var events: [Event]
        var digest: UInt64
    }

    /// Whether `path` is a regular file that opens as a plan (its first bytes say so).
    static func looksLikePlan(_ path: String) -> Bool {
        Inputs.regularFile(path, startsWith: #"{"crease":"plan""#)
    }

    /// The plan's sequences (its layouts' and, with `--transitions`, its transitions').
    static func read(_ bytes: [UInt8], path: String) throws -> (app: String, sequences: [Sequence]) {
        guard let (header, sequences) = try PlanFile.read(bytes, path: path) else {
            throw UsageError("\(path): not a plan (crease plan -o PLAN writes one)")
        }
        // A plan from another state (`--from`) needs that state loaded before each sequence,
        // which the plan does not hold.
        if case .string(let from)? = header["from"], from != "default" {
            throw UsageError("\(path) was planned from the state in \(from): only a plan from the default state goes into a daemon (its resets are loads of that state)")
        }
        var out: [Sequence] = []
        for s in sequences {
            var decoded: [Event] = []
            for e in s.events {
                do { decoded.append(try Event.decode(e).event) } catch { throw UsageError("\(path): sequence \(s.number): \(error)") }
            }
            out.append(Sequence(number: s.number, events: decoded, digest: s.digest))
        }
        guard !out.isEmpty else { throw UsageError("\(path): the plan has no sequences") }
        let app: String
        if case .string(let a)? = header["app"] { app = a } else { app = "?" }
        return (app, out)
    }

    /// `looks`: after each sequence, what a page source of a correct device would show of the
    /// layout it ends on (the daemon's own layout, read back), sent as its observation: a
    /// rehearsal of the plan as a rig runs it, whose trace holds a look a sequence.
    static func intoDaemon(_ plan: (app: String, sequences: [Sequence]), path: String, socket: String, timeout: Double,
                           looks: Bool = false) throws -> Int32 {
        let client = try SocketStreamer(path: socket, timeout: timeout)
        let hello = try client.request(Array(#"{"cmd":"hello","id":"plan-hello"}"#.utf8), id: "plan-hello")
        guard case .string(let app)? = hello["app"], app == plan.app else {
            throw CheckFailed("the daemon runs app \(ReplayCommand.errorText(hello["app"] ?? .null)), the plan is for \"\(plan.app)\": start it with the plan's app")
        }
        for s in plan.sequences {
            // The reset, then the events; the last reply (the load's, for the start layout) is checked.
            try client.send(Array(#"{"cmd":"load","id":"p\#(s.number)-0"}"#.utf8))
            for (k, event) in s.events.enumerated() {
                var w = JSONWriter(capacity: 128)
                event.write(to: &w, id: .string("p\(s.number)-\(k + 1)"))
                try client.send(w.bytes)
            }
            if looks { try look(client, sequence: s.number) }
        }
        _ = try client.request(Array(#"{"cmd":"sync","id":"plan-sync"}"#.utf8), id: "plan-sync")
        client.shutdownWrites()
        var replies: [String: JSONValue] = [:]
        for r in client.collected() { if case .string(let id)? = r["id"] { replies[id] = r } }
        for s in plan.sequences {
            for k in 0...s.events.count {
                let id = "p\(s.number)-\(k)"
                guard let reply = replies[id] else { throw CheckFailed("no reply for sequence \(s.number)'s \(k == 0 ? "load" : "event \(k)")") }
                guard reply["ok"] == .bool(true) else {
                    throw CheckFailed("the daemon rejected sequence \(s.number)'s \(k == 0 ? "load" : "event \(k)"): \(ReplayCommand.errorText(reply))")
                }
            }
            guard case .string(let got)? = replies["p\(s.number)-\(s.events.count)"]?["digest"], Digest.parseHex(got) == s.digest else {
                Console.out("divergence at sequence \(s.number): the plan expects \(Digest.hex(s.digest))")
                return ExitStatus.checkFailed
            }
        }
        let events = plan.sequences.reduce(0) { $0 + $1.events.count }
        Console.err("sent \(plan.sequences.count) sequences of \(path) (\(events) events, a load before each) to \(socket); every sequence ends at the plan's digest")
        guard looks else { return ExitStatus.success }
        var verdicts: [String: Int] = [:]
        for s in plan.sequences {
            guard let r = replies["look-\(s.number)"], r["ok"] == .bool(true), case .string(let v)? = r["verdict"] else {
                throw CheckFailed("the daemon refused the look after sequence \(s.number): \(ReplayCommand.errorText(replies["look-\(s.number)"] ?? .null))")
            }
            verdicts[v, default: 0] += 1
        }
        let others = verdicts.filter { $0.key != "match" }.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        Console.err("\(plan.sequences.count) looks: \(verdicts["match"] ?? 0) match" + (others.isEmpty ? "" : ", " + others.joined(separator: ", ")))
        return others.isEmpty ? ExitStatus.success : ExitStatus.checkFailed
    }

    /// The daemon's layout now, read back, and its page-source view sent as the look.
    private static func look(_ client: SocketStreamer, sequence: Int) throws {
        let id = "p\(sequence)-layout"
        let reply = try client.request(Array(#"{"cmd":"layout","id":"\#(id)"}"#.utf8), id: id)
        guard reply["ok"] == .bool(true), let line = reply["layout"] else {
            throw CheckFailed("the daemon gave no layout after sequence \(sequence): \(ReplayCommand.errorText(reply))")
        }
        let layout: Layout
        do { layout = try Layout.decodeLine(line).layout } catch {
            throw CheckFailed("the daemon's layout after sequence \(sequence) does not read back: \(error)")
        }
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.key("cmd"); w.string("observe")
        w.key("id"); w.string("look-\(sequence)")
        w.key("observed"); PageSourceView.observation(of: layout).write(to: &w)
        w.endObject()
        try client.send(w.bytes)
    }
}
