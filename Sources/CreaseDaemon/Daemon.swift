#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// The imperative shell: one libuv loop on one thread, the listening socket,
/// connections, timers and signals. It reads bytes, hands lines to `DaemonCore`
/// with the time, and performs the actions the core returns (writes, closes, trace
/// records, log lines).
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
    let policy: AccessPolicy
    let socketGroup: gid_t?
    let environment: [String: String]
    @exclusivity(unchecked) private var core: DaemonCore
    @exclusivity(unchecked) private var actions: DaemonActions
    /// The trace sink, where the core's stats probe can reach it.
    private let trace = TraceSlot()
    private let traceFactory: TraceSinkFactory?

    let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    let server = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
    var serverOpen = false
    /// True when the socket came from systemd: it is not ours to unlink.
    var activated = false
    var boundPath: String?

    /// One read buffer serves every connection; `readSizer` decides how much of it a read may fill.
    @exclusivity(unchecked) private var readSizer: ReadSizer
    private let readBuffer: ReadBuffer
    /// Looked up per write: the runtime's exclusivity check cost as much as the lookup, and no access overlaps another.
    @exclusivity(unchecked) private var connections: [Int: Connection] = [:]
    /// The connection the last write went to, while it is in `connections`: a client's replies
    /// mostly follow one another, and hashing its number per write cost ~130 instructions.
    @exclusivity(unchecked) private var lastWritten: Connection?
    /// The actions of the inputs that decide nothing (bytes written, a client gone), which
    /// arrive while `actions` is being performed: always empty.
    @exclusivity(unchecked) private var quiet = DaemonActions(logThreshold: .error)
    /// Clients dropped during a write, not yet told to the core (read after every write).
    @exclusivity(unchecked) private var drops: [(client: Int, reason: String)] = []
    private var nextClientID = 1
    private var lastStatus = ""

    private var traceWake: UVAsync?
    /// The periodic work (stats tick, watchdog, metrics file): `UVPeriodic`, so that no libuv
    /// timer is pending while the daemon serves.
    private var ticks: [UVPeriodic] = []
    /// The shutdown's grace period for peers that do not read.
    private var grace: UVTimer?
    /// `--metrics-textfile`: written by a thread of its own; the loop formats and hands over.
    private var metrics: MetricsTextfile?
    private var metricsFailure: String?
    /// The metrics file closes once its last figures are written.
    private var metricsClosing = false
    /// The trace's figures as it closed, for the metrics file's last write.
    private var closedTraceFigures: TraceFigures?
    private var signals: [UVSignal] = []
    private let refusedPeers = RefusedPeers()
    /// Clients whose lines wait for their next turn, in the order they ran out of it.
    private var backlog: [Connection] = []
    private var backlogTurn: UVIdle?
    /// The work one client may cost a loop turn before the others are served: a quarter
    /// of the latency budget, as a batch is cut at.
    private lazy var clientTurnNs: UInt64 = options.budgetUs * 250
    private var check: UVCheck?
    /// `--record-inputs`: what the core is told and decides.
    private let recorder: InputRecorder?
    /// With `--resume`, the file this run continues (its first trace file names it).
    private var resumedFrom: TraceHeader.ResumedFrom?

    /// Loads the profile and app; nothing is opened yet.
    public init(options: DaemonOptions, environment: [String: String], traceFactory: TraceSinkFactory?) throws(StartupError) {
        self.options = options
        self.environment = environment
        self.traceFactory = traceFactory
        let log = Logger(threshold: options.logLevel,
                         format: LogFormat(journal: LogFormat.stderrIsJournal(environment["JOURNAL_STREAM"])))
        self.log = log
        if let fd = options.readyFd, fcntl(fd, F_GETFD) == -1 {
            throw StartupError("--ready-fd \(fd) is not an open descriptor (pass the write end of a pipe)")
        }
        socketPath = SocketPath.resolve(explicit: options.socketPath, environment: environment)
        notifier = Notifier(socketName: environment["NOTIFY_SOCKET"])
        policy = try options.access.policy(resolve: AccessLookup.principal)
        socketGroup = try options.access.socketGroup.map(AccessLookup.socketGroup)
        readSizer = ReadSizer(budgetNs: options.budgetUs * 1000)
        readBuffer = ReadBuffer(capacity: ReadSizer.maximum, size: readSizer.size)
        var engine = try EngineLoader.engine(app: options.app, profilePath: options.profilePath)
        var resume: DaemonCore.Config.ResumeStatus?
        if options.resume, options.trace {
            let directory = TraceDirectory.resolve(explicit: options.traceDirectory, environment: environment)
            switch TraceResume.resume(directory: directory) {
            case .resumed(let point):
                engine = point.engine
                resumedFrom = point.from
                resume = .resumed(point.from, truncatedBytes: point.truncatedBytes)
                log.notice("resumed from \(point.from.file) at seq \(point.from.seq), digest \(Digest.hex(point.from.digest))"
                           + (point.truncatedBytes > 0 ? " (its cut tail of \(point.truncatedBytes) bytes truncated)" : "")
                           + "; app \"\(engine.appName)\", profile \"\(engine.profileName)\" from the trace")
            case .nothing:
                resume = .fresh("no trace in \(directory) to resume from")
                log.info("--resume: no trace in \(directory); starting fresh")
            case .failed(let why):
                resume = .fresh(why)
                log.warning("--resume: cannot resume: \(why); the file is left as it is and the daemon starts fresh")
            }
        }
        let recorder = options.recordInputs.map(InputRecorder.init(path:))
        self.recorder = recorder
        core = DaemonCore(engine: engine,
                          config: .init(daemonName: "creased \(DaemonInfo.version)", budgetUs: options.budgetUs,
                                        socketActivated: false, policy: policy, lineLimit: options.maxLineBytes,
                                        labels: options.labels, settleNs: options.settleMs * 1_000_000, resume: resume),
                          startNs: uv_hrtime())
        actions = DaemonActions(logThreshold: options.logLevel)
    }

    deinit {
        server.deallocate()
        loop.deallocate()
    }

    // MARK: - Running

    /// Opens the socket, reports readiness and runs the loop until a signal stops
    /// it. Returns when everything is closed.
    public func run() throws(StartupError) {
        for s in SignalPolicy.ignored { signal(s, SIG_IGN) }
        CrashSignals.install()
        // The socket accepts clients before the loop's signal handlers are in: until they are,
        // these signals stay blocked (pending), so one sent by a client that has just connected
        // is handled by the loop instead of meeting its default action (ending the daemon).
        // They are unblocked below, also when a parent left them blocked (a test runner, a
        // supervisor). The trace writer thread, started meanwhile, keeps them blocked: they go to the loop.
        var handled = SignalPolicy.handledSet
        pthread_sigmask(SIG_BLOCK, &handled, nil)
        uv_loop_init(loop)
        log.attach(loop: loop)
        defer {
            log.detach()
            uv_run(loop, UV_RUN_NOWAIT)  // the log handle's close callback
            uv_loop_close(loop)
        }
        do { try listen() } catch {
            pthread_sigmask(SIG_UNBLOCK, &handled, nil)
            throw error
        }
        recorder?.append(DaemonRecording.header(core: core, logLevel: options.logLevel))
        feed(.listening(socketActivated: activated, readersPerUid: options.maxReadersPerUid, readersTotal: Daemon.readerRoom()),
             at: uv_hrtime(), into: &actions)

        if options.trace, let factory = traceFactory {
            let wake = UVAsync(loop: loop) { [unowned self] in self.traceMovedOn() }
            traceWake = wake
            do {
                let sink = try factory(TraceContext(daemonVersion: DaemonInfo.version, engine: core.engine,
                                                    configJSON: configJSON(), directory: options.traceDirectory,
                                                    labels: options.labels, log: log, originNs: core.startNs, resumedFrom: resumedFrom,
                                                    wake: { wake.send() }))
                trace.sink = sink
                feed(.traceMode(.recording(layouts: sink.recordsLayouts, repliesWaitForDisk: sink.durableSeq != nil)), at: uv_hrtime(),
                            into: &actions)
            } catch {
                log.error("cannot open the trace: \(error); running without one (give --trace-dir a directory creased can create and write, or --no-trace to mean it)")
            }
        } else if options.trace, let dir = options.traceDirectory {
            log.warning("this build records no traces; --trace-dir \(dir) is not used")
        }

        for (signum, name, response) in SignalPolicy.handled {
            signals.append(UVSignal(loop: loop, signal: signum) { [unowned self] _ in
                switch response {
                case .shutdown: self.shutdown(reason: name)
                case .reopenTrace:
                    self.feed(.rotateTrace(reason: name), at: uv_hrtime(), into: &self.actions)
                    self.perform()
                case .logAndIgnore: self.log.notice("\(name) received; creased handles it by going on (docs/daemon.md)")
                }
            })
        }
        pthread_sigmask(SIG_UNBLOCK, &handled, nil)
        check = UVCheck(loop: loop) { [unowned self] in self.endIteration() }

        if let ms = NotifyMessage.watchdogIntervalMs(environment: environment, pid: getpid()) {
            ticks.append(try UVPeriodic(loop: loop, firstAfterMs: ms, everyMs: ms) { [unowned self] in self.notifier.send(NotifyMessage.watchdog) })
            log.info("watchdog ping every \(ms) ms")
        }
        ticks.append(try UVPeriodic(loop: loop, firstAfterMs: options.statsIntervalMs, everyMs: options.statsIntervalMs) { [unowned self] in
            self.feed(.statsTick, at: uv_hrtime(), into: &self.actions)
            self.perform()
            self.updateStatus()
        })
        if let path = options.metricsTextfile {
            metrics = MetricsTextfile(path: path)
            ticks.append(try UVPeriodic(loop: loop, firstAfterMs: 0, everyMs: options.metricsIntervalMs) { [unowned self] in self.writeMetrics() })
        }

        let status = "listening on \(socketPath); app \(core.engine.appName); profile \(core.engine.profileName)"
        notifier.send(NotifyMessage.ready(status: status))
        if let fd = options.readyFd { signalReady(fd: fd) }
        log.notice("creased \(DaemonInfo.version) \(status)\(activated ? " (socket activation)" : ""); budget \(options.budgetUs) us")

        uv_run(loop, UV_RUN_DEFAULT)
        log.notice("stopped after \(core.stats.events) events")
        if let recorder {
            do { try recorder.write() } catch { log.error("--record-inputs: \(error)") }
        }
    }


    // MARK: - Connections

    private lazy var connectionCallbacks = ConnectionCallbacks(
        didRead: { [unowned self] c, nread, bytes in self.didRead(c, nread: nread, bytes: bytes) },
        // Called from a write while the action bytes are borrowed: inputs that decide nothing,
        // given an action list of their own.
        wrote: { [unowned self] n in self.feed(.bytesWritten(n), at: 0, into: &self.quiet) },
        dropped: { [unowned self] c, reason in
            // Called from a write, while the action bytes are borrowed: the core hears of it
            // once the write is done (`perform`).
            self.drops.append((c.id, reason))
        },
        leaving: { [unowned self] c in
            self.forget(c)
            // A dropped client leaves from inside the write that dropped it: the core hears
            // of the drop (which closes it there too) once the write is done.
            guard !self.drops.contains(where: { $0.client == c.id }) else { return }
            self.feed(.closed(client: c.id), at: uv_hrtime(), into: &self.quiet)
        },
        readBuffer: readBuffer, log: log)

    func accept(status: Int32) {
        guard status == 0 else {
            log.warning("accept failed: \(uvErrorName(status))")
            return
        }
        let c = Connection(id: nextClientID, loop: loop, lineLimit: options.maxLineBytes,
                           queueLimit: options.maxQueueBytes, callbacks: connectionCallbacks)
        nextClientID += 1
        let rc = uv_accept(asStream(server), c.stream)
        guard rc == 0 else {
            log.warning("accept failed: \(uvErrorName(rc))")
            c.close()
            return
        }
        // Who connected (SO_PEERCRED), read once; the core decides what it may do.
        var fd: uv_os_fd_t = -1
        let peer = uv_fileno(asHandle(c.handle), &fd) == 0 ? AccessLookup.peer(fd: fd, groups: policy.needsGroups) : nil
        connections[c.id] = c
        feed(.connected(client: c.id, peer: peer), at: uv_hrtime(), into: &actions)
        perform()
    }

    /// The open connection numbered `id`, if any.
    private func connection(_ id: Int) -> Connection? {
        if let last = lastWritten, last.id == id { return last }
        let found = connections[id]
        lastWritten = found
        return found
    }

    private func forget(_ c: Connection) {
        connections[c.id] = nil
        if lastWritten === c { lastWritten = nil }
    }

    // MARK: - Input

    private func didRead(_ c: Connection, nread: Int, bytes: UnsafeRawPointer?) {
        guard c.state == .open else { return }
        if nread < 0 {
            if nread != Int(UV_EOF.rawValue) {
                log.debug("client \(c.id): read failed: \(uvErrorName(Int32(nread)))")
            }
            // Answer what it sent before it hung up, then close.
            feed(.endOfInput(client: c.id, unterminatedBytes: c.framer.partial.count), at: uv_hrtime(), into: &actions)
            perform()
            return
        }
        guard nread > 0, let bytes else { return }
        feed(.bytesRead(nread), at: 0, into: &actions)
        let readNs = uv_hrtime()
        let turnEnds = readNs &+ clientTurnNs
        let outcome = c.framer.feed(UnsafeRawBufferPointer(start: bytes, count: nread)) { line in
            self.handle(line, from: c, readAt: readNs, turnEnds: turnEnds)
        }
        if outcome == .ok, c.framer.partial.count < nread {
            // At least one whole line was handled: learn what a byte costs.
            readSizer.observe(bytes: nread, ns: uv_hrtime() &- readNs)
            readBuffer.size = readSizer.size
        }
        settle(outcome, of: c, readAt: readNs)
    }

    /// One line of `c`'s, read at `readNs`; false when `c` is gone or its turn is over.
    @inline(__always)
    private func handle(_ line: UnsafeRawBufferPointer, from c: Connection, readAt readNs: UInt64, turnEnds: UInt64) -> Bool {
        feed(.line(line, client: c.id, readNs: readNs), at: uv_hrtime(), into: &actions)
        let now = uv_hrtime()
        feed(.lineHandled, at: now, into: &actions)
        if !actions.isEmpty { perform() }
        return c.state == .open && now < turnEnds
    }

    /// After a feed: a line too long ends the connection; lines held back because `c`'s turn
    /// ran out wait in the backlog, with its reading paused, for the next loop turn.
    private func settle(_ outcome: LineFramer.Outcome, of c: Connection, readAt readNs: UInt64) {
        if case .lineTooLong(let length) = outcome {
            feed(.lineTooLong(client: c.id, length: length), at: uv_hrtime(), into: &actions)
            perform()
            return
        }
        guard c.state == .open else { return }
        if c.framer.held.isEmpty {
            c.resumeReading()
            return
        }
        if !c.paused {
            c.heldReadNs = readNs
            c.pauseReading()
            backlog.append(c)
            if backlogTurn == nil { backlogTurn = UVIdle(loop: loop) { [unowned self] in self.serveBacklog() } }
            backlogTurn?.start()
        }
    }

    /// One turn for each client whose lines wait: a client sending heavy commands (a
    /// stream of 61 KB loads) gets `clientTurnNs` of work per loop turn, then the others
    /// have theirs; it once cut another client's 1 kHz hinge stream to 13 Hz.
    private func serveBacklog() {
        let waiting = backlog
        backlog.removeAll(keepingCapacity: true)
        for c in waiting where c.state == .open {
            let readNs = c.heldReadNs
            let turnEnds = uv_hrtime() &+ clientTurnNs
            let outcome = c.framer.resume { line in self.handle(line, from: c, readAt: readNs, turnEnds: turnEnds) }
            if c.state == .open, !c.framer.held.isEmpty, outcome != .ok {
                backlog.append(c)
            } else {
                settle(outcome, of: c, readAt: readNs)
            }
        }
        if backlog.isEmpty { backlogTurn?.stop() }
    }

    // MARK: - Performing

    /// An input for the core (recorded first, under `--record-inputs`).
    @inline(__always)
    private func feed(_ input: DaemonInput, at now: UInt64, into out: inout DaemonActions) {
        if let recorder { recorder.append(DaemonRecording.input(input, at: now)) }
        core.handle(input, at: now, into: &out)
    }

    /// The loop finished an iteration: the open batch publishes, then what its relayouts
    /// evicted is freed, after the replies. One method, so the check handle's closure
    /// touches its unowned `self` once (each touch is a strong retain).
    private func endIteration() {
        feed(.endOfIteration, at: uv_hrtime(), into: &actions)
        perform()
        feed(.repliesSent, at: 0, into: &actions)
    }

    /// Performs what the core decided, in order, and empties the list.
    private func perform() {
        var i = 0
        // Performing may add actions (a trace reopen's answer): read the list afresh each time.
        while i < actions.list.count {
            if let action = actions.frequent(at: i) {
                switch action {
                case .write(let client, let range):
                    if let c = connection(client) {
                        actions.bytes.withUnsafeBytes { c.send(UnsafeRawBufferPointer(rebasing: $0[range])) }
                        if !drops.isEmpty { handleDrops() }
                    }
                case .event(let event): record(event)
                case .queued(let tNs): trace.sink?.eventsQueued(atNs: tNs) { core.engine }
                case .flushTrace: trace.sink?.flush()
                }
                i += 1
                continue
            }
            switch actions.list[i] {
            case .write, .flushTrace:
                break   // performed above, as `frequent`
            case .closeAfterWrites(let client):
                connections[client]?.closeAfterWrites()
            case .startReading(let client):
                guard let c = connections[client] else { break }
                let r = c.startReading()
                if r != 0 {
                    log.warning("client \(client): cannot read: \(uvErrorName(r))")
                    c.close()
                }
            case .refuse(let client):
                guard let c = connections[client] else { break }
                forget(c)
                c.refuse(lingering: refusedPeers)
            case .record(let entry):
                record(entry)
            case .reopenTrace(let reason, let client, let id):
                let path = reopenTrace(reason: reason)
                if let client { feed(.traceReopened(path: path, client: client, id: id), at: uv_hrtime(), into: &actions) }
            case .log(let level, let message):
                log.log(level, message)
            case .sampleGauges:
                feed(.gauges(sampleGauges()), at: uv_hrtime(), into: &actions)
            case .metrics(let range):
                submitMetrics(actions.bytes[range])
            case .stopAccepting(let status):
                stopAccepting(status: status)
            case .closeTrace:
                closeTrace()
            case .closeConnections(let graceMs):
                closeConnections(graceMs: graceMs)
            }
            i += 1
        }
        if let recorder, !actions.isEmpty { recorder.append(DaemonRecording.actions(actions)) }
        actions.removeAll()
        if core.holdsAcks, let sink = trace.sink, let durable = sink.durableSeq {
            feed(.durable(seq: durable, awaitedRecords: sink.durableAwaitedRecords ?? .max), at: uv_hrtime(), into: &actions)
            if !actions.isEmpty { perform() }
        }
    }

    /// Clients the last write dropped (their queue passed its limit), told to the core.
    private func handleDrops() {
        for (client, reason) in drops { feed(.dropped(client: client, reason: reason), at: uv_hrtime(), into: &actions) }
        drops.removeAll()
    }

    private func record(_ entry: DaemonActions.TraceEntry) {
        guard let sink = trace.sink else { return }
        switch entry {
        case .event(let e):
            record(e)
        case .queued(let tNs):
            sink.eventsQueued(atNs: tNs) { core.engine }
        case .load(let tNs, let load):
            sink.recordLoad(tNs: tNs, load: load, state: core.engine)
        case .batch(let first, let last):
            sink.recordBatch(firstSeq: first, lastSeq: last)
        case .mark(let seq, let tNs, let label):
            sink.recordMark(seq: seq, tNs: tNs, label: label)
        case .observation(let tNs, let client, let line, let result, let captured):
            actions.bytes.withUnsafeBytes {
                sink.recordObservation(tNs: tNs, client: client, commandLine: UnsafeRawBufferPointer(rebasing: $0[line]), result: result,
                                       captured: captured)
            }
        }
    }

    private func record(_ e: EventRecord) {
        guard let sink = trace.sink else { return }
        actions.bytes.withUnsafeBytes { sink.recordEvent(e, in: $0) }
    }

    /// The trace writer moved its durable seq (or the trace is gone): held replies may go.
    private func traceMovedOn() {
        feed(.durable(seq: trace.sink?.durableSeq ?? .max, awaitedRecords: trace.sink?.durableAwaitedRecords ?? .max), at: uv_hrtime(),
                    into: &actions)
        perform()
    }

    /// A STATUS= line for `systemctl status`, when something changed.
    private func updateStatus() {
        guard notifier.enabled else { return }
        let status = core.status()
        guard status != lastStatus else { return }
        lastStatus = status
        notifier.send(NotifyMessage.status(status))
    }

    /// `--ready-fd`: one byte, then the descriptor is closed (the starter reads until it comes or
    /// the pipe ends). Standard output or error is pointed at /dev/null instead, so no later open
    /// takes its number and a stray print cannot reach a client's socket.
    private func signalReady(fd: Int32) {
        var byte: UInt8 = 0x0A
        if write(fd, &byte, 1) != 1 { log.warning("--ready-fd \(fd): cannot write: \(String(cString: strerror(errno)))") }
        if fd <= 2 {
            let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
            if null >= 0 {
                dup2(null, fd)
                close(null)
            }
        } else {
            close(fd)
        }
    }

    /// What the core asked for: the resident size, the log's dropped lines, the trace's figures.
    private func sampleGauges() -> SampledGauges {
        SampledGauges(residentKiB: Daemon.residentKiB(), logDroppedLines: log.droppedLines, trace: trace.sink?.figures ?? closedTraceFigures)
    }

    /// The metrics timer: the core takes its figures and asks for the gauges (`metrics` follows).
    private func writeMetrics() {
        feed(.metricsTick, at: uv_hrtime(), into: &actions)
        perform()
    }

    /// Hands the stats (`metrics`), as Prometheus text, to the metrics file's writer; logs a
    /// failure of the last write once (and its end). The last figures close the file.
    private func submitMetrics(_ json: ArraySlice<UInt8>) {
        guard let metrics else { return }
        guard let stats = try? JSON.parse(Array(json)) else { return }
        metrics.submit(OpenMetrics.format(stats: stats, dialect: .prometheusText, rig: OpenMetrics.rigName(socketPath: socketPath)))
        let failure = metrics.status.failure
        if failure != metricsFailure {
            if let failure { log.warning("metrics: \(failure)") } else { log.notice("metrics: writing \(metrics.path) again") }
            metricsFailure = failure
        }
        if metricsClosing {
            metrics.close()
            self.metrics = nil
        }
    }

    /// Descriptors kept for publishers: read-only connections stop short of them.
    static let publisherReserve = 16

    /// How many read-only connections the descriptor limit leaves room for, once the daemon's
    /// own descriptors (counted now, after the socket and the trace are open) and the
    /// publishers' reserve are taken off.
    static func readerRoom() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return .max }
        var own = 0
        if let dir = opendir("/proc/self/fd") {
            while readdir(dir) != nil { own += 1 }
            closedir(dir)
            own -= 3  // ".", ".." and the directory's own descriptor
        }
        return max(1, Int(limit.rlim_cur) - max(own, 0) - publisherReserve)
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
        w.key("lineLimit"); w.int(options.maxLineBytes)
        w.key("settleMs"); w.int(Int(options.settleMs))
        w.endObject()
        return w.bytes
    }

    @discardableResult
    private func reopenTrace(reason: String) -> String? {
        guard let sink = trace.sink else {
            log.info("\(reason): no trace to reopen")
            return nil
        }
        do {
            let path = try sink.reopen(reason: reason, state: core.engine)
            log.notice("\(reason): trace reopened as \(path)")
            return path
        } catch {
            log.error("\(reason): cannot reopen the trace: \(error)")
            return nil
        }
    }

    // MARK: - Stopping

    /// Stopping: the core says in which order (`DaemonCore.shutdown`); the loop then ends.
    func shutdown(reason: String) {
        feed(.shutdown(reason: reason), at: uv_hrtime(), into: &actions)
        perform()
    }

    private func stopAccepting(status: String) {
        notifier.send(NotifyMessage.stopping(status: status))
        if serverOpen {
            serverOpen = false
            uv_close(asHandle(server), nil)
        }
        if let p = boundPath {
            unlink(p)
            boundPath = nil
        }
    }

    /// Performed inside `perform`: what the core answers joins the list being performed.
    private func closeTrace() {
        trace.sink?.close()
        // The metrics file's last figures are sampled after this: the trace's final counts stay in it.
        closedTraceFigures = trace.sink?.figures
        closeMetrics()
        trace.sink = nil
        feed(.traceClosed, at: uv_hrtime(), into: &actions)
    }

    /// The last figures asked for: performed inside `perform`, where the `metrics` action they
    /// end in writes them and then stops the metrics file's thread (once).
    private func closeMetrics() {
        guard metrics != nil, !metricsClosing else { return }
        metricsClosing = true
        feed(.metricsTick, at: uv_hrtime(), into: &actions)
    }

    private func closeConnections(graceMs: Int) {
        closeMetrics()
        traceWake?.close()
        traceWake = nil
        for id in connections.keys.sorted() { connections[id]?.closeAfterWrites() }
        check?.close()
        check = nil
        backlog.removeAll()
        backlogTurn?.close()
        backlogTurn = nil
        for s in signals { s.close() }
        signals.removeAll()
        for t in ticks { t.close() }
        ticks.removeAll()
        // Peers that do not read would hold their connection open: give them a moment.
        let grace = UVTimer(loop: loop) { [unowned self] in self.forceClose() }
        grace.start(afterMs: UInt64(graceMs))
        grace.unref()
        self.grace = grace
    }

    private func forceClose() {
        uv_walk(loop, { h, _ in
            guard let h, uv_is_closing(h) == 0, h.pointee.type == UV_NAMED_PIPE else { return }
            Connection.from(h.pointee.data).close()
        }, nil)
        grace?.close()
        grace = nil
    }
}

/// Holds the trace sink once it is open; nil without one or after shutdown.
private final class TraceSlot {
    var sink: (any TraceSink)?
}
