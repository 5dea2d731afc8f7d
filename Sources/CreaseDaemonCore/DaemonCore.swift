import CreaseCore

/// The daemon's decisions, without I/O: which lines are events or commands, who may
/// send them, when a batch ends and publishes, which subscribers get which push,
/// which replies wait for the trace to reach the disk. Every method takes the time
/// as a parameter and appends what to do to a `DaemonActions`; the shell (`Daemon`)
/// performs it. Clients are known by number.
///
/// The event path lives here; commands in `DaemonCore+Commands.swift`.
public struct DaemonCore {
    /// What the core is told once, at start.
    public struct Config {
        /// `creased <version>`, for `hello`.
        public var daemonName: String
        public var budgetUs: UInt64
        public var socketActivated: Bool
        public var policy: AccessPolicy
        public var lineLimit: Int
        /// `--label`s, for `hello` and `stats`.
        public var labels: [Label]
        /// How long a layout still counts for a stale observation after it was replaced (`--settle-ms`).
        public var settleNs: UInt64
        /// Connections that may only read, from one uid (`--max-readers-per-uid`), and in all:
        /// the shell sets the total from the descriptor limit, less a reserve kept for
        /// publishers, so readers can never take the descriptors a rig's publisher needs.
        public var readersPerUid: Int
        public var readersTotal: Int
        /// With `--resume`: where the daemon resumed, or why it started fresh (for `hello`).
        public var resume: ResumeStatus?
        /// Record every look's observed object whole (`--trace-whole-looks`); by default a look
        /// that is exactly a view of the layout it agrees with is kept as a reference to it.
        public var wholeLooks = false

        public enum ResumeStatus {
            case resumed(TraceHeader.ResumedFrom, truncatedBytes: Int)
            case fresh(String)
        }

        public init(daemonName: String, budgetUs: UInt64, socketActivated: Bool, policy: AccessPolicy, lineLimit: Int,
                    labels: [Label] = [], settleNs: UInt64 = ConformanceTracker.defaultWindowNs,
                    readersPerUid: Int = .max, readersTotal: Int = .max, resume: ResumeStatus? = nil) {
            self.resume = resume
            self.readersPerUid = readersPerUid
            self.readersTotal = readersTotal
            self.labels = labels
            self.daemonName = daemonName
            self.budgetUs = budgetUs
            self.socketActivated = socketActivated
            self.policy = policy
            self.lineLimit = lineLimit
            self.settleNs = settleNs
        }
    }

    /// A connected client that may send lines.
    public struct Client: Sendable {
        public let access: AccessLevel
        public let peer: PeerCredentials?
        /// Lines received so far, every newline counted: the number its error replies carry.
        public var lines = 0
    }

    /// A reply owed to an event that carried an id.
    struct Ack {
        let client: Int
        let id: JSONValue
        let seq: Int
        let changed: Bool
        let digest: UInt64
        let readNs: UInt64
        /// A command's reply, encoded when answered: it waits until `observations`
        /// observation records are on disk as well as `seq`.
        var held: (awaitedRecords: Int, reply: [UInt8])? = nil
    }

    public internal(set) var config: Config
    /// The clock's reading when the daemon started: the trace's `t = 0`.
    public let startNs: UInt64
    /// When the counters' period began: the start, or the last `stats` reset.
    var periodStartNs: UInt64
    public internal(set) var engine: Engine
    public internal(set) var stats: DaemonStats
    public internal(set) var subscribers = Subscribers()
    public internal(set) var clients: [Int: Client] = [:]
    /// Where in `clients` the client that sent the last line is: a burst's lines all come from
    /// one client, and hashing its number per line cost as much as the rest of the lookup.
    /// Cleared whenever a client comes or goes (an index outlives only changes of values). Its
    /// access level is kept beside it: reading it from the dictionary copied (and destroyed) the
    /// whole `Client` per line.
    var lastSender: (client: Int, slot: Dictionary<Int, Client>.Index, access: AccessLevel)?
    var scheduler: PublishScheduler
    /// The layouts of the settle window, for observations.
    public internal(set) var conformance: ConformanceTracker

    /// What the daemon's trace is: set by the shell when the trace opens, and `.off` when it
    /// closes at shutdown.
    public enum TraceMode: Equatable, Sendable {
        /// Nothing is recorded and no reply waits (`--no-trace`, or a trace that would not open).
        case off
        /// Every event, load, mark, batch and observation is recorded. `layouts`
        /// (`--trace-layouts`): an event that changes the layout hands the trace its layout
        /// line. `repliesWaitForDisk` (`--fsync always`): a reply waits until its record is on disk.
        case recording(layouts: Bool, repliesWaitForDisk: Bool)
    }

    public internal(set) var trace: TraceMode = .off
    /// Shutting down: asked once, whatever signals follow.
    var stopping = false

    /// Whether a trace is being recorded (`mark` says so; `trace rotate` needs one).
    var tracing: Bool { trace != .off }
    var acksWaitForDisk: Bool { if case .recording(_, true) = trace { true } else { false } }
    var traceLayouts: Bool { if case .recording(true, _) = trace { true } else { false } }

    /// Events of the open batch as the glitch checker takes them (their latency is set when
    /// the batch ends); each one's `t` is when it was read, less `startNs`.
    var batchEvents: [CheckedEvent] = []
    /// The glitch checks over what subscribers are sent: every applied event, every
    /// published layout (docs/glitches.md). Times are ns since the daemon started.
    var glitches: GlitchChecker
    /// Replies owed for events of the open batch.
    var batchAcks: [Ack] = []
    /// Replies waiting for the disk (`acksWaitForDisk`).
    var held = HeldReplies()
    /// Clients that hung up (or sent a line too long) with replies still held: closed once those are sent.
    var closeAfterHeld: [Int] = []
    public internal(set) var lastPublishedDigest: UInt64
    /// The diagnostics subscribers last saw: compared as values, encoded only when they change.
    var lastDiagnostics: [Diagnostic]
    var lastStatsPushEvents: UInt64 = .max
    /// Refused connections' log lines, rate-limited.
    var refusalLog = RefusalLog()
    /// What waits for the shell's sample of the gauges (`gauges`), in the order it was asked.
    var gaugeWaiters: [GaugeWaiter] = []

    public init(engine: Engine, config: Config, startNs: UInt64) {
        self.engine = engine
        self.config = config
        self.startNs = startNs
        periodStartNs = startNs
        stats = DaemonStats(budgetNs: config.budgetUs * 1000)
        scheduler = PublishScheduler(budgetNs: config.budgetUs * 1000)
        lastPublishedDigest = engine.digest
        lastDiagnostics = engine.layout.diagnostics
        conformance = ConformanceTracker(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: startNs, windowNs: config.settleNs)
        var options = GlitchOptions()
        options.budgetNs = config.budgetUs * 1000
        glitches = GlitchChecker(options: options, app: engine.app)
        batchEvents.reserveCapacity(1024)
        batchAcks.reserveCapacity(1024)
        for g in glitches.check(layout: engine.layout, seq: engine.seq, t: 0, digest: engine.digest) { stats.glitches[g.kind.index] += 1 }
    }

    // MARK: - Lines

    /// What `Wire.dispatch` found a line to be, as `receive` acts on it.
    private enum Received {
        case hinge(WireFastPath.Hinge)
        case motion(WireFastPath.Motion)
        case other
    }

    /// One line from a client (without its newline), read at `readNs`.
    mutating func receive(line: UnsafeRawBufferPointer, from client: Int, readAt readNs: UInt64, now: UInt64,
                                 into out: inout DaemonActions) {
        let slot: Dictionary<Int, Client>.Index
        let access: AccessLevel
        if let last = lastSender, last.client == client {
            slot = last.slot
            access = last.access
        } else {
            guard let found = clients.index(forKey: client) else { return }
            slot = found
            access = clients.values[found].access
            lastSender = (client, found, access)
        }
        clients.values[slot].lines += 1
        // A read-only connection's commands are small (subscribe, hello, layout, stats): a big
        // line from it is refused before it is parsed, so it cannot stall the loop for others
        // with what it may not send anyway (`--max-line-bytes` raised for loads).
        if access != .publish, line.count > DaemonCore.readerLineLimit {
            forbid("a line of \(line.count) bytes (a read-only connection's lines are at most \(DaemonCore.readerLineLimit))",
                   field: "line", id: nil, from: client, at: now, into: &out)
            return
        }
        // The high-rate events go straight to `event`, their fields apart.
        switch Wire.dispatch(line, hinge: { Received.hinge($0) }, motion: { .motion($0) }, other: { .other }) {
        case .hinge(let h):
            event(.hinge(angle: h.angle), id: h.id, ts: h.ts, access: access, line: line, from: client, readNs: readNs, now: now, into: &out)
            return
        case .motion(let m):
            event(.motion(m.gravity), id: m.id, ts: m.ts, access: access, line: line, from: client, readNs: readNs, now: now, into: &out)
            return
        case .other:
            break
        }
        let inbound: Inbound
        do {
            inbound = try Wire.decodeParsing(line: line)
        } catch {
            reject(error, from: client, at: now, into: &out)
            return
        }
        switch inbound {
        case .ignorable:
            return
        case .event(let envelope):
            event(envelope.event, id: envelope.id, ts: envelope.ts, access: access, line: line, from: client, readNs: readNs,
                  now: now, into: &out)
        case .command(let command, let id):
            stats.commands += 1
            // Commands are flush points: every earlier event is applied and published.
            flush(at: now, into: &out)
            guard access == .publish || !command.needsPublish else {
                forbid("the \"\(command.name)\" command", field: "cmd", id: id, from: client, at: now, into: &out)
                return
            }
            if case .load(let request) = command {
                // Not a reply-only command: it publishes, so it writes its own reply.
                load(request, id: id, for: client, readAt: readNs, at: now, into: &out)
            } else {
                perform(command, id: id, line: line, for: client, readAt: readNs, at: now, into: &out)
            }
        case .invalidCommand(_, let error):
            stats.commands += 1
            reject(error, from: client, at: now, into: &out)
        }
    }

    /// The longest line a read-only connection may send: the default line limit, whatever
    /// `--max-line-bytes` allows publishers (a load of a large manifest).
    static let readerLineLimit = LineLimit.standard

    /// An event line from a client with `access`: applied if it may publish.
    /// (The event, its id and its ts apart: see `WireFastPath.Hinge`. The id is consumed: it
    /// moves into the reply owed, where a borrowed one was destroyed after the call through a
    /// generic outlined destroy, about 100 instructions.)
    mutating func event(_ event: Event, id: consuming JSONValue?, ts: Int64?, access: AccessLevel, line: UnsafeRawBufferPointer,
                        from client: Int, readNs: UInt64, now: UInt64, into out: inout DaemonActions) {
        guard access == .publish else {
            forbid("the \"\(event.name)\" event", field: "event", id: id, ts: ts, from: client, at: now, into: &out)
            return
        }
        apply(event, id: id, ts: ts, line: line, from: client, readNs: readNs, now: now, into: &out)
    }

    mutating func reject(_ error: InputError, from client: Int, at now: UInt64, into out: inout DaemonActions) {
        stats.rejected += 1
        flush(at: now, into: &out)
        var error = error
        error.line = clients[client]?.lines
        let start = out.bytes.count
        Reply.appendError(error, to: &out.bytes)
        reply(from: start, to: client, into: &out)
        out.log(.debug, "client \(client): rejected: \(error)")
    }

    /// Answers a line the client's access level does not allow; nothing changes.
    mutating func forbid(_ wanted: String, field: String, id: JSONValue?, ts: Int64? = nil, from client: Int, at now: UInt64,
                         into out: inout DaemonActions) {
        stats.forbidden += 1
        flush(at: now, into: &out)
        let c = clients[client]
        let message = config.policy.refusal(c?.access ?? .none, peer: c?.peer, wanted: wanted)
        let start = out.bytes.count
        var error = InputError(.forbidden, message, field: field, id: id)
        error.line = c?.lines
        error.ts = ts
        Reply.appendError(error, to: &out.bytes)
        reply(from: start, to: client, into: &out)
        out.log(.debug, "client \(client): forbidden: \(wanted)")
    }

    mutating func apply(_ event: Event, id: consuming JSONValue?, ts: Int64?, line: UnsafeRawBufferPointer, from client: Int,
                        readNs: UInt64, now: UInt64, into out: inout DaemonActions) {
        let changed: Bool
        do {
            // The engine's clock is the trace's: ns since the daemon started, as each record's t.
            changed = try engine.apply(event, at: Int64(bitPattern: readNs &- startNs))
        } catch {
            var e = error
            if e.id == nil { e.id = id }
            e.ts = ts
            reject(e, from: client, at: now, into: &out)
            return
        }
        stats.events += 1
        if case .hinge(let reading) = event, HingeReadingRule.overshoots(reading) { stats.clampedAngles += 1 }
        let seq = engine.seq
        let digest = engine.digest
        // Every layout the engine computes counts for observations, inside a batch too:
        // the device passes through it.
        if changed { conformance.publish(layout: engine.layout, digest: digest, seq: seq, t: readNs) }
        if tracing {
            let kept = out.keep(line)
            var layout: Range<Int>?
            if traceLayouts, changed {
                let start = out.bytes.count
                engine.appendLayoutJSON(to: &out.bytes)
                layout = start..<out.bytes.count
            }
            out.append(.record(.event(EventRecord(seq: seq, tNs: readNs, client: client, line: kept, layout: layout, digest: digest))))
        }
        if case .app = event {
            out.log(.notice, "client \(client) replaced the app with \"\(engine.appName)\" at seq \(seq)")
            glitches.use(app: engine.app)
        }
        batchEvents.append(CheckedEvent(seq: seq, t: readNs &- startNs, event: event, latencyNs: nil))
        if let id {
            batchAcks.append(Ack(client: client, id: id, seq: seq, changed: changed, digest: digest, readNs: readNs))
        }
        scheduler.applied(seq: seq, changed: changed, readNs: readNs)
    }

    /// A line was handled; `now` is read after it, so a batch the budget cuts here counts
    /// the time its last event took to apply (the `now` given to `receive` is from before).
    mutating func lineHandled(at now: UInt64, into out: inout DaemonActions) {
        if let batch = scheduler.due(nowNs: now) { finish(batch, at: now, into: &out) }
    }

    /// A STATUS= line for `systemctl status`.
    public func status() -> String {
        "\(stats.events) events, \(clients.count) clients, \(subscribers.count) subscribers, "
            + "p99 \(LatencyHistogram.micros(stats.latency.value(atQuantile: 0.99))) us"
    }

    /// Stopping: the open batch publishes and every subscriber is told `shutdown`.
    /// Stopping (`reason`: the signal's name), in this order: no new client; the open batch
    /// published; every subscriber told `shutdown`; the trace closed, so it is on disk
    /// before the last replies go (none is held back); every connection closed once its
    /// writes are out, those that do not read within the grace period closed anyway.
    mutating func shutdown(reason: String, at now: UInt64, into out: inout DaemonActions) {
        guard !stopping else { return }
        stopping = true
        out.log(.notice, "\(reason): shutting down")
        out.append(.stopAccepting(status: "shutting down (\(reason))"))
        flush(at: now, into: &out)
        let start = out.bytes.count
        Reply.appendPush("shutdown", seq: engine.seq, to: &out.bytes) { _ in }
        for s in subscribers.entries { out.write(client: s.client, range: start..<out.bytes.count) }
        if tracing {
            out.append(.closeTrace)   // then `traceClosed`, and the connections close
        } else {
            out.append(.closeConnections(graceMs: DaemonCore.shutdownGraceMs))
        }
    }

    /// The trace is closed, its records on disk: nothing waits for it any more. At shutdown
    /// the connections close next.
    mutating func traceClosed(at now: UInt64, into out: inout DaemonActions) {
        trace = .off
        durable(upTo: .max, awaitedRecords: .max, at: now, into: &out)
        if stopping { out.append(.closeConnections(graceMs: DaemonCore.shutdownGraceMs)) }
    }

    /// How long a peer that does not read may hold its connection open at shutdown.
    static let shutdownGraceMs = 1000
}
