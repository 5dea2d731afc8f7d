#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore

public enum DaemonInfo {
    public static let version = "0.1.0"
}

/// Counters reported by `stats`.
struct Counters {
    var events: UInt64 = 0
    var rejected: UInt64 = 0
    var commands: UInt64 = 0
    var publishes: UInt64 = 0
    var batches: UInt64 = 0
    var batchedEvents: UInt64 = 0
    var accepted: UInt64 = 0
    var dropped: UInt64 = 0
    var oversized: UInt64 = 0
    var bytesIn: UInt64 = 0
    var bytesOut: UInt64 = 0
    var lastDropReason: String?
    /// Lines and connections refused by the access policy.
    var forbidden: UInt64 = 0
}

/// The imperative shell: one libuv loop on one thread, a Unix socket, clients and
/// subscribers around the pure engine.
///
/// Properties marked `@exclusivity(unchecked)` are the per-event state: touched only
/// from the loop thread, and no access to one overlaps another (no callback
/// re-enters while it is borrowed), so the runtime's exclusivity bookkeeping, about
/// a tenth of an event's instructions, is switched off for them.
public final class Daemon {
    let options: DaemonOptions
    let log: Logger
    let socketPath: String
    private let notifier: Notifier
    private let policy: AccessPolicy
    private let socketGroup: gid_t?
    private let environment: [String: String]
    @exclusivity(unchecked) private var engine: Engine
    private var trace: (any TraceSink)?
    private let traceFactory: TraceSinkFactory?

    private let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    private let server = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
    private var serverOpen = false
    /// True when the socket came from systemd: it is not ours to unlink.
    private var activated = false
    private var boundPath: String?

    /// One read buffer serves every connection (a read callback consumes its bytes
    /// before returning); `readSizer` decides how much of it a read may fill.
    let readBufferSize = ReadSizer.maximum
    @exclusivity(unchecked) var readSizer: ReadSizer
    let readBuffer: UnsafeMutableRawPointer

    private var connections: [Connection] = []
    private var subscribers: [Connection] = []
    private var nextClientID = 1

    @exclusivity(unchecked) var counters = Counters()
    @exclusivity(unchecked) private var histogram: LatencyHistogram
    @exclusivity(unchecked) private var scheduler: PublishScheduler
    private let startNs = uv_hrtime()

    /// Events of the open batch: when each was read, for the histogram.
    @exclusivity(unchecked) private var batchReadNs: [UInt64] = []
    /// Replies owed for events of the open batch that carried an id.
    @exclusivity(unchecked) private var batchAcks: [Ack] = []
    @exclusivity(unchecked) private var dirty: [Connection] = []
    /// Replies waiting for their events' trace records to reach the disk (`--fsync always`).
    private var heldAcks: [Ack] = []
    private var traceWake: UVAsync?
    private var lastPublishedDigest: UInt64
    /// The diagnostics subscribers last saw: compared as values, encoded only when they change.
    private var lastDiagnostics: [Diagnostic] = []
    @exclusivity(unchecked) private var pushBuffer: [UInt8] = []
    private var lastStatsPushCount: UInt64 = .max
    private var lastStatus = ""

    private var timers: [UVTimer] = []
    private var signals: [UVSignal] = []
    private var check: UVCheck?
    private var shuttingDown = false

    struct Ack {
        let connection: Connection
        let id: JSONValue
        let seq: Int
        let changed: Bool
        let digest: UInt64
        let readNs: UInt64
    }

    /// Loads the profile and app; nothing is opened yet.
    public init(options: DaemonOptions, environment: [String: String], traceFactory: TraceSinkFactory?) throws(StartupError) {
        self.options = options
        self.environment = environment
        self.traceFactory = traceFactory
        log = Logger(threshold: options.logLevel,
                     format: LogFormat(journal: LogFormat.stderrIsJournal(environment["JOURNAL_STREAM"])))
        socketPath = SocketPath.resolve(explicit: options.socketPath, environment: environment)
        notifier = Notifier(socketName: environment["NOTIFY_SOCKET"])
        policy = try options.access.policy(resolve: AccessLookup.principal)
        socketGroup = try options.access.socketGroup.map(AccessLookup.socketGroup)
        histogram = LatencyHistogram(budgetNs: options.budgetUs * 1000)
        scheduler = PublishScheduler(budgetNs: options.budgetUs * 1000)
        readSizer = ReadSizer(budgetNs: options.budgetUs * 1000)
        readBuffer = UnsafeMutableRawPointer.allocate(byteCount: readBufferSize, alignment: 16)

        let profile: DeviceProfile
        if let path = options.profilePath {
            do { profile = try Engine.loadProfile(json: try Daemon.readFile(path)) } catch let e as InputError {
                throw StartupError("profile \(path): \(e)")
            } catch { throw StartupError("\(error)") }
        } else {
            profile = Engine.builtinProfile
        }
        let app: App
        switch options.app {
        case .builtin(let name):
            guard let a = Engine.builtinApp(named: name) else {
                throw StartupError("no built-in app named \"\(name)\" (there are: \(BuiltinApps.names.joined(separator: ", ")))")
            }
            app = a
        case .file(let path):
            do { app = try Engine.loadApp(json: try Daemon.readFile(path)) } catch let e as InputError {
                throw StartupError("app \(path): \(e)")
            } catch { throw StartupError("\(error)") }
        }
        engine = Engine(profile: profile, app: app)
        lastPublishedDigest = engine.digest
        lastDiagnostics = engine.layout.diagnostics
        batchReadNs.reserveCapacity(1024)
        batchAcks.reserveCapacity(1024)
        pushBuffer.reserveCapacity(16 * 1024)
    }

    deinit {
        readBuffer.deallocate()
        server.deallocate()
        loop.deallocate()
    }

    static func readFile(_ path: String) throws(StartupError) -> [UInt8] {
        guard let f = fopen(path, "rb") else { throw StartupError("cannot open \(path): \(SocketSetup.errnoText())") }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n > 0 { out.append(contentsOf: chunk[0..<n]) }
            if n < chunk.count { break }
        }
        if ferror(f) != 0 { throw StartupError("cannot read \(path)") }
        return out
    }

    // MARK: - Running

    /// Opens the socket, reports readiness and runs the loop until a signal stops
    /// it. Returns when everything is closed.
    public func run() throws(StartupError) {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)  // past RLIMIT_FSIZE (LimitFSIZE=) a trace write fails like a full disk instead of killing us
        // A parent may have left these blocked (a test runner, a supervisor); they stop the daemon.
        var handled = sigset_t()
        sigemptyset(&handled)
        for s in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&handled, s) }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        uv_loop_init(loop)
        log.attach(loop: loop)
        defer {
            log.detach()
            uv_run(loop, UV_RUN_NOWAIT)  // the log handle's close callback
            uv_loop_close(loop)
        }
        try listen()

        if options.trace, let factory = traceFactory {
            let wake = UVAsync(loop: loop) { [unowned self] in self.releaseHeldAcks() }
            traceWake = wake
            do {
                trace = try factory(TraceContext(daemonVersion: DaemonInfo.version, engine: engine,
                                                 currentEngine: { [unowned self] in self.engine },
                                                 configJSON: configJSON(), directory: options.traceDirectory,
                                                 log: log, wake: { wake.send() }))
            } catch {
                log.error("cannot open the trace: \(error); running without one")
            }
        } else if options.trace, let dir = options.traceDirectory {
            log.warning("this build records no traces; --trace-dir \(dir) is not used")
        }

        for signum in [SIGTERM, SIGINT] {
            signals.append(UVSignal(loop: loop, signal: signum) { [unowned self] s in
                self.shutdown(reason: s == SIGTERM ? "SIGTERM" : "SIGINT")
            })
        }
        signals.append(UVSignal(loop: loop, signal: SIGHUP) { [unowned self] _ in self.reopenTrace(reason: "SIGHUP") })
        check = UVCheck(loop: loop) { [unowned self] in self.endOfIteration() }

        if let ms = NotifyMessage.watchdogIntervalMs(environment: environment, pid: getpid()) {
            let t = UVTimer(loop: loop) { [unowned self] in self.notifier.send(NotifyMessage.watchdog) }
            t.start(afterMs: ms, repeatMs: ms)
            t.unref()
            timers.append(t)
            log.info("watchdog ping every \(ms) ms")
        }
        let statsTimer = UVTimer(loop: loop) { [unowned self] in
            self.pushStats()
            self.updateStatus()
        }
        statsTimer.start(afterMs: options.statsIntervalMs, repeatMs: options.statsIntervalMs)
        statsTimer.unref()
        timers.append(statsTimer)

        let status = "listening on \(socketPath); app \(engine.appName); profile \(engine.profileName)"
        notifier.send(NotifyMessage.ready(status: status))
        log.notice("creased \(DaemonInfo.version) \(status)\(activated ? " (socket activation)" : ""); budget \(options.budgetUs) us")

        uv_run(loop, UV_RUN_DEFAULT)
        log.notice("stopped after \(counters.events) events")
    }

    private func listen() throws(StartupError) {
        uv_pipe_init(loop, server, 0)
        server.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        serverOpen = true
        if let fd = try SocketSetup.activatedSocket(environment: environment, log: log) {
            let rc = uv_pipe_open(server, fd)
            guard rc == 0 else { throw StartupError("cannot use the socket-activated fd: \(uvErrorName(rc))") }
            activated = true
            let path = SocketSetup.boundPath(of: fd)
            if !path.isEmpty, path != socketPath { log.info("socket activation: listening on \(path)") }
            if options.access.socketMode != AccessOptions().socketMode || socketGroup != nil {
                log.warning("--socket-mode and --socket-group do not apply to a socket systemd passed; set SocketMode= and SocketGroup= in the .socket unit")
            }
        } else {
            let mode = options.access.socketMode
            try SocketSetup.prepare(socketPath, socketMode: mode, group: socketGroup, log: log)
            // Bound under a staging name and renamed into place once it listens, so
            // whoever sees the path can connect (when the name fits; else bound in place).
            let bindPath = SocketSetup.stagingPath(for: socketPath, pid: getpid()) ?? socketPath
            // Bound with no more than `mode` allows, so there is no moment of a wider mode.
            let old = umask(mode_t(~mode & 0o777))
            let rc = uv_pipe_bind(server, bindPath)
            umask(old)
            guard rc == 0 else { throw StartupError("cannot bind \(bindPath): \(uvErrorName(rc))") }
            boundPath = bindPath
            chmod(bindPath, mode_t(mode))
            if let g = socketGroup, chown(bindPath, uid_t.max, g) != 0 {
                let why = SocketSetup.errnoText()
                unlink(bindPath)
                throw StartupError("cannot give \(socketPath) to group \(g): \(why)")
            }
        }
        let rc = uv_listen(asStream(server), SocketSetup.listenBacklog()) { s, status in
            let d = Unmanaged<Daemon>.fromOpaque(s!.pointee.data).takeUnretainedValue()
            d.accept(status: status)
        }
        guard rc == 0 else {
            if let p = boundPath { unlink(p) }
            throw StartupError("cannot listen on \(socketPath): \(uvErrorName(rc))")
        }
        if let staged = boundPath, staged != socketPath {
            // link, not rename: a daemon that took the path meanwhile is not replaced.
            let linked = link(staged, socketPath) == 0
            let e = errno
            unlink(staged)
            boundPath = linked ? socketPath : nil
            guard linked else {
                throw StartupError(e == EEXIST ? "another daemon took \(socketPath) while this one started; refusing to replace it"
                                               : "cannot put the socket in place at \(socketPath): \(SocketSetup.errnoText(e))")
            }
        }
        if !policy.isOpen {
            let list = { (l: [Principal]?) in l.map { $0.map(\.description).joined(separator: ", ") } ?? "anyone who can open the socket" }
            log.notice("access: publish: \(policy.publish == nil ? "whoever may read" : list(policy.publish)); read: \(list(policy.read))")
        }
    }

    private func accept(status: Int32) {
        guard status == 0 else {
            log.warning("accept failed: \(uvErrorName(status))")
            return
        }
        let c = Connection(id: nextClientID, daemon: self, loop: loop,
                           lineLimit: LineFramer.defaultLimit, queueLimit: options.maxQueueBytes)
        nextClientID += 1
        let rc = uv_accept(asStream(server), c.stream)
        guard rc == 0 else {
            log.warning("accept failed: \(uvErrorName(rc))")
            c.close()
            return
        }
        counters.accepted += 1
        admit(c)
        guard c.access > .none else {
            counters.forbidden += 1
            Reply.appendError(InputError("forbidden", policy.refusal(.none, peer: c.peer, wanted: "")), to: &c.pending)
            c.flushPending()
            c.refuse()
            return
        }
        connections.append(c)
        let r = c.startReading()
        if r != 0 {
            log.warning("client \(c.id): cannot read: \(uvErrorName(r))")
            c.close()
        }
    }

    /// Reads the peer's credentials, decides its access level once, and logs both.
    private func admit(_ c: Connection) {
        var fd: uv_os_fd_t = -1
        if uv_fileno(asHandle(c.handle), &fd) == 0 {
            c.peer = AccessLookup.peer(fd: fd, groups: policy.needsGroups)
        }
        if let peer = c.peer {
            c.access = policy.level(for: peer)
        } else {
            // Without credentials only the open policy can let a peer in.
            c.access = policy.isOpen ? .publish : .none
        }
        c.mayPublish = c.access == .publish
        let who = c.peer.map(\.description) ?? "unknown peer (no SO_PEERCRED)"
        switch c.access {
        case .publish: log.info("client \(c.id) connected: \(who); may publish (\(connections.count + 1) open)")
        case .read: log.info("client \(c.id) connected: \(who); may read (\(connections.count + 1) open)")
        case .none: log.warning("client \(c.id) connected: \(who); refused: no --allow-read or --allow-publish rule names it")
        }
    }

    /// Answers a line the connection's access level does not allow; nothing changes.
    private func forbid(_ wanted: String, field: String, id: JSONValue?, from c: Connection) {
        counters.forbidden += 1
        flush()
        Reply.appendError(InputError("forbidden", policy.refusal(c.access, peer: c.peer, wanted: wanted), field: field, id: id), to: &c.pending)
        c.flushPending()
        log.debug("client \(c.id): forbidden: \(wanted)")
    }

    // MARK: - Input

    func didRead(_ c: Connection, nread: Int, bytes: UnsafeRawPointer?) {
        guard c.state == .open else { return }
        if nread < 0 {
            if nread != Int(UV_EOF.rawValue) {
                log.debug("client \(c.id): read failed: \(uvErrorName(Int32(nread)))")
            }
            // Answer what it sent before it hung up, then close.
            flush()
            c.closeAfterWrites()
            return
        }
        guard nread > 0, let bytes else { return }
        counters.bytesIn &+= UInt64(nread)
        let readNs = uv_hrtime()
        let outcome = c.framer.feed(UnsafeRawBufferPointer(start: bytes, count: nread)) { line in
            self.handle(line: line, from: c, readNs: readNs)
            return c.state == .open
        }
        if outcome == .ok, c.framer.partial.count < nread {
            // At least one whole line was handled: learn what a byte costs.
            readSizer.observe(bytes: nread, ns: uv_hrtime() &- readNs)
        }
        if case .lineTooLong(let length) = outcome {
            counters.oversized += 1
            flush()
            Reply.appendError(InputError("lineTooLong", "a line of \(length)+ bytes passes the \(c.framer.limit)-byte limit; closing the connection"),
                              to: &c.pending)
            c.flushPending()
            log.warning("client \(c.id): line longer than \(c.framer.limit) bytes; closing it")
            c.closeAfterWrites()
        }
    }

    private func handle(line: UnsafeRawBufferPointer, from c: Connection, readNs: UInt64) {
        let inbound: Inbound
        do {
            inbound = try Wire.decode(line: line)
        } catch {
            reject(error, from: c)
            return
        }
        switch inbound {
        case .ignorable:
            return
        case .event(let envelope):
            guard c.mayPublish else {
                forbid("the \"\(envelope.event.name)\" event", field: "event", id: envelope.id, from: c)
                return
            }
            apply(envelope, line: line, from: c, readNs: readNs)
        case .command(let name, _, let body):
            counters.commands += 1
            flush()
            do {
                let command = try Command.decode(name: name, body: body)
                guard c.mayPublish || !command.needsPublish else {
                    forbid("the \"\(name)\" command", field: "cmd", id: body["id"], from: c)
                    return
                }
                perform(command, body: body, for: c)
            } catch {
                reject(error, from: c)
            }
        }
    }

    private func reject(_ error: InputError, from c: Connection) {
        counters.rejected += 1
        flush()
        Reply.appendError(error, to: &c.pending)
        c.flushPending()
        log.debug("client \(c.id): rejected: \(error)")
    }

    private func apply(_ envelope: EventEnvelope, line: UnsafeRawBufferPointer, from c: Connection, readNs: UInt64) {
        let changed: Bool
        do {
            changed = try engine.apply(envelope.event)
        } catch {
            var e = error
            if e.id == nil { e.id = envelope.id }
            reject(e, from: c)
            return
        }
        counters.events += 1
        let seq = engine.seq
        let digest = engine.digest
        if let trace {
            trace.recordEvent(seq: seq, tNs: readNs, client: c.id, eventLine: line, digest: digest)
        }
        if case .app = envelope.event { log.notice("client \(c.id) replaced the app with \"\(engine.appName)\" at seq \(seq)") }
        batchReadNs.append(readNs)
        if let id = envelope.id {
            batchAcks.append(Ack(connection: c, id: id, seq: seq, changed: changed, digest: digest, readNs: readNs))
        }
        if let batch = scheduler.applied(seq: seq, changed: changed, readNs: readNs, nowNs: uv_hrtime()) {
            finish(batch)
        }
    }

    // MARK: - Publishing

    private func endOfIteration() {
        flush()
    }

    /// A flush point: publishes the open batch and sends its replies.
    private func flush() {
        if let batch = scheduler.flush() { finish(batch) }
    }

    private func finish(_ batch: PublishScheduler.Batch) {
        // A batch that changed nothing leaves the published layout current; one whose
        // changes cancel out (a keyboard up and down again) publishes nothing either.
        if batch.changed, engine.digest != lastPublishedDigest {
            publish()
            counters.publishes += 1
            if batch.events > 1 {
                counters.batches += 1
                counters.batchedEvents += UInt64(batch.events)
                trace?.recordBatch(firstSeq: batch.firstSeq, lastSeq: batch.lastSeq)
            }
        }
        trace?.flush()
        let done = uv_hrtime()
        for r in batchReadNs { histogram.record(done &- r) }
        batchReadNs.removeAll(keepingCapacity: true)
        if trace?.durableSeq != nil, !batchAcks.isEmpty {
            heldAcks.append(contentsOf: batchAcks)
            batchAcks.removeAll(keepingCapacity: true)
            releaseHeldAcks()
            return
        }
        sendAcks(batchAcks, done: done)
        batchAcks.removeAll(keepingCapacity: true)
    }

    /// Sends the replies whose trace records are now on disk.
    private func releaseHeldAcks() {
        guard !heldAcks.isEmpty else { return }
        let durable = trace?.durableSeq ?? Int.max
        let ready = heldAcks.prefix { $0.seq <= durable }
        guard !ready.isEmpty else { return }
        sendAcks(ready, done: uv_hrtime())
        heldAcks.removeFirst(ready.count)
    }

    private func sendAcks<S: Sequence>(_ acks: S, done: UInt64) where S.Element == Ack {
        for ack in acks where ack.connection.state == .open {
            Reply.appendEventAck(id: ack.id, seq: ack.seq, changed: ack.changed, digest: ack.digest,
                                 latencyNs: done &- ack.readNs, to: &ack.connection.pending)
            if !dirty.contains(where: { $0 === ack.connection }) {
                dirty.append(ack.connection)
            }
        }
        for c in dirty { c.flushPending() }
        dirty.removeAll(keepingCapacity: true)
    }

    /// Queues the current layout (and diagnostics, when they changed) to every
    /// subscriber of those topics.
    private func publish() {
        lastPublishedDigest = engine.digest
        var wantsLayout = false
        var wantsDiagnostics = false
        for s in subscribers {
            if s.topics & Topic.layout.bit != 0 { wantsLayout = true }
            if s.topics & Topic.diagnostics.bit != 0 { wantsDiagnostics = true }
        }
        if wantsLayout {
            pushBuffer.removeAll(keepingCapacity: true)
            Reply.appendLayoutPush(seq: engine.seq, digest: engine.digest, to: &pushBuffer) { engine.appendLayoutJSON(to: &$0) }
            fanOut(Topic.layout.bit)
        }
        if wantsDiagnostics {
            if engine.layout.diagnostics != lastDiagnostics {
                lastDiagnostics = engine.layout.diagnostics
                let d = engine.diagnosticsJSON()
                pushBuffer.removeAll(keepingCapacity: true)
                Reply.appendPush("diagnostics", seq: engine.seq, to: &pushBuffer) { w in
                    w.key("diagnostics"); w.raw(d)
                }
                fanOut(Topic.diagnostics.bit)
            }
        }
    }

    private func fanOut(_ bit: UInt8) {
        pushBuffer.withUnsafeBytes { bytes in
            // A drop removes from `subscribers`: iterate over a snapshot.
            for s in subscribers where s.topics & bit != 0 { s.send(bytes) }
        }
    }

    private func pushStats() {
        guard counters.events != lastStatsPushCount,
              subscribers.contains(where: { $0.topics & Topic.stats.bit != 0 }) else { return }
        lastStatsPushCount = counters.events
        pushBuffer.removeAll(keepingCapacity: true)
        Reply.appendPush("stats", seq: engine.seq, to: &pushBuffer) { w in
            w.key("stats"); writeStats(to: &w)
        }
        fanOut(Topic.stats.bit)
    }

    /// A STATUS= line for `systemctl status`, when something changed.
    private func updateStatus() {
        guard notifier.enabled else { return }
        let status = "\(counters.events) events, \(connections.count) clients, \(subscribers.count) subscribers, "
            + "p99 \(LatencyHistogram.micros(histogram.value(atQuantile: 0.99))) us"
        guard status != lastStatus else { return }
        lastStatus = status
        notifier.send(NotifyMessage.status(status))
    }

    // MARK: - Commands

    private func perform(_ command: Command, body: JSONValue, for c: Connection) {
        let id = body["id"]
        switch command {
        case .hello:
            Reply.appendOK(id: id, to: &c.pending) { w in
                w.key("protocol"); w.int(Reply.protocolVersion)
                w.key("daemon"); w.string("creased \(DaemonInfo.version)")
                w.key("profile"); w.string(engine.profileName)
                w.key("app"); w.string(engine.appName)
                w.key("seq"); w.int(engine.seq)
                w.key("digest"); w.string(Digest.hex(engine.digest))
                w.key("client"); w.int(c.id)
                w.key("socketActivated"); w.bool(activated)
                w.key("budgetUs"); w.int(Int(options.budgetUs))
                w.key("access"); w.string(c.access.description)
                if let p = c.peer {
                    w.key("peer"); w.beginObject()
                    w.key("pid"); w.int(Int(p.pid))
                    w.key("uid"); w.int(Int(p.uid))
                    w.key("gid"); w.int(Int(p.gid))
                    w.endObject()
                }
            }
        case .layout:
            Reply.appendOK(id: id, to: &c.pending) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("layout"); w.raw(engine.layoutJSON())
            }
        case .state:
            Reply.appendOK(id: id, to: &c.pending) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("state"); w.raw(engine.stateJSON())
            }
        case .subscribe(let topics):
            let before = c.topics
            for t in topics { c.topics |= t.bit }
            if before == 0 { subscribers.append(c) }
            replyTopics(id: id, c)
            // New layout subscribers start from the current layout.
            if before & Topic.layout.bit == 0, topics.contains(.layout) {
                Reply.appendLayoutPush(seq: engine.seq, digest: engine.digest, to: &c.pending) { engine.appendLayoutJSON(to: &$0) }
            }
            if before & Topic.diagnostics.bit == 0, topics.contains(.diagnostics) {
                // Every diagnostics subscriber has now seen these.
                lastDiagnostics = engine.layout.diagnostics
                let d = engine.diagnosticsJSON()
                Reply.appendPush("diagnostics", seq: engine.seq, to: &c.pending) { w in w.key("diagnostics"); w.raw(d) }
            }
            log.debug("client \(c.id) subscribed to \(topics.map(\.rawValue).joined(separator: ", "))")
        case .unsubscribe(let topics):
            if topics.isEmpty { c.topics = 0 } else { for t in topics { c.topics &= ~t.bit } }
            if c.topics == 0 { subscribers.removeAll { $0 === c } }
            replyTopics(id: id, c)
        case .stats:
            Reply.appendOK(id: id, to: &c.pending) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("stats"); writeStats(to: &w)
            }
        case .mark(let label):
            trace?.recordMark(seq: engine.seq, tNs: uv_hrtime(), label: label)
            log.info("mark at seq \(engine.seq): \(label)")
            Reply.appendOK(id: id, to: &c.pending) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("traced"); w.bool(trace != nil)
            }
        case .sync:
            // Commands are flush points: every earlier event is applied and published.
            Reply.appendOK(id: id, to: &c.pending) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("digest"); w.string(Digest.hex(engine.digest))
            }
        case .trace(.rotate):
            guard trace != nil else {
                Reply.appendError(InputError("traceDisabled", "this daemon records no trace", id: id), to: &c.pending)
                break
            }
            if let path = reopenTrace(reason: "trace rotate") {
                Reply.appendOK(id: id, to: &c.pending) { w in w.key("trace"); w.string(path) }
            } else {
                Reply.appendError(InputError("traceFailed", "the trace could not be reopened; see the daemon's log", id: id), to: &c.pending)
            }
        }
        c.flushPending()
    }

    private func replyTopics(id: JSONValue?, _ c: Connection) {
        Reply.appendOK(id: id, to: &c.pending) { w in
            w.key("seq"); w.int(engine.seq)
            w.key("topics"); w.beginArray()
            for t in Topic.allCases where c.topics & t.bit != 0 { w.string(t.rawValue) }
            w.endArray()
        }
    }

    private func writeStats(to w: inout JSONWriter) {
        w.beginObject()
        w.key("uptimeS"); w.number(Double((uv_hrtime() - startNs) / 1_000_000) / 1000)
        w.key("events"); w.int(Int(counters.events))
        w.key("rejected"); w.int(Int(counters.rejected))
        w.key("commands"); w.int(Int(counters.commands))
        w.key("publishes"); w.int(Int(counters.publishes))
        w.key("batches"); w.int(Int(counters.batches))
        w.key("batchedEvents"); w.int(Int(counters.batchedEvents))
        w.key("clients"); w.int(connections.count)
        w.key("subscribers"); w.int(subscribers.count)
        w.key("accepted"); w.int(Int(counters.accepted))
        w.key("dropped"); w.int(Int(counters.dropped))
        if let r = counters.lastDropReason { w.key("lastDropReason"); w.string(r) }
        w.key("oversizedLines"); w.int(Int(counters.oversized))
        w.key("forbidden"); w.int(Int(counters.forbidden))
        w.key("logDroppedLines"); w.int(Int(log.droppedLines))
        w.key("bytesIn"); w.int(Int(counters.bytesIn))
        w.key("bytesOut"); w.int(Int(counters.bytesOut))
        w.key("rssKiB"); w.int(Daemon.residentKiB())
        w.key("latency"); histogram.write(to: &w)
        if let trace { w.key("trace"); trace.writeStats(to: &w) }
        w.endObject()
    }

    /// Resident set size from /proc/self/statm, in KiB (0 if unreadable).
    static func residentKiB() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 128)
        let n = read(fd, &buf, buf.count)
        guard n > 0 else { return 0 }
        let fields = buf[0..<n].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    private func configJSON() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("socket"); w.string(socketPath)
        w.key("budgetUs"); w.int(Int(options.budgetUs))
        w.key("maxQueueBytes"); w.int(options.maxQueueBytes)
        w.key("lineLimit"); w.int(LineFramer.defaultLimit)
        w.endObject()
        return w.bytes
    }

    @discardableResult
    private func reopenTrace(reason: String) -> String? {
        guard let trace else {
            log.info("\(reason): no trace to reopen")
            return nil
        }
        do {
            let path = try trace.reopen(reason: reason)
            log.notice("\(reason): trace reopened as \(path)")
            return path
        } catch {
            log.error("\(reason): cannot reopen the trace: \(error)")
            return nil
        }
    }

    // MARK: - Connections

    /// Takes a connection out of every list; it gets no more pushes.
    func forget(_ c: Connection) {
        connections.removeAll { $0 === c }
        if c.topics != 0 { subscribers.removeAll { $0 === c } }
    }

    func drop(_ c: Connection, reason: String) {
        counters.dropped += 1
        counters.lastDropReason = reason
        log.warning("dropping client \(c.id)\(c.topics != 0 ? " (subscriber)" : ""): \(reason)")
        c.close()
    }

    // MARK: - Stopping

    /// Stops accepting, flushes, pushes `shutdown` to subscribers, closes every
    /// connection once its queue drains (or after a grace period), unlinks the
    /// socket; the loop then ends.
    func shutdown(reason: String) {
        guard !shuttingDown else { return }
        shuttingDown = true
        log.notice("\(reason): shutting down")
        notifier.send(NotifyMessage.stopping(status: "shutting down (\(reason))"))
        if serverOpen {
            serverOpen = false
            uv_close(asHandle(server), nil)
        }
        if let p = boundPath {
            unlink(p)
            boundPath = nil
        }
        flush()
        pushBuffer.removeAll(keepingCapacity: true)
        Reply.appendPush("shutdown", seq: engine.seq, to: &pushBuffer) { _ in }
        pushBuffer.withUnsafeBytes { bytes in
            for s in subscribers { s.send(bytes) }
        }
        // The trace is flushed before the last replies go out, so none is held back.
        trace?.close()
        trace = nil
        releaseHeldAcks()
        traceWake?.close()
        traceWake = nil
        for c in connections { c.closeAfterWrites() }
        check?.close()
        check = nil
        for s in signals { s.close() }
        signals.removeAll()
        for t in timers { t.close() }
        timers.removeAll()
        // Peers that do not read would hold their connection open: give them a moment.
        let grace = UVTimer(loop: loop) { [unowned self] in self.forceClose() }
        grace.start(afterMs: 1000, repeatMs: 0)
        grace.unref()
        timers.append(grace)
    }

    private func forceClose() {
        uv_walk(loop, { h, _ in
            guard let h, uv_is_closing(h) == 0, h.pointee.type == UV_NAMED_PIPE else { return }
            Connection.from(h.pointee.data).close()
        }, nil)
        for t in timers { t.close() }
        timers.removeAll()
    }
}
