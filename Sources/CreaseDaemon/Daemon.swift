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
    let notifier: Notifier
    let policy: AccessPolicy
    let socketGroup: gid_t?
    let environment: [String: String]
    @exclusivity(unchecked) var core: DaemonCore
    @exclusivity(unchecked) var actions: DaemonActions
    /// The trace sink, where the core's stats probe can reach it.
    let trace = TraceSlot()
    let traceFactory: TraceSinkFactory?

    let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    let server = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
    var serverOpen = false
    /// True when the socket came from systemd: it is not ours to unlink.
    var activated = false
    var boundPath: String?

    /// One read buffer serves every connection; `readSizer` decides how much of it a read may fill.
    @exclusivity(unchecked) var readSizer: ReadSizer
    let readBuffer: ReadBuffer
    /// Looked up per write: the runtime's exclusivity check cost as much as the lookup, and no access overlaps another.
    @exclusivity(unchecked) var connections: [Int: Connection] = [:]
    /// The connection the last write went to, while it is in `connections`: a client's replies
    /// mostly follow one another, and hashing its number per write cost ~130 instructions.
    @exclusivity(unchecked) var lastWritten: Connection?
    /// The actions of the inputs that decide nothing (bytes written, a client gone), which
    /// arrive while `actions` is being performed: always empty.
    @exclusivity(unchecked) var quiet = DaemonActions(logThreshold: .error)
    /// Clients dropped during a write, not yet told to the core (read after every write).
    @exclusivity(unchecked) var drops: [(client: Int, reason: String)] = []
    var nextClientID = 1
    var lastStatus = ""

    var traceWake: UVAsync?
    /// The periodic work (stats tick, watchdog, metrics file): `UVPeriodic`, so that no libuv
    /// timer is pending while the daemon serves.
    var ticks: [UVPeriodic] = []
    /// The shutdown's grace period for peers that do not read.
    var grace: UVTimer?
    /// `--metrics-textfile`: written by a thread of its own; the loop formats and hands over.
    var metrics: MetricsTextfile?
    var metricsFailure: String?
    /// The metrics file closes once its last figures are written.
    var metricsClosing = false
    /// The trace's figures as it closed, for the metrics file's last write.
    var closedTraceFigures: TraceFigures?
    var signals: [UVSignal] = []
    let refusedPeers = RefusedPeers()
    /// Whose lines wait for their next turn, and how long a turn lasts.
    @exclusivity(unchecked) var turns: ClientTurns
    var backlogTurn: UVIdle?
    var check: UVCheck?
    /// `--record-inputs`: what the core is told and decides.
    let recorder: InputRecorder?
    /// With `--resume`, the file this run continues (its first trace file names it).
    var resumedFrom: TraceHeader.ResumedFrom?

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
        turns = ClientTurns(budgetUs: options.budgetUs)
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
        var config = DaemonCore.Config(daemonName: "creased \(DaemonInfo.version)", budgetUs: options.budgetUs,
                                       socketActivated: false, policy: policy, lineLimit: options.maxLineBytes,
                                       labels: options.labels, settleNs: options.settleMs * 1_000_000, resume: resume)
        config.wholeLooks = options.wholeLooks
        core = DaemonCore(engine: engine, config: config, startNs: uv_hrtime())
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

    lazy var connectionCallbacks = ConnectionCallbacks(
        didRead: { [unowned self] c, nread, bytes in self.didRead(c, nread: nread, bytes: bytes) },
        // Called from a write while the action bytes are borrowed: inputs that decide nothing,
        // given an action list of their own.
        wrote: { [unowned self] n in
            self.recordInput(.bytesWritten(n), at: 0)
            self.core.handleBytesWritten(n)
        },
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
    func connection(_ id: Int) -> Connection? {
        if let last = lastWritten, last.id == id { return last }
        let found = connections[id]
        lastWritten = found
        return found
    }

    func forget(_ c: Connection) {
        connections[c.id] = nil
        if lastWritten === c { lastWritten = nil }
        turns.forget(c.id)
    }

    /// `--ready-fd`: one byte, then the descriptor is closed (the starter reads until it comes or
    /// the pipe ends). Standard output or error is pointed at /dev/null instead, so no later open
    /// takes its number and a stray print cannot reach a client's socket.
    func signalReady(fd: Int32) {
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

    func configJSON() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("socket"); w.string(socketPath)
        w.key("budgetUs"); w.int(Int(options.budgetUs))
        w.key("maxQueueBytes"); w.int(options.maxQueueBytes)
        w.key("lineLimit"); w.int(options.maxLineBytes)
        w.key("settleMs"); w.int(Int(options.settleMs))
        if options.wholeLooks { w.key("wholeLooks"); w.bool(true) }
        w.endObject()
        return w.bytes
    }

    @discardableResult
    func reopenTrace(reason: String) -> String? {
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

}

/// Holds the trace sink once it is open; nil without one or after shutdown.
final class TraceSlot {
    var sink: (any TraceSink)?
}
