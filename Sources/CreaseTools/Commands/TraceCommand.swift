#if canImport(Glibc)
import Glibc
#endif
import CreaseCore

/// `crease trace check|info|slice|diff|export|bench|glitches|minimize`: offline tools over trace files.
enum TraceCommand {
    static let usage = """
        crease trace check FILE [--fix]            structure of every line; --fix truncates a cut tail
               crease trace info FILE [--json]            header, duration, events by type, pose timeline, latency, layout shift
               crease trace slice FILE --from SEQ --to SEQ [-o OUT]   a self-contained trace of those events
               crease trace diff A B                      the first divergence between two runs
               crease trace why FILE --seq N [--item ID | --field PATH] [--json]   the rule that placed a control (or decided
                                                          a field; the bar's axis by default), the inputs it read, the events that set them
               crease trace diff ORIGINAL REPLAY --by-event [--run N] [--tolerance DEG] [--json]   a hardware replay against its original, look by look
               crease trace export FILE --chrome [-o OUT] Chrome trace-event JSON (Perfetto, chrome://tracing)
               crease trace bench FILE [--repeat N]       replay --verify against reading and JSON-decoding the lines
               crease trace conformance FILE [--junit OUT] [--json]   observations by verdict, worst items; exit 1 on a mismatch
               crease trace glitches FILE [--json] [--ignore KIND[:SUBJECT]]... [--layout-shift SCORE] \(GlitchCLI.thresholdUsage)
                                                          replay and check for glitches; exit 1 when any is found
               crease trace minimize FILE (--glitch KIND [--subject ID] | --diverges OTHER_BUILD_TRACE | --until 'CMD') [--rig RIG.json] -o OUT
                                                          the fewest events (and, for a mismatch, observations) that still
                                                          show it, their values shrunk to round numbers
               crease trace index DIR [--json] [--label KEY=VALUE]...   one row per trace file under DIR (recursively);
                                                          --json: JSON Lines; --label: only files whose header has it
               crease trace rebase PATH... (-o DIR | --in-place | --check)   this build's digests and verdicts after an
                                                          intended rule change; what changed, per trace and grouped
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        guard let sub = args.positional() else { throw UsageError("a subcommand is needed: check, info, slice, diff, export, bench, conformance, glitches, minimize, why, index, rebase") }
        do {
            switch sub {
            case "check": return try check(&args)
            case "info": return try info(&args)
            case "slice": return try slice(&args)
            case "diff": return try diff(&args)
            case "export": return try export(&args)
            case "bench": return try bench(&args)
            case "conformance": return try conformance(&args)
            case "glitches": return try glitches(&args)
            case "minimize": return try minimize(&args)
            case "why": return try why(&args)
            case "index": return try index(&args)
            case "rebase": return try rebase(&args)
            default: throw UsageError("unknown subcommand \"\(sub)\": check, info, slice, diff, export, bench, conformance, glitches, minimize, why, index or rebase")
            }
        } catch let e as TraceError {
            Console.err("crease trace \(sub): \(e)")
            return ExitStatus.checkFailed
        } catch let e as CheckFailed {
            Console.err("crease trace \(sub): \(e)")
            return ExitStatus.checkFailed
        }
    }

    static func onePath(_ args: inout Arguments) throws -> String {
        guard let path = args.positional() else { throw UsageError("a trace file is needed") }
        return path
    }

    // MARK: index

    /// Rows for every trace under DIR whose header carries every `--label`; files that are
    /// not traces are named on stderr and skipped. Exit 1 when any trace is damaged, else 0.
    static func index(_ args: inout Arguments) throws -> Int32 {
        let json = args.flag("--json")
        var wanted: [Label] = []
        for text in try args.options("--label") {
            do { wanted.append(try Label(parsing: text)) } catch { throw UsageError("--label takes KEY=VALUE: \(error.message)") }
        }
        guard let directory = args.positional() else { throw UsageError("a directory is needed") }
        try args.finish()
        var damaged = 0
        for path in try TraceIndex.files(under: directory) {
            let bytes: [UInt8]
            do { bytes = try TraceIO.readWhole(path) } catch {
                Console.err("crease trace index: skipped \(path): \(error)")
                continue
            }
            // The header alone decides the filter: files it leaves out are not replayed.
            let labels = TraceIndex.labels(of: bytes)
            guard wanted.allSatisfy({ labels[$0.key] == .string($0.value) }) else { continue }
            guard let row = TraceIndex.row(path: path, bytes: bytes) else {
                Console.err("crease trace index: skipped \(path): not a trace")
                continue
            }
            if row["damaged"] != .null { damaged += 1 }
            if json { Console.out(bytes: JSONWriter.encode(row)) } else { Console.out(TraceIndex.line(row)) }
        }
        return damaged > 0 ? ExitStatus.checkFailed : ExitStatus.success
    }

    // MARK: check

    /// Streams the file (memory bounded by a chunk and the longest line, whatever its size)
    /// and replays every complete record.
    static func check(_ args: inout Arguments) throws -> Int32 {
        let fix = args.flag("--fix")
        let path = try onePath(&args)
        try args.finish()
        var stream = try TraceLineStream(path: path)
        defer { stream.close() }
        guard let first = stream.next() else {
            let what = stream.size == 0 ? "the file is empty"
                : "the header is incomplete: \(stream.cut?.allNUL == true ? "the file is all NUL bytes" : "no newline in its first \(TraceLineStream.lineLimit) bytes")"
            Console.out("\(path): line 1 (byte 0): \(what)")
            return ExitStatus.checkFailed
        }
        let header: TraceHeader
        do { header = try TraceHeader.decode(first.bytes) } catch {
            Console.out("\(path): \(error)")
            return ExitStatus.checkFailed
        }
        var replayer = TraceReplayer(header: header, verify: false)
        var inPlace = LoadContext(header)
        var counts = (records: 0, events: 0, loads: 0, marks: 0, batches: 0, layouts: 0, gaps: 0, observations: 0, frames: 0)
        do {
            while let line = stream.next() {
                if line.bytes.isEmpty { continue }
                let record: TraceRecord
                do {
                    record = try line.bytes.withUnsafeBufferPointer { (b) throws(TraceError) in try TraceRecord.decode(b, inPlace: inPlace) }
                } catch { throw TraceError(error.message, line: line.number, offset: line.offset) }
                inPlace = inPlace.following(record)
                let traced = TracedRecord(record: record, line: line.number, offset: line.offset, length: line.bytes.count)
                if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                    throw TraceError("the event cannot be applied: \(error)", line: traced.line, offset: traced.offset)
                }
                counts.records += 1
                switch record {
                case .event: counts.events += 1
                case .mark: counts.marks += 1
                case .batch: counts.batches += 1
                case .layout: counts.layouts += 1
                case .gap: counts.gaps += 1
                case .load: counts.loads += 1
                case .observation: counts.observations += 1
                case .frame: counts.frames += 1
                }
            }
        } catch let e as TraceError {
            Console.out("\(path): damaged: \(e)")
            if fix { Console.out("not fixed: --fix only truncates a cut tail; a damaged line in the middle needs a look") }
            return ExitStatus.checkFailed
        }
        let h = header
        Console.out("\(path): trace v\(h.version) from \(h.daemon), app \(h.app.name), part \(h.part) (\(h.reason))")
        Console.out("\(counts.records) records: \(counts.events) events (seq \(h.initialSeq + 1)…\(replayer.engine.seq)), \(counts.loads) loads, \(counts.marks) marks, \(counts.batches) batches, \(counts.layouts) layouts, \(counts.gaps) gaps, \(counts.observations) observations\(counts.frames > 0 ? ", \(counts.frames) frame verdicts" : "")")
        guard let cut = stream.cut else {
            Console.out("ok")
            return ExitStatus.success
        }
        Console.out("cut tail: the trace is cut at byte \(cut.offset) (line \(cut.line), \(cut.length) byte\(cut.length == 1 ? "" : "s") of an incomplete record ignored)"
                    + (cut.allNUL ? "; all of them NUL bytes (a file extended past its data by a crash)" : ""))
        guard fix else {
            Console.out("run with --fix to truncate the file to its last complete record (byte \(cut.offset))")
            return ExitStatus.checkFailed
        }
        guard truncate(path, off_t(cut.offset)) == 0 else {
            throw UsageError("cannot truncate \(path): \(String(cString: strerror(errno)))")
        }
        Console.out("fixed: truncated to \(cut.offset) bytes")
        return ExitStatus.success
    }

    // MARK: info

    static func info(_ args: inout Arguments) throws -> Int32 {
        let json = args.flag("--json")
        let path = try onePath(&args)
        try args.finish()
        let file = try TraceIO.loadForReading(path).file
        let s = try TraceInfo.summarize(file)
        if json {
            let report = try TraceGlitches.check(file, options: GlitchOptions())
            Console.out(bytes: infoJSON(s, report: report))
            return ExitStatus.success
        }
        // Every line may hold text from the file (names, labels, marks): escaped for the terminal.
        func show(_ line: String) { Console.out(Console.printable(line)) }
        let h = s.header
        func ms(_ ns: UInt64) -> String {
            let v = Double(ns) / 1e6
            return v >= 100 ? "\(Int(v.rounded())) ms" : "\((v * 1000).rounded() / 1000) ms"
        }
        show("trace      \(path)")
        show("recorded   \(h.daemon), started \(h.started), part \(h.part) (\(h.reason))")
        if let r = h.resumedFrom {
            show("resumed    from \(r.file) at seq \(r.seq), digest \(Digest.hex(r.digest)): a restarted daemon continued that run here")
        }
        if !h.labels.isEmpty { show("labels     " + h.labels.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")) }
        show("app        \(h.app.name); profile \(h.profile.name) (hysteresis \(h.profile.hingeHysteresis)°)")
        var config = JSONWriter()
        config.value(h.config)
        show("config     \(String(decoding: config.bytes, as: UTF8.self))\(h.layouts ? "; layouts recorded" : "")")
        show("seq        \(s.firstSeq.map { "\($0)…\(s.lastSeq!)" } ?? "none") (from \(h.initialSeq))")
        show("duration   \(ms(s.durationNs)) over \(s.records) records")
        show("events     \(s.events): " + s.eventsByType.map { "\($0.name) \($0.count)" }.joined(separator: ", "))
        show("batches    \(s.batches) (\(s.batchedEvents) events, largest \(s.largestBatch))")
        for m in s.marks { show("mark       seq \(m.seq) at \(ms(m.t - min(m.t, h.initialT))): \(m.label)") }
        for a in s.appReplacements { show("app        replaced by \(a.name) at seq \(a.seq)") }
        for l in s.loads { show("load       \(l.app) and a state loaded at seq \(l.seq)") }
        for g in s.gaps { show("gap        \(g.lost) records lost before seq \(g.seq): \(g.reason)") }
        if s.observations.reduce(0, +) > 0 {
            show("observed   " + zip(Verdict.allCases, s.observations).map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", "))
        }
        show("poses      \(s.poseTimeline.count) phases")
        let shown = s.poseTimeline.count > 24 ? Array(s.poseTimeline.prefix(12)) + Array(s.poseTimeline.suffix(12)) : s.poseTimeline
        for (i, p) in shown.enumerated() {
            if s.poseTimeline.count > 24, i == 12 { show("  … \(s.poseTimeline.count - 24) more") }
            show("  seq \(String(p.seq).padding(toLength: 7, withPad: " ", startingAt: 0)) \(ms(p.t - min(p.t, h.initialT)).padding(toLength: 12, withPad: " ", startingAt: 0)) \(p.pose.rawValue) (\(p.display.rawValue))")
        }
        show("orientations \(s.orientationTimeline.count) phases (interface orientation; device orientation and lock as the state held them)")
        let turns = s.orientationTimeline.count > 24 ? Array(s.orientationTimeline.prefix(12)) + Array(s.orientationTimeline.suffix(12)) : s.orientationTimeline
        for (i, o) in turns.enumerated() {
            if s.orientationTimeline.count > 24, i == 12 { show("  … \(s.orientationTimeline.count - 24) more") }
            let device = o.device.map { "device \($0.rawValue)" } ?? "set directly"
            show("  seq \(String(o.seq).padding(toLength: 7, withPad: " ", startingAt: 0)) \(ms(o.t - min(o.t, h.initialT)).padding(toLength: 12, withPad: " ", startingAt: 0)) \(o.orientation.rawValue) (\(device)\(o.locked ? ", locked" : ""))")
        }
        if let a = s.interArrival {
            show("interval   between events: p50 \(ms(a.p50)), p99 \(ms(a.p99)), max \(ms(a.max))")
        }
        func figures(_ p: Percentiles) -> String { "(\(p.count) events): min \(ms(p.min)), p50 \(ms(p.p50)), p99 \(ms(p.p99)), max \(ms(p.max))" }
        show("latency    sender ts → daemon read " + (s.transportLatency.map(figures) ?? "(no sender timestamps on the daemon's clock)"))
        show("           daemon read → layout queued " + (s.relayoutLatency.map(figures) ?? "(not recorded in this trace)"))
        let checked = try TraceGlitches.check(file, options: GlitchOptions())
        let glitches = checked.glitches
        show("glitches   \(GlitchCLI.summary(glitches, of: "the published layouts and events"))")
        for g in glitches.prefix(20) { show("  \(GlitchCLI.line(g))") }
        if glitches.count > 20 { show("  … \(glitches.count - 20) more (crease trace glitches lists them all)") }
        let shifts = checked.shifts
        if let worst = shifts.windows.max(by: { $0.score < $1.score }) {
            show("shift      layout-shift score \(LayoutShift.text(shifts.max)) (the largest of \(shifts.windows.count) session windows: seq \(worst.fromSeq)…\(worst.toSeq))")
        } else {
            show("shift      layout-shift score 0 (no control moved under the user)")
        }
        if let w = s.cutWarning { show("warning    \(w)") }
        return ExitStatus.success
    }

    /// `trace info --json`: the figures a lab's tooling reads, as one object.
    static func infoJSON(_ s: TraceSummary, report: TraceGlitches.Report) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("events"); w.int(s.events)
        w.key("firstSeq"); if let f = s.firstSeq { w.int(f) } else { w.null() }
        w.key("lastSeq"); if let l = s.lastSeq { w.int(l) } else { w.null() }
        w.key("durationNs"); w.int(Int(s.durationNs))
        w.key("layouts"); w.int(report.layouts)
        w.key("glitches"); w.beginObject()
        for kind in GlitchKind.allCases { w.key(kind.rawValue); w.int(report.glitches.count { $0.kind == kind }) }
        w.endObject()
        w.key("layoutShift"); w.beginObject()
        w.key("max"); w.number(report.shifts.max)
        w.key("windows"); w.beginArray()
        for win in report.shifts.windows {
            w.beginObject(); w.key("fromSeq"); w.int(win.fromSeq); w.key("toSeq"); w.int(win.toSeq); w.key("score"); w.number(win.score); w.endObject()
        }
        w.endArray()
        w.endObject()
        w.key("frames"); w.beginObject()
        for (kind, n) in zip(FrameVerdict.Kind.allCases, s.frames) { w.key(kind.rawValue); w.int(n) }
        w.endObject()
        w.endObject()
        return w.bytes
    }

    // MARK: why

    /// `crease trace why TRACE --seq N [--item ID | --field PATH] [--json]` (see `WhyCommand`).
    static func why(_ args: inout Arguments) throws -> Int32 {
        guard let seq = try args.int("--seq") else { throw UsageError("--seq N is needed: the layout to explain") }
        let subject = try WhyCommand.subject(&args)
        let json = args.flag("--json")
        let path = try onePath(&args)
        try args.finish()
        let (why, origin) = try WhyCheckpointFile.explain(path, seq: seq, subject: subject)
        WhyCommand.print(why, origin: origin, json: json)
        return ExitStatus.success
    }

    // MARK: slice

    static func slice(_ args: inout Arguments) throws -> Int32 {
        guard let from = try args.int("--from"), let to = try args.int("--to") else { throw UsageError("--from SEQ and --to SEQ are needed") }
        let out = try args.option("-o") ?? args.option("--output")
        let path = try onePath(&args)
        try args.finish()
        let file = try TraceIO.load(path)
        TraceIO.warnIfCut(file, name: path)
        let result = try TraceSlice.slice(file, from: from, to: to)
        try TraceIO.write(result.bytes, to: out)
        if out != nil { Console.err("sliced \(result.events) events (seq \(from)…\(from + result.events - 1)) into \(out!)") }
        return ExitStatus.success
    }

    // MARK: diff

    static func diff(_ args: inout Arguments) throws -> Int32 {
        let byEvent = args.flag("--by-event")
        let run = try args.int("--run")
        let tolerance = try args.double("--tolerance")
        let json = args.flag("--json")
        let paths = args.remainingPositionals()
        try args.finish()
        guard paths.count == 2 else { throw UsageError("two traces are needed") }
        if !byEvent, run != nil || tolerance != nil || json { throw UsageError("--run, --tolerance and --json go with --by-event") }
        let a = try TraceIO.loadForReading(paths[0]).file, b = try TraceIO.loadForReading(paths[1]).file
        if byEvent {
            if let run, run < 1 { throw UsageError("--run takes 1 or more") }
            if let tolerance, !(0...45).contains(tolerance) { throw UsageError("--tolerance takes degrees from 0 to 45") }
            let alignment: TraceAlignment
            do { alignment = try TraceAlignment.align(original: a, replay: b, run: run, hingeTolerance: tolerance ?? 1) } catch {
                throw UsageError("\(paths[1]): \(error)")
            }
            return TraceAlignmentReport.print(alignment, json: json)
        }
        let c = try TraceDiff.compare(a, b)
        for d in c.headerDifferences { Console.out("header \(d.path): A \(d.expected ?? "(absent)"), B \(d.actual ?? "(absent)")") }
        guard let p = c.divergence else {
            Console.out("the same \(c.eventsCompared) events with the same digests\(c.headerDifferences.isEmpty ? "" : " (the headers differ as above)")")
            return c.identical ? ExitStatus.success : ExitStatus.checkFailed
        }
        func event(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "(none)" }
        switch p.kind {
        case .aEnded: Console.out("A ends after \(c.eventsCompared) events; B goes on with seq \(p.seqB ?? 0): \(event(p.eventB))")
        case .bEnded: Console.out("B ends after \(c.eventsCompared) events; A goes on with seq \(p.seqA ?? 0): \(event(p.eventA))")
        case .event, .digest:
            Console.out("first divergence after \(c.eventsCompared) equal events, at \(p.kind == .event ? "a different event" : "a different digest"):")
            Console.out("  A seq \(p.seqA ?? 0) (line \(p.lineA ?? 0)): \(event(p.eventA)) -> \(p.digestA.map(Digest.hex) ?? "?")")
            Console.out("  B seq \(p.seqB ?? 0) (line \(p.lineB ?? 0)): \(event(p.eventB)) -> \(p.digestB.map(Digest.hex) ?? "?")")
            if !p.layoutDifferences.isEmpty {
                Console.out("layout difference (A -> B):")
                for d in p.layoutDifferences { Console.out("  \(d)") }
            }
        }
        return ExitStatus.checkFailed
    }

    // MARK: export

    static func export(_ args: inout Arguments) throws -> Int32 {
        guard args.flag("--chrome") else { throw UsageError("export needs a format: --chrome") }
        let out = try args.option("-o") ?? args.option("--output")
        let path = try onePath(&args)
        try args.finish()
        let file = try TraceIO.loadForReading(path).file
        TraceIO.warnIfCut(file, name: path)
        var bytes = try ChromeExport.export(file)
        bytes.append(0x0A)
        try TraceIO.write(bytes, to: out)
        return ExitStatus.success
    }

    // MARK: conformance

    static func conformance(_ args: inout Arguments) throws -> Int32 {
        let junit = try args.option("--junit")
        let json = args.flag("--json")
        let path = try onePath(&args)
        try args.finish()
        let file = try TraceIO.loadForReading(path).file
        TraceIO.warnIfCut(file, name: path)
        let report = try ConformanceReport(file)
        let start = file.header.initialT
        if let junit {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            try TraceIO.write(Array(ConformanceJUnit.render(report, suite: name, app: file.header.app.name, startT: start).utf8), to: junit)
        }
        if json {
            Console.out(bytes: report.json(trace: path, startT: start))
        } else {
            for line in summary(report, path: path, startT: start) { Console.out(line) }
        }
        return report.count(.mismatch) > 0 ? ExitStatus.checkFailed : ExitStatus.success
    }

    static func summary(_ r: ConformanceReport, path: String, startT: UInt64) -> [String] {
        func at(_ t: UInt64) -> String { Timescale.seconds(Int64(t &- startT)) }
        guard let first = r.firstT, let last = r.lastT else { return ["\(path): no observations"] }
        var lines = ["\(path): \(r.total) observations from \(at(first)) to \(at(last)) of \(r.cases.count) layouts: "
                     + Verdict.allCases.map { "\(r.count($0)) \($0.rawValue)" }.joined(separator: ", ")]
        if !r.worst.isEmpty {
            lines.append("worst:")
            for s in r.worst.prefix(10) {
                lines.append("  \(s.subject)  in \(s.mismatches) mismatch\(s.mismatches == 1 ? "" : "es"): \(s.paths.prefix(4).joined(separator: ", "))"
                             + (s.paths.count > 4 ? ", …" : ""))
            }
        }
        if !r.mismatchRanges.isEmpty {
            lines.append("mismatched:")
            for m in r.mismatchRanges {
                let span = m.from == m.to ? "at \(at(m.from))" : "from \(at(m.from)) to \(at(m.to))"
                let seqs = m.fromSeq == m.toSeq ? "seq \(m.fromSeq)" : "seq \(m.fromSeq)…\(m.toSeq)"
                lines.append("  \(span) (\(seqs)), \(m.observations) observation\(m.observations == 1 ? "" : "s")")
            }
        }
        for c in r.cases where !c.mismatches.isEmpty {
            lines.append("layout seq \(c.layoutSeq): \(c.mismatches.count) of \(c.observations.count) observations mismatched")
            for d in c.mismatches[0].result.differences.prefix(8) { lines.append("  \(d)") }
            if c.mismatches[0].result.differences.count > 8 { lines.append("  … \(c.mismatches[0].result.differences.count - 8) more") }
        }
        return lines
    }

    // MARK: bench

    /// In-process replay with verification against the floor of any replay: reading the
    /// file and JSON-decoding each line. Both read the file anew each round; the best round counts.
    static func bench(_ args: inout Arguments) throws -> Int32 {
        let repeats = max(1, try args.int("--repeat") ?? 3)
        let path = try onePath(&args)
        try args.finish()
        var decodeBest = UInt64.max, replayBest = UInt64.max
        var events = 0, lines = 0
        for _ in 0..<repeats {
            var start = TraceIO.monotonicNs()
            let bytes = try TraceIO.readWhole(path)
            lines = 0
            for (_, line) in Inputs.lines(bytes).dropFirst() {
                _ = try? JSON.parse(line)
                lines += 1
            }
            decodeBest = min(decodeBest, TraceIO.monotonicNs() - start)

            start = TraceIO.monotonicNs()
            let file = try TraceFile(bytes: try TraceIO.readWhole(path))
            let outcome = try TraceReplay.run(file, verify: true)
            replayBest = min(replayBest, TraceIO.monotonicNs() - start)
            if let d = outcome.divergence { throw CheckFailed("the trace does not verify: \(d.summary)") }
            events = outcome.eventsApplied
        }
        let decodeRate = Double(events) / (Double(decodeBest) / 1e9)
        let replayRate = Double(events) / (Double(replayBest) / 1e9)
        Console.out("\(path): \(events) events in \(lines) records, best of \(repeats)")
        Console.out("read + JSON-decode every line: \(decodeBest / 1_000_000) ms, \(Int(decodeRate)) events/s")
        Console.out("replay --verify in process:    \(replayBest / 1_000_000) ms, \(Int(replayRate)) events/s")
        Console.out("replay / decode speed: \((replayRate / decodeRate * 100).rounded() / 100)")
        return ExitStatus.success
    }
}
