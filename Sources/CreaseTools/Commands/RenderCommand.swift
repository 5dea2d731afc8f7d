import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation

/// `crease render`: pictures of what Crease computed. A layout as the device would show
/// it, a trace as a timeline, or a trace as frames to step through. The drawings are
/// pure functions (`FrameSVG`, `TimelineSVG`, `FrameSet`); this file reads and writes.
enum RenderCommand {
    static let usage = """
        crease render [--app FILE|builtin:NAME] [--profile FILE] [--events FILE|-] -o FILE.svg
               crease render --trace TRACE --at SEQ -o FILE.svg
               crease render --trace TRACE --timeline -o FILE.svg
               crease render --trace TRACE --frames DIR
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let trace = try args.option("--trace")
        let at = try args.int("--at")
        let timeline = args.flag("--timeline")
        let frames = try args.option("--frames")
        let output = try args.option("-o") ?? args.option("--output")
        guard let trace else {
            if at != nil || timeline || frames != nil { throw UsageError("--at, --timeline and --frames draw a trace: give --trace TRACE") }
            return try layout(&args, output: output)
        }
        for option in ["--app", "--profile", "--events"] where try args.option(option) != nil {
            throw UsageError("\(option) does not go with --trace: a trace holds its own app, profile and events")
        }
        try args.finish()
        guard [at != nil, timeline, frames != nil].filter({ $0 }).count == 1 else {
            throw UsageError("with --trace, give one of --at SEQ, --timeline or --frames DIR")
        }
        if frames != nil, output != nil { throw UsageError("--frames writes into its directory; -o does not go with it") }
        if frames == nil, output == nil { throw UsageError("-o FILE is required (- for stdout)") }

        let file = try TraceIO.loadForReading(trace).file
        TraceIO.warnIfCut(file, name: trace)
        let title = "\(file.header.app.name) · \(URL(fileURLWithPath: trace).lastPathComponent)"
        let run: TraceRun
        do { run = try TraceRun.replay(file, title: title, keepFrames: frames != nil, stop: at) } catch {
            throw UsageError("\(trace): \(error)")
        }

        if let at, let output {
            let e = run.engine
            guard e.seq == at else {
                throw UsageError("\(trace) holds seq \(file.header.initialSeq)…\(e.seq); there is no seq \(at)")
            }
            let last = run.story.points.last
            let caption = FrameCaption(seq: e.seq, digest: e.digest, time: Int64((last?.t ?? run.story.start.t) &- run.story.start.t),
                                       event: run.story.lastEventText, glitches: FrameSet.glitches(at: e.seq, run.story.glitches))
            try write(FrameSVG.render(e.layout, app: e.app, caption: caption), to: output)
            try drawObservations(run, at: at, beside: output)
        } else if let output {
            try write(TimelineSVG.render(run.story), to: output)
        } else if let frames {
            do { try FileManager.default.createDirectory(atPath: frames, withIntermediateDirectories: true) } catch {
                throw UsageError("cannot make \(frames): \(error.localizedDescription)")
            }
            let files = FrameSet.files(run.story)
            for f in files { try write(f.contents, to: (frames as NSString).appendingPathComponent(f.name)) }
            Console.err("crease render: \(files.count - 1) frames and index.html in \(frames)")
        }
        return ExitStatus.success
    }

    /// Each observation held against seq `at`, drawn over the layout as `--frames` draws it,
    /// into `FILE_observed-001.svg`… beside `FILE.svg`.
    static func drawObservations(_ run: TraceRun, at: Int, beside output: String) throws {
        let held = run.story.observations.filter { $0.seq == at }
        guard !held.isEmpty else { return }
        guard output != "-" else {
            Console.err("crease render: \(held.count) observation(s) held against seq \(at) are drawn only beside a file (-o FILE.svg)")
            return
        }
        let stem = output.hasSuffix(".svg") ? String(output.dropLast(4)) : output
        var written: [String] = []
        for (i, o) in held.enumerated() {
            let path = stem + FrameSet.observedSuffix(i + 1) + ".svg"
            let caption = FrameSet.observedCaption(o, digest: run.engine.digest, run.story)
            try write(FrameSVG.render(run.engine.layout, app: run.engine.app, caption: caption, observed: o), to: path)
            written.append("\(path) (\(o.result.verdict.rawValue))")
        }
        Console.err("crease render: seq \(at) held \(held.count) observation(s): \(written.joined(separator: ", "))")
    }

    /// The layout after an events file (or none), as `crease layout` computes it.
    static func layout(_ args: inout Arguments, output: String?) throws -> Int32 {
        let app = try Inputs.app(try args.option("--app"))
        let profile = try Inputs.profile(try args.option("--profile"))
        let eventsPath = try args.option("--events")
        try args.finish()
        guard let output else { throw UsageError("-o FILE is required (- for stdout)") }

        var engine = Engine(profile: profile, app: app)
        var last: String?
        if let eventsPath {
            let name = eventsPath == "-" ? "stdin" : eventsPath
            for (line, envelope) in try Inputs.events(try Inputs.readFile(eventsPath), name: name) {
                do { try engine.apply(envelope.event, at: envelope.ts) } catch {
                    throw UsageError("\(name):\(line): \(error)")
                }
                last = EventLabel.text(envelope.event)
            }
        }
        let svg = FrameSVG.render(engine.layout, app: engine.app, caption: FrameCaption(seq: engine.seq, digest: engine.digest, event: last))
        try write(svg, to: output)
        return ExitStatus.success
    }

    static func write(_ text: String, to path: String) throws {
        if path == "-" {
            FileHandle.standardOutput.write(Data(text.utf8))
            return
        }
        do { try OutputFile.write(Array(text.utf8), to: path) } catch { throw UsageError(error.message) }
    }
}
