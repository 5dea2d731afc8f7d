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

        guard seconds > 0, seconds <= maxSeconds else { throw UsageError("--seconds must be above 0 and at most \(Int(maxSeconds)) (a week), not \(seconds)") }
        guard let socket else {
            // Written a chunk at a time: an hour at 1 kHz is 3.6 million lines.
            var failure: Error?
            EventGenerator.stream(scenario, seed: UInt64(seed), rateHz: rate, seconds: seconds) { events, _ in
                guard failure == nil else { return }
                var out: [UInt8] = []
                out.reserveCapacity(events.count * 48)
                for g in events {
                    var w = JSONWriter(capacity: 64)
                    g.event.write(to: &w, ts: Int64(g.offsetNs))
                    out.append(contentsOf: w.bytes)
                    out.append(0x0A)
                }
                do { try TraceIO.write(out, to: nil) } catch { failure = error }
            }
            if let failure { throw failure }
            return ExitStatus.success
        }
        return try stream(scenario, seed: UInt64(seed), rate: rate, seconds: seconds, to: socket, timeout: timeout,
                          speed: try Pacer.speed(speedText ?? "1"), label: "gen \(name) seed \(seed)")
    }

    static let maxSeconds = 604_800.0

    /// Streams the scenario into a daemon, a chunk of generated events at a time.
    static func stream(_ scenario: GenScenario, seed: UInt64, rate: Double, seconds: Double, to socket: String, timeout: Double,
                       speed: Double, label: String) throws -> Int32 {
        let client = try SocketStreamer(path: socket, timeout: timeout)
        _ = try client.request(mark("\(label): begin", id: "gen-begin"), id: "gen-begin")
        let pacer = Pacer(speed: speed)
        var rig = LookingRig(client: client)
        var pendingLooks: [GeneratedLook] = []
        var previous: UInt64?
        var index = 0, sentEvents = 0, lookCount = 0
        var failure: Error?
        EventGenerator.stream(scenario, seed: seed, rateHz: rate, seconds: seconds) { events, looks in
            guard failure == nil else { return }
            pendingLooks += looks
            lookCount += looks.count
            do {
                for g in events {
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
                    index += 1
                    sentEvents += 1
                }
            } catch { failure = error }
        }
        if let failure { throw failure }
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
        var sent = "crease gen: sent \(sentEvents) events"
        if lookCount > 0 {
            let verdicts = ["match", "stale", "mismatch"].map { v in "\(replies.filter { $0["verdict"] == .string(v) }.count) \(v)" }
            sent += " and \(lookCount) observations (\(verdicts.joined(separator: ", ")))"
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
