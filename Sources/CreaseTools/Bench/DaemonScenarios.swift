import CreaseCore
import CreaseDaemonCore
import Foundation

/// The scenarios that drive a real `creased` over its socket: `stream`, `burst` and
/// `memory`. Each measurement gets a fresh daemon, stopped with SIGTERM at the end.
enum DaemonScenarios {
    /// Event lines (no id, no ts) concatenated, as a publisher sends a burst.
    static func encode(_ events: some Sequence<GeneratedEvent>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(events.underestimatedCount * 40)
        var w = JSONWriter(capacity: 128)
        for g in events {
            w.resetKeepingCapacity()
            g.event.write(to: &w)
            out.append(contentsOf: w.bytes)
            out.append(0x0A)
        }
        return out
    }

    /// Exactly `count` events of a `crease gen` scenario: a scenario's length is set in
    /// seconds, and discrete events take time without samples, so it is generated long
    /// enough and cut.
    static func generate(_ scenario: GenScenario, seed: UInt64, count: Int) -> ArraySlice<GeneratedEvent> {
        var seconds = Double(count) / 1000 + 0.5
        while true {
            let events = EventGenerator.generate(scenario, seed: seed, rateHz: 1000, seconds: seconds)
            if events.count >= count { return events.prefix(count) }
            seconds *= 1.25
        }
    }

    /// Sends `bytes` in 64 KiB writes, showing progress.
    static func sendAll(_ bytes: [UInt8], to socket: BenchSocket, progress: Progress, label: String) throws {
        let chunk = 1 << 16
        try bytes.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let n = min(chunk, all.count - offset)
                try socket.send(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + n)]))
                offset += n
                progress.update(label, done: offset, total: all.count)
            }
        }
    }

    /// What the subscribers saw, checked against what the daemon published.
    static func checkSubscribers(_ tallies: [SubscriberPool.Tally], complete: Bool, publishes: Int, daemonDropped: Int) -> [String] {
        var problems: [String] = []
        if !complete { problems.append("the subscribers' connections did not all close within 15 s of stopping the daemon") }
        if daemonDropped > 0 { problems.append("the daemon dropped \(daemonDropped) subscriber(s)") }
        let unclosed = tallies.filter { !$0.sawShutdown }.count
        if unclosed > 0 { problems.append("\(unclosed) subscriber(s) lost their connection before the shutdown push") }
        let short = tallies.filter { $0.pushes != publishes + 1 }
        if let first = short.first {
            problems.append("\(short.count) subscriber(s) did not get every layout: \(first.pushes) pushes where the daemon published \(publishes) (+1 on subscribing)")
        }
        let errors = tallies.reduce(0) { $0 + $1.errors }
        if errors > 0 { problems.append("subscribers got \(errors) error replies") }
        return problems
    }

    // MARK: stream

    struct StreamOutcome {
        var subscribers: Int
        var events: Int
        var elapsedNs: UInt64
        var daemonLatency: Distribution?
        var endToEnd: Distribution
        var publishes: Int
        var dropped: Int
        var memory: BenchChild.Memory
        var problems: [String]
    }

    /// A 1 kHz hinge stream (`crease gen`'s `flap`: open and shut, fast) for `seconds`,
    /// each event sent at its time, with `subscribers` reading every layout.
    static func stream(subscribers: Int, seconds: Double, settings: DaemonSettings, progress: Progress,
                       children: Children) throws -> StreamOutcome {
        let session = try DaemonSession(settings, tag: "stream-\(subscribers)")
        _ = children.add(session.child)
        let generated = EventGenerator.generate(.flap, seed: 1, rateHz: 1000, seconds: seconds)
        let times = SendTimes(capacity: generated.count)
        let pool = try SubscriberPool(path: session.socketPath, count: subscribers, sendTimes: times)
        try pool.waitUntilSubscribed()
        let pacer = Pacer(speed: 1)
        let t0 = Clock.now()
        var w = JSONWriter(capacity: 128)
        for (i, g) in generated.enumerated() {
            pacer.wait(untilOffsetNs: g.offsetNs)
            w.resetKeepingCapacity()
            let now = Clock.now()
            g.event.write(to: &w, ts: Int64(now))
            w.bytes.append(0x0A)
            times[i + 1] = now
            try session.publisher.send(w.bytes)
            progress.update("stream, \(subscribers) subscribers", done: i + 1, total: generated.count)
        }
        let seq = try session.sync()
        let elapsed = Clock.now() &- t0
        let stats = try session.stats()
        let memory = session.child.memoryKiB()
        var problems: [String] = []
        if let p = session.stop() { problems.append(p) }
        let seen = pool.waitUntilClosed()
        if seq != generated.count { problems.append("the daemon is at seq \(seq) after \(generated.count) events (\(session.rejected) rejected)") }
        problems += checkSubscribers(seen.tallies, complete: seen.complete, publishes: stats.int("publishes"), daemonDropped: stats.int("dropped"))
        return StreamOutcome(subscribers: subscribers, events: generated.count, elapsedNs: elapsed,
                             daemonLatency: stats.latency(label: "\(subscribers) subscribers: read -> queued to all (creased)"),
                             endToEnd: Distribution(label: "\(subscribers) subscribers: sent -> push received", histogram: seen.endToEnd),
                             publishes: stats.int("publishes"), dropped: stats.int("dropped"), memory: memory, problems: problems)
    }

    static func runStream(subscriberCounts: [Int], seconds: Double, settings: DaemonSettings, progress: Progress) throws -> ScenarioReport {
        try Children.scope { children in
            var report = ScenarioReport(name: "stream")
            report.setup.append("a 1 kHz hinge stream (crease gen's flap scenario, seed 1) for \(Format.fixed(seconds, 1)) s per run, each event sent on its schedule")
            report.setup.append("subscribers: \(subscriberCounts.map(String.init).joined(separator: ", ")), each on the layout topic, read by one poll(2) thread; \(settings.description)")
            report.setup.append("read -> queued: the daemon's own histogram (stats), from reading an event's line to its layout queued to every subscriber")
            var daemonRows: [Distribution] = []
            var e2eRows: [Distribution] = []
            for n in subscriberCounts {
                progress.phase("stream: \(n) subscriber(s), \(Format.fixed(seconds, 1)) s")
                let o = try stream(subscribers: n, seconds: seconds, settings: settings, progress: progress, children: children)
                if let d = o.daemonLatency { daemonRows.append(d) }
                e2eRows.append(o.endToEnd)
                report.figures.append(Figure(name: "\(n) subscribers: events, layouts published", value: Double(o.events), unit: "events, \(o.publishes) layouts"))
                report.figures.append(Figure(name: "\(n) subscribers: publisher's rate", value: Double(o.events) / (Double(o.elapsedNs) / 1e9), unit: "events/s"))
                report.figures.append(Figure(name: "\(n) subscribers: dropped", value: Double(o.dropped), unit: ""))
                report.figures.append(Figure(name: "\(n) subscribers: daemon RSS at the end", value: Double(o.memory.rss) / 1024, unit: "MiB"))
                report.problems += o.problems
                if n == subscriberCounts.max(), let d = o.daemonLatency {
                    report.targets.append(TargetCheck(name: "stream p99 with \(n) subscribers, under the budget", measured: Double(d.p99Ns) / 1000,
                                                      bound: .below, limit: Double(settings.budgetUs), unit: "us"))
                    report.targets.append(TargetCheck(name: "dropped subscribers with \(n) subscribers", measured: Double(o.dropped),
                                                      bound: .atMost, limit: 0, unit: ""))
                }
            }
            report.groups.append(DistributionGroup(title: "stream: read -> queued to every subscriber, inside creased", rows: daemonRows))
            report.groups.append(DistributionGroup(title: "stream: publisher send -> subscriber receives the layout (layout changes only)", rows: e2eRows))
            return report
        }
    }

    // MARK: burst

    static func runBurst(events count: Int, subscribers: Int, settings: DaemonSettings, progress: Progress) throws -> ScenarioReport {
        try Children.scope { children in
            var report = ScenarioReport(name: "burst")
            progress.phase("burst: \(Format.grouped(count)) events as fast as one publisher can, \(subscribers) subscribers")
            let generated = generate(.flap, seed: 2, count: count)
            let bytes = encode(generated)
            let session = try DaemonSession(settings, tag: "burst")
            _ = children.add(session.child)
            let pool = try SubscriberPool(path: session.socketPath, count: subscribers, sendTimes: SendTimes(capacity: 0))
            try pool.waitUntilSubscribed()
            let t0 = Clock.now()
            try sendAll(bytes, to: session.publisher, progress: progress, label: "burst")
            let seq = try session.sync()
            let elapsed = Clock.now() &- t0
            let stats = try session.stats()
            if let p = session.stop() { report.problems.append(p) }
            let seen = pool.waitUntilClosed()
            if seq != generated.count { report.problems.append("the daemon is at seq \(seq) after \(generated.count) events (\(session.rejected) rejected)") }
            report.problems += checkSubscribers(seen.tallies, complete: seen.complete, publishes: stats.int("publishes"), daemonDropped: stats.int("dropped"))

            let rate = Double(generated.count) / (Double(elapsed) / 1e9)
            report.setup.append("\(Format.grouped(generated.count)) hinge events (flap, seed 2; \(Format.grouped(bytes.count)) bytes) written in 64 KiB sends, then sync; \(subscribers) subscribers on the layout topic")
            report.setup.append(settings.description)
            if let d = stats.latency(label: "read -> queued to all (creased)") {
                report.groups.append(DistributionGroup(title: "burst: per-event latency inside creased", rows: [d]))
                report.figures.append(Figure(name: "largest latency", value: Double(d.maxNs) / 1000, unit: "us"))
                report.targets.append(TargetCheck(name: "burst p99 under the budget (issue 3, with \(subscribers) subscribers)", measured: Double(d.p99Ns) / 1000,
                                                  bound: .below, limit: Double(settings.budgetUs), unit: "us"))
            }
            report.figures.append(Figure(name: "throughput", value: rate.rounded(), unit: "events/s"))
            report.figures.append(Figure(name: "wall time, first send to sync reply", value: Double(elapsed) / 1e6, unit: "ms"))
            report.figures.append(Figure(name: "layouts published", value: Double(stats.int("publishes")), unit: ""))
            report.figures.append(Figure(name: "batches of more than one event (published)", value: Double(stats.int("batches")), unit: ""))
            report.figures.append(Figure(name: "events in those batches", value: Double(stats.int("batchedEvents")), unit: ""))
            report.figures.append(Figure(name: "dropped subscribers", value: Double(stats.int("dropped")), unit: ""))
            let tracing = !settings.extraArguments.contains("--no-trace")
            report.targets.append(TargetCheck(name: "burst throughput (issue 14\(tracing ? ", tracing on" : ", --no-trace"))", measured: rate,
                                              bound: .atLeast, limit: 1_500_000, unit: "events/s"))
            if tracing {
                report.targets.append(TargetCheck(name: "burst throughput with tracing on (issue 42)", measured: rate, bound: .atLeast,
                                                  limit: 3_000_000, unit: "events/s"))
            }

            // The IMU's stream, alone, into a fresh daemon the same way.
            progress.phase("burst: \(Format.grouped(count)) motion events as fast as one publisher can")
            let motion = generateMotion(seed: 2, count: count)
            let motionBytes = encode(motion)
            let motionSession = try DaemonSession(settings, tag: "burst-motion")
            _ = children.add(motionSession.child)
            let m0 = Clock.now()
            try sendAll(motionBytes, to: motionSession.publisher, progress: progress, label: "burst motion")
            let motionSeq = try motionSession.sync()
            let motionElapsed = Clock.now() &- m0
            if let p = motionSession.stop() { report.problems.append(p) }
            if motionSeq != motion.count {
                report.problems.append("the daemon is at seq \(motionSeq) after \(motion.count) motion events (\(motionSession.rejected) rejected)")
            }
            let motionRate = Double(motion.count) / (Double(motionElapsed) / 1e9)
            report.setup.append("then \(Format.grouped(motion.count)) motion events (crease gen's imu scenario, seed 2, its gravity samples alone; \(Format.grouped(motionBytes.count)) bytes) into a fresh daemon, no subscribers")
            report.figures.append(Figure(name: "motion throughput", value: motionRate.rounded(), unit: "events/s"))
            report.targets.append(TargetCheck(name: "motion burst throughput (issue 25, tracing on)", measured: motionRate, bound: .atLeast, limit: 1_000_000, unit: "events/s"))
            return report
        }
    }

    /// Exactly `count` motion events of the `imu` scenario (turned, tilted, laid flat, with noise).
    static func generateMotion(seed: UInt64, count: Int) -> [GeneratedEvent] {
        var seconds = Double(count) / 1000 + 0.5
        while true {
            let events = EventGenerator.generate(.imu, seed: seed, rateHz: 1000, seconds: seconds).filter {
                if case .motion = $0.event { return true }
                return false
            }
            if events.count >= count { return Array(events.prefix(count)) }
            seconds *= 1.25
        }
    }

    // MARK: memory

    /// Where a long memory run reads the resident size first.
    static let memoryCheckpoint = 1_000_000

    /// Waits until the trace writer has written what a flood queued (its record count holds
    /// still for 100 ms; at most 30 s), then 1.5 s more, in which a quiet writer shrinks the
    /// buffers a backlog grew and trims the heap: the resident size is then the daemon's own,
    /// not the backlog's (which the queue's limit bounds, 8 MiB).
    static func waitForTraceWriter(_ session: DaemonSession) throws {
        var last = -1
        for _ in 0..<300 {
            let records = DaemonStats(try session.stats().value["trace"] ?? .null).int("records")
            if records == last { break }
            last = records
            usleep(100_000)
        }
        usleep(1_500_000)
    }

    static func runMemory(events count: Int, streamSeconds: Double, settings: DaemonSettings, progress: Progress) throws -> ScenarioReport {
        try Children.scope { children in
            var report = ScenarioReport(name: "memory")
            progress.phase("memory: \(Format.grouped(count)) events into a fresh daemon")
            let generated = generate(.rig, seed: 3, count: count)
            // Past a million, the resident size at the first million is read too: it must stay flat.
            let checkpoint = count >= 2 * memoryCheckpoint ? memoryCheckpoint : count
            let session = try DaemonSession(settings, tag: "memory")
            _ = children.add(session.child)
            let atStart = session.child.memoryKiB()
            try sendAll(encode(Array(generated.prefix(checkpoint))), to: session.publisher, progress: progress, label: "memory")
            var atCheckpoint: BenchChild.Memory?
            if checkpoint < count {
                _ = try session.sync()
                try waitForTraceWriter(session)
                atCheckpoint = session.child.memoryKiB()
                try sendAll(encode(Array(generated.dropFirst(checkpoint))), to: session.publisher, progress: progress, label: "memory")
            }
            let seq = try session.sync()
            let afterReply = session.child.memoryKiB()
            try waitForTraceWriter(session)
            let after = session.child.memoryKiB()
            if seq != generated.count { report.problems.append("the daemon is at seq \(seq) after \(generated.count) events (\(session.rejected) rejected)") }
            if let p = session.stop() { report.problems.append(p) }

            progress.phase("memory: 64 subscribers on a 1 kHz stream, \(Format.fixed(streamSeconds, 1)) s")
            let s = try stream(subscribers: 64, seconds: streamSeconds, settings: settings, progress: progress, children: children)
            report.problems += s.problems

            report.setup.append("\(Format.grouped(generated.count)) events of crease gen's rig scenario (seed 3: hinge sweeps, rotations, keyboard, Live Activities) sent as fast as possible, then sync")
            report.setup.append("then a fresh daemon with 64 subscribers under a 1 kHz hinge stream for \(Format.fixed(streamSeconds, 1)) s (\(s.events) events, \(s.publishes) layouts)")
            report.setup.append("RSS and peak RSS (VmRSS, VmHWM) from /proc/PID/status; \(settings.description)")
            report.figures.append(Figure(name: "RSS at start", value: Double(atStart.rss) / 1024, unit: "MiB"))
            report.figures.append(Figure(name: "RSS at the last reply, the trace writer still behind", value: Double(afterReply.rss) / 1024, unit: "MiB"))
            report.figures.append(Figure(name: "RSS after \(Format.grouped(generated.count)) events, once quiet", value: Double(after.rss) / 1024, unit: "MiB"))
            report.figures.append(Figure(name: "peak RSS during them", value: Double(after.peak) / 1024, unit: "MiB"))
            if let m = atCheckpoint {
                let growth = (Double(after.rss) - Double(m.rss)) / 1024
                report.figures.append(Figure(name: "RSS after \(Format.grouped(checkpoint)) events, once quiet", value: Double(m.rss) / 1024, unit: "MiB"))
                report.figures.append(Figure(name: "RSS growth from \(Format.grouped(checkpoint)) to \(Format.grouped(count)) events", value: growth, unit: "MiB"))
                report.targets.append(TargetCheck(name: "RSS flat from \(Format.grouped(checkpoint)) to \(Format.grouped(count)) events (issue 42)",
                                                  measured: growth, bound: .atMost, limit: 1, unit: "MiB"))
            }
            report.figures.append(Figure(name: "RSS after the 64-subscriber stream", value: Double(s.memory.rss) / 1024, unit: "MiB"))
            report.figures.append(Figure(name: "peak RSS during it", value: Double(s.memory.peak) / 1024, unit: "MiB"))
            report.notes.append("at start: \(atStart.mib); at the last reply: \(afterReply.mib); once the trace writer caught up and went quiet: \(after.mib); after the stream: \(s.memory.mib)")
            report.targets.append(TargetCheck(name: "RSS after \(Format.grouped(generated.count)) events, once quiet (issue 42)", measured: Double(after.rss) / 1024,
                                              bound: .atMost, limit: 24, unit: "MiB"))
            report.targets.append(TargetCheck(name: "RSS after the 64-subscriber stream", measured: Double(s.memory.rss) / 1024,
                                              bound: .atMost, limit: 24, unit: "MiB"))
            return report
        }
    }
}

extension JSONWriter {
    /// Empties the writer for the next line, keeping its storage.
    mutating func resetKeepingCapacity() {
        var b: [UInt8] = []
        swap(&b, &bytes)
        b.removeAll(keepingCapacity: true)
        self = JSONWriter(capacity: 0)
        bytes = b
    }
}
