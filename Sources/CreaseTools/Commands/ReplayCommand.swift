import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation

/// `crease replay TRACE [--verify] [--speed max|1|N] [--to SOCKET] [--each]`: replays a
/// trace in process (as fast as possible by default) or into a live daemon, the way a
/// rig streams. `--verify` checks every digest and stops at the first divergence
/// (exit 1), printing the seq, the event, both digests and, where the trace holds
/// layouts, the fields that differ.
enum ReplayCommand {
    static let usage = """
        crease replay TRACE [--verify] [--speed max|1|N] [--to SOCKET [--no-load] [--timeout S]] [--each]   (--each: every published layout)
               crease replay TOUR.jsonl --to SOCKET [--speed max|N] [--timeout S] [--looks]   (a tour from crease plan --tour;
               --looks: after each observe step, its expected observation, as a correct device would show it)
               crease replay PLAN.jsonl --to SOCKET [--timeout S] [--looks]   (a plan from crease plan: a load before each sequence;
               --looks: after each sequence, the page-source view of the daemon's layout as its observation)
               crease replay --verify PATH... [--daemon] [--jobs N] [--shard I/N] [--junit FILE] [--json]   (files and directories: a whole corpus)
               --daemon: also feed each trace through the daemon's decision core and check its records and batches
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let verify = args.flag("--verify")
        let daemon = args.flag("--daemon")
        let each = args.flag("--each")
        let speed = try Pacer.speed(try args.option("--speed"))
        let socket = try args.option("--to")
        let noLoad = args.flag("--no-load")
        let looks = args.flag("--looks")
        let timeoutGiven = args.has("--timeout")
        let timeout = try args.timeout()
        let jobs = try args.int("--jobs")
        let shard = try args.option("--shard").map(BatchVerify.parseShard)
        let junit = try args.option("--junit")
        let json = args.flag("--json")
        let paths = args.remainingPositionals()
        try args.finish()
        guard let path = paths.first else { throw UsageError("a trace file is needed") }
        if daemon, !verify { throw UsageError("--daemon checks the daemon's decisions: it goes with --verify") }
        if daemon, socket != nil || each || speed != 0 { throw UsageError("--daemon replays in process, as fast as it goes: no --to, --each or --speed") }
        let batchOptions = jobs != nil || shard != nil || junit != nil || json
        var isDirectory: ObjCBool = false
        let batch = paths.count > 1 || batchOptions || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
        if batch {
            guard verify else { throw UsageError("several traces, a directory, --jobs, --shard, --junit and --json go with --verify") }
            guard socket == nil, !each, speed == 0 else { throw UsageError("a corpus is verified in process, as fast as it goes: no --to, --each or --speed") }
            if let jobs, !(1...256).contains(jobs) { throw UsageError("--jobs must be between 1 and 256, not \(jobs)") }
            return try BatchVerify.run(paths, options: .init(jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount, shard: shard,
                                                             junit: junit, json: json, daemon: daemon))
        }
        if let socket, PlanReplay.looksLikePlan(path) {
            guard !verify, !each, !noLoad, speed == 0 else {
                throw UsageError("a plan goes into a daemon with --to [--timeout], as fast as it goes: every sequence's digest is always checked")
            }
            let plan = try PlanReplay.read(try Inputs.readFile(path, what: "plan", limit: InputFile.traceLimit), path: path)
            do { return try PlanReplay.intoDaemon(plan, path: path, socket: socket, timeout: timeout, looks: looks) } catch let e as CheckFailed {
                Console.err("crease replay: \(path): \(e)")
                return ExitStatus.checkFailed
            }
        }
        if looks, socket == nil || !TourReplay.looksLikeTour(path) { throw UsageError("--looks sends a tour's or a plan's looks: it goes with a tour or a plan and --to") }
        if let socket, TourReplay.looksLikeTour(path) {
            guard !verify, !each, !noLoad else { throw UsageError("a tour goes into a daemon with --to [--speed] [--timeout]: every reply's digest is always checked") }
            guard let tour = try TourReplay.read(try Inputs.readFile(path, what: "tour", limit: InputFile.traceLimit), path: path) else {
                throw UsageError("\(path): not a tour")
            }
            do { return try TourReplay.intoDaemon(tour, path: path, socket: socket, timeout: timeout, speed: speed, looks: looks) } catch let e as CheckFailed {
                Console.err("crease replay: \(path): \(e)")
                return ExitStatus.checkFailed
            }
        }
        if socket != nil && each { throw UsageError("--each prints in-process layouts; it does not go with --to") }
        if socket == nil && noLoad { throw UsageError("--no-load goes with --to") }
        if socket == nil && timeoutGiven { throw UsageError("--timeout bounds the wait for a daemon; it goes with --to") }
        // The in-process replay names the lines it skipped itself; the other ways read the
        // file once more first, to name them before they start.
        let fast = socket == nil && speed == 0 && !each
        var file: TraceFile
        var skipped: [TraceError] = []
        if fast {
            file = try TraceIO.load(path)
            file.skipsBadRecords = true
        } else {
            (file, skipped) = try TraceIO.loadForReading(path)
        }
        TraceIO.warnIfCut(file, name: path)
        do {
            if let socket { return try intoDaemon(file, path: path, socket: socket, timeout: timeout, speed: speed, verify: verify, load: !noLoad) }
            let (replayed, skippedByTheRun) = try inProcess(file, speed: speed, verify: verify, each: each)
            var status = replayed
            if fast {
                skipped = skippedByTheRun
                TraceIO.warnSkipped(skipped, name: path)
            }
            // The rest verified; a line that is no record is damage all the same.
            if verify, status == ExitStatus.success, !skipped.isEmpty {
                Console.out("\(Console.printable(path)): \(skipped.count) line\(skipped.count == 1 ? " is" : "s are") no record (named above) and could not be verified")
                status = ExitStatus.checkFailed
            }
            guard daemon, status == ExitStatus.success else { return status }
            return try verifyDaemon(file, path: path)
        } catch let e as TraceError {
            Console.err("crease replay: \(path): \(e)")
            return ExitStatus.checkFailed
        } catch let e as CheckFailed {
            Console.err("crease replay: \(path): \(e)")
            return ExitStatus.checkFailed
        }
    }

    /// `--verify --daemon`: the trace through `DaemonCore` (`DaemonReplay`).
    static func verifyDaemon(_ file: TraceFile, path: String) throws -> Int32 {
        let outcome = try DaemonReplay.run(file)
        if let d = outcome.divergence {
            for line in DaemonReplay.describe(d) { Console.out(line) }
            return ExitStatus.checkFailed
        }
        Console.err("crease replay: \(path): the daemon's core decides what the trace recorded: \(outcome.events) events, "
                    + "\(outcome.batches) batches, \(outcome.marks) marks, \(outcome.loads) loads, \(outcome.observations) observations"
                    + (outcome.segments > 1 ? " (\(outcome.segments - 1) gaps: the core restarted from each)" : ""))
        return ExitStatus.success
    }

    /// The exit status, and the lines the fast replay skipped (none listed for the paced one,
    /// whose caller named them before).
    static func inProcess(_ file: TraceFile, speed: Double, verify: Bool, each: Bool) throws -> (Int32, [TraceError]) {
        let started = TraceIO.monotonicNs()
        let outcome: ReplayOutcome
        if speed == 0 && !each {
            outcome = try TraceReplay.run(file, verify: verify)
        } else {
            outcome = try paced(file, speed: speed, verify: verify, each: each)
        }
        let elapsed = TraceIO.monotonicNs() - started
        if let d = outcome.divergence {
            for line in TraceIO.describe(d) { Console.out(line) }
            return (ExitStatus.checkFailed, outcome.skipped)
        }
        let rate = elapsed > 0 ? Double(outcome.eventsApplied) / (Double(elapsed) / 1e9) : 0
        let range = outcome.eventsApplied > 0 ? " (seq \(file.header.initialSeq + 1)…\(outcome.engine.seq))" : ""
        var observations = ""
        if verify, outcome.observationsChecked + outcome.observationsUnchecked > 0 {
            observations = " and \(outcome.observationsChecked) observation verdicts"
            if outcome.observationsUnchecked > 0 {
                observations += " (\(outcome.observationsUnchecked) more depend on what came before the file and were not checked)"
            }
        }
        Console.err("\(verify ? "verified" : "replayed") \(outcome.eventsApplied) events\(range)\(observations) in \(elapsed / 1_000_000) ms (\(Int(rate)) events/s); final digest \(Digest.hex(outcome.engine.digest))")
        return (ExitStatus.success, outcome.skipped)
    }

    /// Record by record, on the recorded schedule, printing layouts as the daemon published
    /// them: after each event that changed the layout, but once per recorded batch, at its end.
    static func paced(_ file: TraceFile, speed: Double, verify: Bool, each: Bool) throws -> ReplayOutcome {
        var published = try PublishedLayouts(file)
        var replayer = TraceReplayer(header: file.header, verify: verify)
        if verify, let d = replayer.checkInitial(file.header) {
            return ReplayOutcome(replayer, divergence: d)
        }
        let pacer = Pacer(speed: speed)
        var cursor = file.cursor()
        var lastDigest = replayer.engine.digest
        if each { Console.out(bytes: replayer.engine.layoutJSON()) }
        while let traced = try cursor.next() {
            if case .event(let e) = traced.record { pacer.wait(untilOffsetNs: e.t &- file.header.initialT) }
            if let d = try replayer.apply(traced) {
                return ReplayOutcome(replayer, divergence: d)
            }
            if each, case .event(let e) = traced.record, published.contains(e.seq), replayer.engine.digest != lastDigest {
                lastDigest = replayer.engine.digest
                Console.out(bytes: replayer.engine.layoutJSON())
            }
        }
        return ReplayOutcome(replayer, divergence: nil)
    }

    /// Streams the trace into a daemon the way a rig does. First a `load` puts the daemon
    /// where the trace starts (its profile, app and state, checked against the header's
    /// digest); a load record, or a gap, in the trace is sent as a load too. With
    /// `--no-load` the daemon must already be at the trace's starting digest. With
    /// `--verify` each event carries its seq as `id` and every reply's digest is checked.
    static func intoDaemon(_ file: TraceFile, path: String, socket: String, timeout: Double, speed: Double, verify: Bool, load: Bool) throws -> Int32 {
        // A live daemon digests with crease64v; older traces recorded crease64x4, crease64 or FNV-1a.
        if verify, file.header.digestAlgorithm != .crease64v {
            throw UsageError("\(path) is a version-\(file.header.version) trace with \(file.header.digestAlgorithm.name) digests, which a running creased does not compute: verify it in process (without --to)")
        }
        let client = try SocketStreamer(path: socket, timeout: timeout)
        let hello = try client.request(Array(#"{"cmd":"hello","id":"replay-hello"}"#.utf8), id: "replay-hello")
        var lineLimit = 65_536
        if case .number(let n)? = hello["lineLimit"] { lineLimit = Int(n) }
        /// A load that does not fit the daemon's line limit is said plainly, with the way out,
        /// instead of the daemon closing the connection on it.
        func fitting(_ line: [UInt8], what: String) throws -> [UInt8] {
            guard line.count + 1 > lineLimit else { return line }
            let needed = (line.count + 1 + 65_535) / 65_536 * 65_536
            throw CheckFailed("\(what) is a \(line.count + 1)-byte line, more than the daemon's \(lineLimit)-byte line limit: start creased with --max-line-bytes \(needed) or more")
        }
        let start = LoadRequest(header: file.header)
        if load {
            let reply = try client.request(try fitting(loadLine(start, id: "replay-load"), what: "the trace's starting load"), id: "replay-load")
            guard reply["ok"] == .bool(true) else {
                throw CheckFailed("the daemon refused to load the trace's starting state: \(errorText(reply))")
            }
        } else {
            guard case .string(let d) = hello["digest"], let digest = Digest.parseHex(d) else {
                throw CheckFailed("the daemon's hello has no digest")
            }
            guard digest == file.header.initialDigest else {
                throw CheckFailed("the daemon is at digest \(d), the trace starts at \(Digest.hex(file.header.initialDigest)): without --no-load, replay loads the trace's starting state first")
            }
        }
        var expected: [(seq: Int, digest: UInt64, event: [UInt8])] = []
        // Follows the trace, so a gap's state is read against the app of the moment.
        var replayer = TraceReplayer(header: file.header, verify: false)
        var cursor = file.cursor()
        let pacer = Pacer(speed: speed)
        var sent = 0
        var previousT: UInt64?
        while let traced = try cursor.next() {
            let before = replayer.engine
            _ = try replayer.apply(traced)
            switch traced.record {
            case .gap(let g):
                try client.send(try fitting(loadLine(LoadRequest(profile: before.profile, app: before.app, state: g.state, digest: g.digest),
                                                     id: "replay-gap-\(traced.line)"), what: "line \(traced.line)'s gap"))
                Console.err("line \(traced.line): \(g.lost) records were lost before seq \(g.seq); loading the state the trace resumes from")
            case .load(let l):
                var state = JSONWriter(capacity: 1024)
                l.state.write(to: &state, app: l.app)
                try client.send(try fitting(loadLine(LoadRequest(profile: l.profile, app: l.app, state: try JSON.parse(state.bytes), digest: l.digest),
                                                     id: "replay-load-\(l.seq)"), what: "line \(traced.line)'s load"))
            case .event(let e):
                // Events read together by the recording daemon go out together, each instant when due.
                if speed > 0, e.t != previousT {
                    try client.flush()
                    pacer.wait(untilOffsetNs: e.t &- file.header.initialT)
                }
                previousT = e.t
                var w = JSONWriter(capacity: 128)
                e.envelope.event.write(to: &w, ts: Int64(TraceIO.monotonicNs()), id: verify ? .number(Double(e.seq)) : nil)
                try client.send(try fitting(w.bytes, what: "line \(traced.line)'s event"))
                sent += 1
                if verify { expected.append((e.seq, e.digest, e.envelope.event.jsonBytes())) }
            case .mark, .batch, .layout, .observation, .frame:
                // Observations are judged against the recording's own timing: the in-process
                // replay (without --to) re-judges and verifies them. Frame verdicts are the
                // device's, not the daemon's to decide again.
                break
            }
        }
        let sync = try client.request(Array(#"{"cmd":"sync","id":"replay-sync"}"#.utf8), id: "replay-sync")
        client.shutdownWrites()
        let replies = client.collected()
        let errors = replies.filter { $0["ok"] == .bool(false) }
        if let first = errors.first {
            throw CheckFailed("the daemon rejected \(errors.count) line(s); first: \(errorText(first))")
        }
        if verify {
            var acks: [Int: UInt64] = [:]
            for r in replies {
                if case .number(let id)? = r["id"], case .string(let d)? = r["digest"], let digest = Digest.parseHex(d) { acks[Int(id)] = digest }
            }
            for x in expected {
                guard let got = acks[x.seq] else { throw CheckFailed("no reply for seq \(x.seq)") }
                if got != x.digest {
                    Console.out("divergence at seq \(x.seq): \(String(decoding: x.event, as: UTF8.self)): expected digest \(Digest.hex(x.digest)), the daemon answered \(Digest.hex(got))")
                    return ExitStatus.checkFailed
                }
            }
        }
        var digestText = "?"
        if case .string(let d)? = sync["digest"] { digestText = d }
        Console.err("sent \(sent) events to \(socket)\(load ? " from the loaded starting state" : "")\(verify ? ", every reply's digest matches" : ""); daemon digest \(digestText)")
        return ExitStatus.success
    }

    static func loadLine(_ request: LoadRequest, id: String) -> [UInt8] {
        var w = JSONWriter(capacity: 16 * 1024)
        request.write(to: &w, id: .string(id))
        return w.bytes
    }

    static func errorText(_ reply: JSONValue) -> String {
        var w = JSONWriter()
        w.value(reply)
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
