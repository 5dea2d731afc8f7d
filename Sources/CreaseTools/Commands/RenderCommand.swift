import CreaseCore
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

        let file = try TraceIO.load(trace)
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
                                       event: last?.eventText, glitches: FrameSet.glitches(at: e.seq, run.story.glitches))
            try write(FrameSVG.render(e.layout, app: e.app, caption: caption), to: output)
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
                do { try engine.apply(envelope.event) } catch {
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
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else { throw UsageError("cannot write \(path)") }
    }
}
