import CreaseCore
import CreaseDaemonCore
import Foundation

/// `crease replay --to SOCKET TOUR.jsonl`: a tour's events streamed into a daemon, every
/// reply's digest checked against the step's, paced by the tour's own estimate of device
/// time (`--speed N`: N times faster than the rig would go; `max`: no waiting), except
/// that two `motion` samples are never closer than their `ts` say (the orientation filter's
/// settle time is measured on the daemon's clock).
enum TourReplay {
    struct Step {
        var number: Int
        /// Nil for a first step that only looks at the start state.
        var event: Event?
        /// A `motion` probe's read time on the tour's axis: its gap to the previous timed
        /// step is a settle time, kept at any `--speed`.
        var ts: Int64?
        var digest: UInt64
        var cost: Double
        /// An observe step's `expected`: what the rig should see after the event, as the look
        /// `--looks` sends.
        var expected: ObserveRequest?
    }

    /// Whether `path` is a regular file that opens as a tour (its first bytes say so); a
    /// trace, a FIFO or a missing file is not, and goes the trace's way.
    static func looksLikeTour(_ path: String) -> Bool {
        Inputs.regularFile(path, startsWith: #"{"crease":"tour""#)
    }

    /// The tour in `bytes`, or nil when they are not one (the first line's `"crease"` is not `"tour"`).
    static func read(_ bytes: [UInt8], path: String) throws -> (startDigest: UInt64, steps: [Step])? {
        let lines = Inputs.lines(bytes)
        guard let first = lines.first, let header = try? JSON.parse(Array(first.bytes)), case .string("tour") = header["crease"] else { return nil }
        guard case .string(let s)? = header["startDigest"], let start = Digest.parseHex(s) else {
            throw UsageError("\(path): line 1: the tour header has no \"startDigest\" (plan it again with this build)")
        }
        var steps: [Step] = []
        for line in lines.dropFirst() where !line.bytes.isEmpty {
            let value: JSONValue
            do { value = try JSON.parse(Array(line.bytes)) } catch { throw UsageError("\(path): line \(line.number): not JSON: \(error)") }
            guard case .number(let n)? = value["step"], case .string(let d)? = value["digest"], let digest = Digest.parseHex(d),
                  case .number(let cost)? = value["cost"], let event = value["event"] else {
                throw UsageError("\(path): line \(line.number): a step needs \"step\", \"event\", \"digest\" and \"cost\"")
            }
            var decoded: EventEnvelope?
            if event != .null {
                do { decoded = try Event.decode(event) } catch { throw UsageError("\(path): line \(line.number): \(error)") }
            }
            var expected: ObserveRequest?
            if let observed = value["expected"] {
                let command = JSONValue.object([("cmd", .string("observe")), ("id", .string("look-\(Int(n))")), ("observed", observed)])
                do { expected = try ObserveRequest.decode(command) } catch {
                    throw UsageError("\(path): line \(line.number): \"expected\" is no observation: \(error)")
                }
            }
            steps.append(Step(number: Int(n), event: decoded?.event, ts: decoded?.ts, digest: digest, cost: cost, expected: expected))
        }
        return (start, steps)
    }

    /// `looks`: each observe step's expected observation follows its event, as a rig reading
    /// a correct device would send it (a rehearsal of the tour, whose trace holds every look).
    static func intoDaemon(_ tour: (startDigest: UInt64, steps: [Step]), path: String, socket: String, timeout: Double, speed: Double,
                           looks: Bool = false) throws -> Int32 {
        let client = try SocketStreamer(path: socket, timeout: timeout)
        let hello = try client.request(Array(#"{"cmd":"hello","id":"tour-hello"}"#.utf8), id: "tour-hello")
        guard case .string(let d)? = hello["digest"], let digest = Digest.parseHex(d) else { throw CheckFailed("the daemon's hello has no digest") }
        guard digest == tour.startDigest else {
            throw CheckFailed("the daemon is at digest \(d), the tour starts at \(Digest.hex(tour.startDigest)): start it afresh "
                              + "(or load the tour's start state) with the tour's app and profile")
        }
        let pacer = Pacer(speed: speed)
        var elapsed = 0.0
        var lastTimed: (ts: Int64, sentNs: UInt64)?
        for step in tour.steps {
            if speed > 0 {
                try client.flush()
                pacer.wait(untilOffsetNs: UInt64(elapsed * 1e9))
            }
            elapsed += step.cost
            if let ts = step.ts {
                // The daemon stamps a motion sample with its read time: the tour's gap between
                // two samples (a settle time) must pass on its clock too, whatever the speed.
                try client.flush()
                if let last = lastTimed, ts > last.ts { Pacer.sleep(untilMonotonicNs: last.sentNs + UInt64(ts - last.ts)) }
            }
            // The step number as the id, so each reply names its step.
            if let event = step.event {
                var w = JSONWriter(capacity: 128)
                event.write(to: &w, id: .number(Double(step.number)))
                if let ts = step.ts {
                    // Timed from its reply: the daemon has read it by then, however late it got to it.
                    _ = try client.request(w.bytes, id: .number(Double(step.number)))
                    lastTimed = (ts, TraceIO.monotonicNs())
                } else {
                    try client.send(w.bytes)
                }
            }
            if looks, let expected = step.expected { try client.send(expected.jsonBytes()) }
        }
        _ = try client.request(Array(#"{"cmd":"sync","id":"tour-sync"}"#.utf8), id: "tour-sync")
        client.shutdownWrites()
        var acks: [Int: JSONValue] = [:]
        var verdicts: [String: Int] = [:], looksSent = 0
        for r in client.collected() {
            if case .number(let id)? = r["id"] { acks[Int(id)] = r }
            if case .string(let id)? = r["id"], id.hasPrefix("look-") {
                looksSent += 1
                guard r["ok"] == .bool(true), case .string(let v)? = r["verdict"] else {
                    throw CheckFailed("the daemon refused the look of \(id.dropFirst(5)): \(ReplayCommand.errorText(r))")
                }
                verdicts[v, default: 0] += 1
            }
        }
        let moves = tour.steps.filter { $0.event != nil }
        for step in moves {
            guard let event = step.event, let reply = acks[step.number] else { throw CheckFailed("no reply for step \(step.number)") }
            guard reply["ok"] == .bool(true) else {
                throw CheckFailed("the daemon rejected step \(step.number): \(ReplayCommand.errorText(reply))")
            }
            guard case .string(let got)? = reply["digest"], Digest.parseHex(got) == step.digest else {
                Console.out("divergence at step \(step.number): \(String(decoding: event.jsonBytes(), as: UTF8.self)): the tour expects \(Digest.hex(step.digest))")
                return ExitStatus.checkFailed
            }
        }
        Console.err("sent \(moves.count) steps of \(path) to \(socket); every reply's digest is the tour's")
        guard looks else { return ExitStatus.success }
        let others = verdicts.filter { $0.key != "match" }.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
        Console.err("\(looksSent) looks: \(verdicts["match"] ?? 0) match" + (others.isEmpty ? "" : ", " + others.joined(separator: ", ")))
        return others.isEmpty ? ExitStatus.success : ExitStatus.checkFailed
    }
}
