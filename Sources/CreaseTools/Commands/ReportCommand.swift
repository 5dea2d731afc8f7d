import CreaseCore
import CreaseDaemonCore
import Foundation

/// `crease report TRACE`: one self-contained HTML page for a bug ticket (docs/report.md).
enum ReportCommand {
    static let usage = "crease report TRACE [-o report.html] [--screenshots DIR] [--filmstrips DIR] [--minimize KIND[:SUBJECT]] [--focus SEQ|glitch|mismatches] [--max-frames N] [--against REPLAY [--run N] [--against-screenshots DIR]]"

    /// The most a screenshot may be: a phone's full-resolution PNG is a few megabytes.
    static let screenshotLimit = 32 << 20

    static func run(_ args: inout Arguments) throws -> Int32 {
        let output = try args.option("-o") ?? "report.html"
        let shots = try args.option("--screenshots")
        let strips = try args.option("--filmstrips")
        let minimize = try args.option("--minimize")
        let focusText = try args.option("--focus")
        let focus = try focusText.map(ReportFocus.parse)
        let maxFrames = try args.int("--max-frames") ?? ReportFocus.defaultMaxFrames
        let againstPath = try args.option("--against")
        let run = try args.int("--run")
        let againstShots = try args.option("--against-screenshots")
        guard (1...100_000).contains(maxFrames) else { throw UsageError("--max-frames takes 1 to 100000") }
        guard let path = args.positional() else { throw UsageError("a trace file is needed") }
        try args.finish()
        if run != nil, againstPath == nil { throw UsageError("--run names the replay run of --against REPLAY") }
        if againstShots != nil, againstPath == nil { throw UsageError("--against-screenshots holds the screenshots of --against REPLAY") }
        if let againstShots { try requireDirectory(againstShots, option: "--against-screenshots") }
        if let run, run < 1 { throw UsageError("--run takes a run number from 1") }
        let file = try TraceIO.loadForReading(path).file
        TraceIO.warnIfCut(file, name: path)
        let name = URL(fileURLWithPath: path).lastPathComponent
        let title = "\(file.header.app.name) · \(name)"
        let summary: TraceSummary
        let selection: ReportFocus.Selection
        let story: TraceStory
        do {
            summary = try TraceInfo.summarize(file)
            // Two replays: the first chooses the frames from all of them, the second keeps
            // those whole (a campaign has tens of thousands of layouts; keeping each cost
            // memory by the layout). The second story has all the first one had besides.
            selection = ReportFocus.select(try TraceRun.replay(file, title: title, keepFrames: false).story, focus: focus, maxFrames: maxFrames)
            story = try TraceRun.replay(file, title: title, keepFrames: true, keeping: Set(selection.kept)).story
        } catch {
            throw UsageError("\(path): \(error)")
        }
        // Each glitch at its frame among those drawn (by the index in the whole run).
        var drawnIndex: [Int: Int] = [:]
        for (n, i) in selection.kept.enumerated() { drawnIndex[i] = n }
        let layoutFrames = ReportFocus.LayoutFrames(run: story)
        let glitchFrames = story.glitches.map { g in layoutFrames.frame(of: g.firstSeq).flatMap { drawnIndex[$0] } }
        let screenshots = try shots.map { try loadScreenshots($0, story: story) } ?? [:]
        let filmstrips = try strips.map { try loadFilmstrips($0, story: story) } ?? [:]
        let minimized = try minimize.map { try minimizedLines(file, spec: $0) }
        let focusName: String? = focus.map { f in
            switch f {
            case .seq(let seq): "seq \(seq)"
            case .glitches: "the glitches"
            case .mismatches: "the mismatches"
            }
        }
        var against: ReportAgainst?
        if let againstPath {
            let replay = try TraceIO.loadForReading(againstPath).file
            TraceIO.warnIfCut(replay, name: againstPath)
            do {
                against = try ReportAgainst.load(file, replay: replay, name: URL(fileURLWithPath: againstPath).lastPathComponent, run: run,
                                                 originalShots: shots, replayShots: againstShots)
            } catch {
                throw UsageError("--against \(againstPath): \(error)")
            }
        }
        let why: ReportWhy
        do {
            why = try ReportWhy.compute(file, story: story)
        } catch {
            throw UsageError("\(path): \(error)")
        }
        let html = ReportHTML.render(.init(title: title, file: file, summary: summary, story: story, screenshots: screenshots,
                                           minimized: minimized, selection: selection, glitchFrames: glitchFrames, focus: focusName, why: why,
                                           filmstrips: filmstrips, against: against))
        let bytes = Array(html.utf8)
        try TraceIO.write(bytes, to: output)
        let observations = story.observations.count
        Console.err("crease report: \(selection.all ? "\(selection.total)" : "\(selection.kept.count) of \(selection.total)") frames, \(story.glitches.count) glitches, \(observations) observations"
                    + (shots == nil ? "" : ", \(screenshots.count) screenshots")
                    + (story.screen.isEmpty ? "" : ", \(story.screen.count) flagged screen frames" + (strips == nil ? "" : " (\(filmstrips.count) pictured)"))
                    + (minimized.map { m in
                        let observations = m.lines.count { $0.hasPrefix(#"{"cmd":"observe""#) }
                        return ", \(m.lines.count - observations) minimized events" + (observations > 0 ? " and \(observations) observations" : "")
                    } ?? "")
                    + (against.map { a in
                        ", against \(a.name): \(a.alignment.looks.count) looks paired, \(a.alignment.looks.count { !$0.sameVerdict }) with another verdict"
                            + (a.pictured.isEmpty ? "" : ", \(a.pictured.count) pictured")
                    } ?? "")
                    + "; \(output) (\(bytes.count / 1024) KiB, self-contained)")
        return ExitStatus.success
    }

    /// The screenshot of each observation's frame: `DIR/<id>.png` (or .jpg, .jpeg) for an
    /// observation sent with an id (a string as it is, a whole number as digits), else
    /// `DIR/seq-<seq>.png`: the layout seq it was held at.
    static func loadScreenshots(_ dir: String, story: TraceStory) throws -> [Int: (mime: String, base64: String)] {
        try requireDirectory(dir, option: "--screenshots")
        var out: [Int: (String, String)] = [:]
        for (i, frame) in story.frames.enumerated() {
            guard let o = frame.observed, let shot = screenshot(in: dir, id: o.id, seq: o.seq) else { continue }
            out[i] = shot
        }
        return out
    }

    /// An observation's screenshot in `dir`: `<id>.png` (or .jpg, .jpeg) for one sent with an
    /// id, else `seq-<seq>.png`; nil when there is none (a bad picture is warned of and skipped).
    static func screenshot(in dir: String, id: JSONValue?, seq: Int) -> (mime: String, base64: String)? {
        var names: [String] = []
        switch id {
        case .string(let s)? where !s.contains("/") && !s.hasPrefix("."): names.append(s)
        case .number(let n)? where n == n.rounded() && abs(n) < 1e15: names.append(String(Int64(n)))
        default: break
        }
        names.append("seq-\(seq)")
        for base in names {
            for (ext, mime) in [("png", "image/png"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg")] {
                let candidate = (dir as NSString).appendingPathComponent("\(base).\(ext)")
                guard FileManager.default.fileExists(atPath: candidate) else { continue }
                guard let data = picture(candidate, mime: mime, what: "screenshot") else { continue }
                return (mime, data)
            }
        }
        return nil
    }

    /// `--filmstrips DIR`: the picture `crease-rig frames judge --filmstrip DIR` wrote for each
    /// flagged frame, `DIR/<frame>-<kind>.png`. A missing one is not shown; a bad one is named.
    static func loadFilmstrips(_ dir: String, story: TraceStory) throws -> [Int: (mime: String, base64: String)] {
        try requireDirectory(dir, option: "--filmstrips")
        var out: [Int: (String, String)] = [:]
        for (i, v) in story.screen.enumerated() {
            let candidate = (dir as NSString).appendingPathComponent("\(v.frame)-\(v.kind.rawValue).png")
            guard FileManager.default.fileExists(atPath: candidate), let data = picture(candidate, mime: "image/png", what: "filmstrip") else { continue }
            out[i] = ("image/png", data)
        }
        return out
    }

    static func requireDirectory(_ dir: String, option: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw UsageError("\(option) \(dir): not a directory")
        }
    }

    /// A picture's bytes in base64, or nil after a warning naming it: one bad picture is left
    /// out and the report goes on without it.
    static func picture(_ path: String, mime: String, what: String) -> String? {
        let bytes: [UInt8]
        do { bytes = try Inputs.readFile(path, what: what, limit: screenshotLimit) } catch {
            Console.err("warning: \(what) skipped: \(error)")
            return nil
        }
        guard looksLike(mime, bytes) else {
            Console.err("warning: \(what) skipped: \(path) is not a \(mime == "image/png" ? "PNG" : "JPEG") image")
            return nil
        }
        return Data(bytes).base64EncodedString()
    }

    /// Whether `bytes` begin as an image of that type does (PNG's signature, JPEG's SOI marker).
    static func looksLike(_ mime: String, _ bytes: [UInt8]) -> Bool {
        mime == "image/png" ? bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) : bytes.starts(with: [0xFF, 0xD8, 0xFF])
    }

    /// `--minimize KIND[:SUBJECT]`: the fewest events of the trace that still show that glitch,
    /// as lines `crease layout --events -` takes (each with its recorded time as `ts`).
    static func minimizedLines(_ file: TraceFile, spec: String) throws -> (property: String, lines: [String]) {
        let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
        guard let first = parts.first, let kind = GlitchKind(rawValue: first) else {
            throw UsageError("--minimize KIND[:SUBJECT], KIND one of \(GlitchKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let probe = GlitchTarget(kind: kind, subject: parts.count > 1 ? parts[1] : nil)
        let header = file.header
        let steps: [TraceStep]
        do { steps = try TraceMinimize.steps(file, observations: probe.needsObservations) } catch { throw UsageError("--minimize: \(error)") }
        let target: GlitchTarget
        switch GlitchTarget.resolve(kind: kind, subject: probe.subject, header: header, steps: steps) {
        case .target(let t): target = t
        case .ambiguous(let subjects):
            throw UsageError("--minimize \(kind.rawValue): the trace shows it for \(subjects.count) subjects (\(subjects.map { "\"\($0)\"" }.joined(separator: ", "))); "
                             + "name one: --minimize \(kind.rawValue):SUBJECT")
        case .absent: throw CheckFailed("the trace does not show \(probe.name): nothing to minimize")
        }
        let property = target.name
        let result = TraceShrinker.shrink(steps, profile: header.profile, origin: header.initialT) { (c: [TraceStep]) -> Bool in
            target.holds(header: header, steps: c)
        }
        // The events as `crease layout --events -` takes them, and an observation that shows
        // the mismatch as the daemon's `observe` command, so that pasting the block into
        // `crease send` (or a socket) shows the verdict too.
        let lines = result.map { step -> String in
            switch step {
            case .event(let e):
                var w = JSONWriter()
                e.envelope.event.write(to: &w, ts: Int64(e.t))
                return String(decoding: w.bytes, as: UTF8.self)
            case .observation(let o):
                // Without the recorded clock readings: a daemon it is pasted into judges it
                // against the layout the pasted events leave.
                var request = o.request
                request.ts = nil
                request.capturedAt = nil
                var w = JSONWriter()
                request.write(to: &w)
                return String(decoding: w.bytes, as: UTF8.self)
            }
        }
        return (property, lines)
    }
}
