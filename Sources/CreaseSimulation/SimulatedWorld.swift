import CreaseCore
import CreaseDaemonCore

/// The simulated daemon and everything around it: the core, its clients, its disk, the
/// virtual clock and the recording of the current run (since the start or the last crash).
/// It plays the shell's part as `Daemon` does and checks what the core decides.
struct SimulatedWorld {
    let options: SimulationOptions
    var core: DaemonCore
    var actions = DaemonActions(logThreshold: .info)
    var disk: SimulatedDisk
    var clients: [SimulatedClient] = []
    var clock: UInt64 = 1_000_000_000
    var nextClient = 1
    var recording: [UInt8] = []
    /// The trace this run's core recorded, for `DaemonReplay`.
    var trace: SimulatedTrace
    var outcome = SimulationOutcome()
    var stepIndex = 0
    /// Clients the last writes dropped (their queue passed its limit), told to the core after the write.
    private var drops: [(client: Int, reason: String)] = []
    /// Clients the core closes once their writes are out: the close is told after the actions.
    private var closing: [Int] = []

    init(options: SimulationOptions) {
        self.options = options
        disk = SimulatedDisk(engine: options.engine, fault: options.fault)
        core = SimulatedWorld.start(engine: options.engine, options: options, at: clock)
        trace = SimulatedTrace(core: core)
        begin()
    }

    private static func start(engine: Engine, options: SimulationOptions, at now: UInt64) -> DaemonCore {
        DaemonCore(engine: engine,
                   config: .init(daemonName: "creased simulated", budgetUs: options.budgetUs, socketActivated: false,
                                 policy: Simulation.policy, lineLimit: LineLimit.standard),
                   startNs: now)
    }

    /// A run's first inputs: the socket listens, the trace opens.
    private mutating func begin() {
        recording.removeAll(keepingCapacity: true)
        trace = SimulatedTrace(core: core)
        append(DaemonRecording.header(core: core, logLevel: actions.logThreshold))
        feed(.listening(socketActivated: false, readersPerUid: Simulation.readersPerUid, readersTotal: 64))
        feed(.traceMode(.recording(layouts: false, repliesWaitForDisk: options.repliesWaitForDisk)))
        perform()
    }

    private mutating func append(_ line: [UInt8]) {
        recording += line
        recording.append(0x0A)
    }

    mutating func fail(_ invariant: String, _ detail: String) {
        guard outcome.failure == nil else { return }
        outcome.failure = SimulationFailure(step: stepIndex, invariant: invariant, detail: detail)
    }

    // MARK: - Steps

    /// A line of the log (callers on the hot path check `options.log` first: the text costs).
    mutating func note(_ line: String) {
        if options.log { outcome.log.append(line) }
    }

    mutating func take(_ step: SimStep) {
        note("step \(stepIndex): \(step)")
        switch step {
        case .connect(let role): connect(role)
        case .burst(let pick, let count, let seed): burst(pick, count: count, seed: seed)
        case .malformed(let pick, let kind): malformed(pick, kind: kind)
        case .command(let pick, let kind):
            guard let i = open(pick) else { return }
            let id = clients[i].ask()
            if kind % 10 == 7 { clients[i].unsubscribing = id }
            read([SimulatedLines.command(kind, id: id)], from: i)
            checkSubscribersCurrent()
        case .endOfIteration(let gap):
            clock &+= gap
            endOfIteration()
            checkRepliesAnswered()
            checkSubscribersCurrent()
        case .stall(let pick):
            if let i = open(pick) { clients[i].stalled = true }
        case .resume(let pick):
            if let i = open(pick), clients[i].stalled {
                clients[i].stalled = false
                clients[i].queue.completed(clients[i].unread)
                clients[i].unread = 0
            }
        case .vanish(let pick, let unterminated):
            guard let i = open(pick) else { return }
            clients[i].state = .closing
            feed(.endOfInput(client: clients[i].id, unterminatedBytes: unterminated))
            perform()
        case .disk(let records):
            clock &+= 20_000
            if disk.write(records) { reportDurable() }
        case .diskStall(let steps): disk.stall(steps: steps)
        case .diskFull(let records): disk.fill(records: records)
        case .tick(let metrics):
            clock &+= 1_000_000
            feed(metrics ? .metricsTick : .statsTick)
            perform()
        case .crash: crash(keep: Int(clock / 1000 % 4))
        }
        checkGoneClientsLeftNothing()
    }

    /// The `pick`-th of the clients that are open, if any.
    private func open(_ pick: Int, where wanted: (SimulatedClient) -> Bool = { _ in true }) -> Int? {
        let open = clients.indices.filter { clients[$0].state == .open && wanted(clients[$0]) }
        return open.isEmpty ? nil : open[pick % open.count]
    }

    private mutating func connect(_ role: SimStep.Role) {
        let client = SimulatedClient(id: nextClient, role: role, queueLimit: options.queueLimit)
        nextClient += 1
        outcome.clients += 1
        clients.append(client)
        clock &+= 5_000
        feed(.connected(client: client.id, peer: client.peer))
        perform()
        if case .subscriber(let topics) = role, let i = clients.firstIndex(where: { $0.id == client.id }), clients[i].state == .open {
            let id = clients[i].ask()
            clients[i].layoutSubscriber = true
            read([SimulatedLines.subscribe(topics: topics, id: id)], from: i)
        }
    }

    private mutating func burst(_ pick: Int, count: Int, seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        // Mostly a publisher; now and then a reader, who is refused each event.
        let chosen = rng.next() % 8 == 0 ? open(pick) : open(pick) { $0.sendsEvents }
        guard let i = chosen else { return }
        var lines: [String] = []
        for _ in 0..<count {
            let id = rng.next() % 4 == 0 ? nil : clients[i].ask()
            lines.append(SimulatedLines.event(&rng, id: id))
        }
        read(lines, from: i, costNs: 2_000 + rng.next() % 30_000)
    }

    private mutating func malformed(_ pick: Int, kind: Int) {
        guard let i = open(pick) else { return }
        if kind % 5 == 4 {
            // The framer cut a line past the limit: told, then closed.
            clients[i].state = .closing
            feed(.lineTooLong(client: clients[i].id, length: LineLimit.standard + 1))
            perform()
            return
        }
        let id = clients[i].nextID
        let (line, carriesID) = SimulatedLines.malformed(kind, id: id)
        if carriesID { _ = clients[i].ask() }
        read([line], from: i)
    }

    /// One read holding `lines`, as `Daemon.didRead` hands it: each line, then the line handled
    /// `costNs` later (a batch the budget cuts is cut there).
    private mutating func read(_ lines: [String], from i: Int, costNs: UInt64 = 5_000) {
        clock &+= 1_000
        let readNs = clock
        let id = clients[i].id
        for text in lines {
            guard clients[i].state == .open else { return }
            clients[i].lines += 1
            outcome.linesSent += 1
            if options.log { note("  client \(id) → \(text)") }
            Array(text.utf8).withUnsafeBytes { feed(.line($0, client: id, readNs: readNs)) }
            clock &+= costNs
            feed(.lineHandled)
            perform()
        }
    }

    private mutating func endOfIteration() {
        feed(.endOfIteration)
        perform()
        feed(.repliesSent)
        perform()
    }

    private mutating func reportDurable() {
        note("  disk: durable to seq \(disk.reportedSeq), \(disk.durableCounted) awaited records")
        feed(.durable(seq: disk.reportedSeq, awaitedRecords: disk.durableCounted))
        perform()
    }

    /// The process dies: the clients' connections go with it, the disk keeps what it synced
    /// (and `keep` records of a torn tail), and a new core starts from that state (`--resume`).
    private mutating func crash(keep: Int) {
        checkReplay()
        outcome.crashes += 1
        outcome.recordsLost = disk.lost
        for i in clients.indices { clients[i].state = .gone }
        clients.removeAll()
        let resumed = disk.crash(keep: keep)
        clock &+= 50_000_000
        core = SimulatedWorld.start(engine: resumed, options: options, at: clock)
        drops.removeAll()
        closing.removeAll()
        begin()
    }

    /// The end of the schedule: the disk catches up and every reply owed is sent.
    mutating func finish() {
        endOfIteration()
        disk.flush()
        disk.recover()
        while disk.write(.max) { reportDurable() }
        reportDurable()
        checkRepliesAnswered(drained: true)
        checkSubscribersCurrent()
        checkReplay()
        outcome.recordsLost = disk.lost
    }

    // MARK: - The shell's part

    private mutating func feed(_ input: DaemonInput) {
        append(DaemonRecording.input(input, at: clock))
        core.handle(input, at: clock, into: &actions)
    }

    /// Performs the actions as `Daemon.perform` does, in order, reading the list afresh
    /// (answers such as the gauges join it), then tells the core of drops and closes.
    private mutating func perform() {
        var i = 0
        while i < actions.list.count {
            switch actions.list[i] {
            case .write(let client, let range): deliver(Array(actions.bytes[range]), to: client)
            case .closeAfterWrites(let client):
                // A client dropped meanwhile is gone already, and owed nothing.
                guard let c = index(of: client), clients[c].state != .gone else { break }
                clients[c].state = .closing
                closing.append(client)
            case .startReading: break
            case .refuse(let client):
                outcome.refusals += 1
                if let c = index(of: client) { clients[c].state = .gone }
            case .record(let entry):
                disk.record(entry, bytes: actions.bytes, coreStartNs: core.startNs)
                trace.record(entry, bytes: actions.bytes)
            case .flushTrace: disk.flush()
            case .reopenTrace(_, let client, let id):
                disk.reopen()
                if let client { feed(.traceReopened(path: "sim-\(disk.files).jsonl", client: client, id: id)) }
            case .log: break
            case .sampleGauges:
                feed(.gauges(SampledGauges(residentKiB: 4096 + 16 * clients.count, logDroppedLines: 0, trace: disk.figures)))
            case .metrics: break
            case .stopAccepting, .closeTrace, .closeConnections: break
            }
            i += 1
            if !drops.isEmpty {
                for (client, reason) in drops { feed(.dropped(client: client, reason: reason)) }
                drops.removeAll()
            }
        }
        append(DaemonRecording.actions(actions))
        actions.removeAll()
        let closed = closing
        closing.removeAll()
        for client in closed {
            note("  client \(client) closed by the daemon")
            if let c = index(of: client) {
                if !clients[c].outstanding.isEmpty {
                    fail("a client is answered before the daemon closes it",
                         "client \(client) is closed while it waits for ids \(clients[c].outstanding.prefix(6))")
                }
                clients[c].state = .gone
            }
            feed(.closed(client: client))
        }
        if !actions.isEmpty { perform() }
    }

    private func index(of client: Int) -> Int? { clients.firstIndex { $0.id == client } }

    /// A write to `client`: checked as it leaves the daemon; queued while the client does not
    /// read, and the client dropped when the queue's policy says so.
    private mutating func deliver(_ bytes: [UInt8], to client: Int) {
        guard let c = index(of: client), clients[c].state != .gone else { return }
        if clients[c].stalled {
            switch clients[c].queue.plan(bytes.count) {
            case .tryWrite:
                // The kernel takes nothing from a peer that does not read.
                if case .drop(let reason) = clients[c].queue.wrote(0, of: bytes.count) { return drop(c, reason) }
            case .drop(let reason): return drop(c, reason)
            case .enqueue, .done: break
            }
            clients[c].unread += bytes.count
        }
        for line in bytes.split(separator: 0x0A) {
            if options.log { note("  client \(client) ← \(String(decoding: line.prefix(160), as: UTF8.self))") }
            check(line, to: c)
        }
    }

    private mutating func drop(_ c: Int, _ reason: String) {
        note("  client \(clients[c].id) dropped: \(reason)")
        outcome.drops += 1
        clients[c].state = .gone
        drops.append((clients[c].id, reason))
    }

    // MARK: - Invariants

    /// One line the daemon wrote to client `c`.
    private mutating func check(_ line: ArraySlice<UInt8>, to c: Int) {
        guard let value = try? JSON.parse(Array(line)) else {
            return fail("every line is JSON", "client \(clients[c].id) got \(String(decoding: line, as: UTF8.self))")
        }
        if case .string(let push)? = value["push"] {
            guard push == "layout" else { return }
            outcome.layoutPushes += 1
            guard clients[c].layoutSubscriber else {
                return fail("pushes go to subscribers", "client \(clients[c].id) is not subscribed to layout and got a layout push")
            }
            guard case .number(let seq)? = value["seq"], case .string(let digest)? = value["digest"] else {
                return fail("a layout push has its seq and digest", String(decoding: line, as: UTF8.self))
            }
            if let last = clients[c].lastLayoutSeq, Int(seq) <= last {
                return fail("a subscriber's layouts come in order", "client \(clients[c].id) got seq \(Int(seq)) after seq \(last)")
            }
            clients[c].lastLayoutSeq = Int(seq)
            clients[c].lastLayoutDigest = digest
            return
        }
        guard case .number(let n)? = value["id"] else { return }
        let id = Int(n)
        guard clients[c].outstanding.first == id else {
            return fail("replies come in order, one per request",
                        "client \(clients[c].id) got a reply to id \(id) while it waits for \(clients[c].outstanding.prefix(4))")
        }
        clients[c].outstanding.removeFirst()
        if clients[c].unsubscribing == id {
            clients[c].unsubscribing = nil
            clients[c].layoutSubscriber = false
        }
        guard value["ok"] == .bool(true), value["changed"] != nil, case .number(let seq)? = value["seq"] else { return }
        outcome.acks += 1
        if options.repliesWaitForDisk, Int(seq) > disk.durableSeq {
            fail("no event is acknowledged before its record is durable",
                 "client \(clients[c].id)'s event \(id) was acknowledged at seq \(Int(seq)); the disk holds up to seq \(disk.durableSeq)")
        }
    }

    /// Nothing is owed once the loop ended an iteration (and, with replies waiting for the disk,
    /// once the disk caught up): every request of an open client was answered.
    private mutating func checkRepliesAnswered(drained: Bool = false) {
        guard drained || !options.repliesWaitForDisk else { return }
        for c in clients where c.state == .open && !c.outstanding.isEmpty {
            return fail("every request is answered", "client \(c.id) still waits for ids \(c.outstanding.prefix(6)) (\(c.outstanding.count) in all)")
        }
    }

    /// After a flush point every layout subscriber was sent the published layout.
    private mutating func checkSubscribersCurrent() {
        let published = Digest.hex(core.lastPublishedDigest)
        for c in clients where c.state == .open && c.layoutSubscriber && c.outstanding.isEmpty && c.lastLayoutDigest != published {
            return fail("every subscriber gets every published layout, or is dropped",
                        "client \(c.id) last got \(c.lastLayoutDigest ?? "nothing"); the daemon published \(published)")
        }
    }

    /// A client that is gone leaves nothing behind in the core.
    private mutating func checkGoneClientsLeftNothing() {
        let open = Set(clients.filter { $0.state != .gone }.map(\.id))
        for id in core.clients.keys.sorted() where !open.contains(id) {
            return fail("a gone client leaves nothing behind", "the core still holds client \(id)")
        }
        for entry in core.subscribers.entries where !open.contains(entry.client) {
            return fail("a gone client leaves nothing behind", "client \(entry.client) is still subscribed")
        }
    }

    /// The run so far, fed to a fresh core, decides the same actions; the trace it recorded,
    /// fed to the daemon's replay, gives the same records.
    private mutating func checkReplay() {
        do {
            let replayed = try DaemonReplay.run(try TraceFile(bytes: trace.bytes))
            outcome.traceEventsReplayed += replayed.events
            if let d = replayed.divergence {
                fail("the run's trace replays through the daemon's core", DaemonReplay.describe(d).joined(separator: " "))
            }
        } catch {
            fail("the run's trace replays through the daemon's core", "\(error)")
        }
        do {
            let replayed = try DaemonRecording.replay(recording, policy: Simulation.policy)
            outcome.inputsReplayed += replayed.inputs
            if let difference = replayed.difference { fail("the recording replays to the same actions", difference) }
        } catch {
            fail("the recording replays to the same actions", "\(error)")
        }
    }
}
