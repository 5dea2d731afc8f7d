import CreaseCore
import CreaseDaemonCore
import Foundation

/// `crease replay --to SOCKET TOUR.jsonl`: a tour's events streamed into a daemon, every
/// reply's digest checked against the step's, paced by the tour's own estimate of device
/// time (`--speed N`: N times faster than the rig would go; `max`: no waiting).
enum TourReplay {
    struct Step {
        var number: Int
        var event: Event
        var digest: UInt64
        var cost: Double
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
            if case .null = event { continue }
            let decoded: Event
            do { decoded = try Event.decode(event).event } catch { throw UsageError("\(path): line \(line.number): \(error)") }
            steps.append(Step(number: Int(n), event: decoded, digest: digest, cost: cost))
        }
        return (start, steps)
    }

    static func intoDaemon(_ tour: (startDigest: UInt64, steps: [Step]), path: String, socket: String, timeout: Double, speed: Double) throws -> Int32 {
        let client = try SocketStreamer(path: socket, timeout: timeout)
        let hello = try client.request(Array(#"{"cmd":"hello","id":"tour-hello"}"#.utf8), id: "tour-hello")
        guard case .string(let d)? = hello["digest"], let digest = Digest.parseHex(d) else { throw CheckFailed("the daemon's hello has no digest") }
        guard digest == tour.startDigest else {
            throw CheckFailed("the daemon is at digest \(d), the tour starts at \(Digest.hex(tour.startDigest)): start it afresh "
                              + "(or load the tour's start state) with the tour's app and profile")
        }
        let pacer = Pacer(speed: speed)
        var elapsed = 0.0
        for step in tour.steps {
            if speed > 0 {
                try client.flush()
                pacer.wait(untilOffsetNs: UInt64(elapsed * 1e9))
            }
            elapsed += step.cost
            // The step number as the id, so each reply names its step.
            var w = JSONWriter(capacity: 128)
            step.event.write(to: &w, id: .number(Double(step.number)))
            try client.send(w.bytes)
        }
        _ = try client.request(Array(#"{"cmd":"sync","id":"tour-sync"}"#.utf8), id: "tour-sync")
        client.shutdownWrites()
        var acks: [Int: JSONValue] = [:]
        for r in client.collected() { if case .number(let id)? = r["id"] { acks[Int(id)] = r } }
        for step in tour.steps {
            guard let reply = acks[step.number] else { throw CheckFailed("no reply for step \(step.number)") }
            guard reply["ok"] == .bool(true) else {
                throw CheckFailed("the daemon rejected step \(step.number): \(ReplayCommand.errorText(reply))")
            }
            guard case .string(let got)? = reply["digest"], Digest.parseHex(got) == step.digest else {
                Console.out("divergence at step \(step.number): \(String(decoding: step.event.jsonBytes(), as: UTF8.self)): the tour expects \(Digest.hex(step.digest))")
                return ExitStatus.checkFailed
            }
        }
        Console.err("sent \(tour.steps.count) steps of \(path) to \(socket); every reply's digest is the tour's")
        return ExitStatus.success
    }
}
