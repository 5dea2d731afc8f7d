import CreaseCore

/// `crease gen`: a rig-like event stream from a seeded generator. To stdout as NDJSON
/// (with `ts` counting from 0), or with `--to SOCKET` into a daemon on the stream's own
/// schedule (`ts` then taken from the monotonic clock as a rig on this machine would),
/// between two marks that name the scenario and seed. A scenario with looks (`observe`)
/// also sends `observe` commands there, built from the layouts the daemon gives it.
enum GenCommand {
    static let usage = "crease gen --scenario NAME [--seed N] [--rate HZ] [--seconds S] [--to SOCKET [--speed 1|N|max] [--timeout S]] | --list"

    static func run(_ args: inout Arguments) throws -> Int32 {
        if args.flag("--list") {
            try args.finish()
            for s in GenScenario.allCases { Console.out("\(s.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)) \(s.summary)") }
            return ExitStatus.success
        }
        guard let name = try args.option("--scenario") else { throw UsageError("--scenario is needed (--list shows them)") }
        guard let scenario = GenScenario(rawValue: name) else {
            throw UsageError("no scenario \"\(name)\"; scenarios: \(GenScenario.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let seed = try args.int("--seed") ?? 1
        let rate = try args.double("--rate") ?? 1000
        let seconds = try args.double("--seconds") ?? 2
        let socket = try args.option("--to")
        let speedText = try args.option("--speed")
        let timeoutGiven = args.has("--timeout")
        let timeout = try args.timeout()
        try args.finish()
        guard seed >= 0 else { throw UsageError("--seed takes a whole number >= 0") }
        guard rate > 0, rate <= 100_000 else { throw UsageError("--rate must be between 0 and 100000 Hz") }
        if speedText != nil && socket == nil { throw UsageError("--speed paces a stream into a daemon; it goes with --to") }
        if timeoutGiven && socket == nil { throw UsageError("--timeout bounds the wait for a daemon; it goes with --to") }

        let (events, looks) = EventGenerator.generateWithLooks(scenario, seed: UInt64(seed), rateHz: rate, seconds: seconds)
        guard let socket else {
            var out: [UInt8] = []
            out.reserveCapacity(events.count * 48)
            for g in events {
                var w = JSONWriter(capacity: 64)
                g.event.write(to: &w, ts: Int64(g.offsetNs))
                out.append(contentsOf: w.bytes)
                out.append(0x0A)
            }
            try TraceIO.write(out, to: nil)
            return ExitStatus.success
        }
        return try stream(events, looks: looks, to: socket, timeout: timeout, speed: try Pacer.speed(speedText ?? "1"), label: "gen \(name) seed \(seed)")
    }

    static func stream(_ events: [GeneratedEvent], looks: [GeneratedLook], to socket: String, timeout: Double, speed: Double, label: String) throws -> Int32 {
        let client = try SocketStreamer(path: socket, timeout: timeout)
        _ = try client.request(mark("\(label): begin", id: "gen-begin"), id: "gen-begin")
        let pacer = Pacer(speed: speed)
        var rig = LookingRig(client: client)
        var pendingLooks = looks[...]
        var previous: UInt64?
        for (index, g) in events.enumerated() {
            while let look = pendingLooks.first, look.afterEvents <= index {
                try rig.look(look, pacer: pacer)
                pendingLooks.removeFirst()
            }
            // Events of one instant go out in one write, as a rig sends simultaneous updates.
            if speed > 0, g.offsetNs != previous {
                try client.flush()
                pacer.wait(untilOffsetNs: g.offsetNs)
            }
            previous = g.offsetNs
            var w = JSONWriter(capacity: 64)
            g.event.write(to: &w, ts: Int64(TraceIO.monotonicNs()))
            try client.send(w.bytes)
        }
        for look in pendingLooks { try rig.look(look, pacer: pacer) }
        try client.flush()
        _ = try client.request(mark("\(label): end", id: "gen-end"), id: "gen-end")
        client.shutdownWrites()
        let replies = client.collected()
        let errors = replies.filter { $0["ok"] == .bool(false) }
        if let first = errors.first {
            var w = JSONWriter()
            w.value(first)
            Console.err("crease gen: the daemon rejected \(errors.count) event(s); first: \(String(decoding: w.bytes, as: UTF8.self))")
            return ExitStatus.checkFailed
        }
        var sent = "crease gen: sent \(events.count) events"
        if !looks.isEmpty {
            let verdicts = ["match", "stale", "mismatch"].map { v in "\(replies.filter { $0["verdict"] == .string(v) }.count) \(v)" }
            sent += " and \(looks.count) observations (\(verdicts.joined(separator: ", ")))"
        }
        Console.err("\(sent) to \(socket)")
        return ExitStatus.success
    }

    static func mark(_ label: String, id: String) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject(); w.key("cmd"); w.string("mark"); w.key("label"); w.string(label); w.key("id"); w.string(id); w.endObject()
        return w.bytes
    }
}

/// The rig of a scenario with looks: it asks the daemon for the layout where a real rig
/// would read its screen, and sends what a device showing that would report.
private struct LookingRig {
    let client: SocketStreamer
    /// The layout of the rig's last look at the current layout.
    var lastSeen: Layout?
    var count = 0

    mutating func look(_ look: GeneratedLook, pacer: Pacer) throws {
        count += 1
        let observed: Observation
        switch look.sight {
        case .previous:
            if lastSeen == nil { lastSeen = try currentLayout() }
            observed = Observation(describing: lastSeen!)
        case .current:
            try client.flush()
            pacer.wait(untilOffsetNs: look.offsetNs)
            lastSeen = try currentLayout()
            observed = Observation(describing: lastSeen!)
        case .misplaced:
            try client.flush()
            pacer.wait(untilOffsetNs: look.offsetNs)
            var wrong = Observation(describing: try currentLayout())
            if let i = wrong.items?.firstIndex(where: { $0.frame != nil }) { wrong.items![i].frame!.y += 30 }
            observed = wrong
        }
        try client.send(ObserveRequest(observed: observed, ts: Int64(TraceIO.monotonicNs()), id: .string("gen-look-\(count)")).jsonBytes())
    }

    private func currentLayout() throws -> Layout {
        let id = "gen-layout-\(count)"
        let reply = try client.request(#"{"cmd":"layout","id":"\#(id)"}"#.utf8.map { $0 }, id: id)
        guard let line = reply["layout"] else { throw CheckFailed("the daemon answered layout with no layout") }
        return try Layout.decodeLine(line).layout
    }
}
