import CreaseCore
import Foundation

/// `crease render`: pictures of what Crease computed. A layout as the device would show
/// it (SVG); the drawing itself is `FrameSVG`, pure and tested without files.
enum RenderCommand {
    static let usage = "crease render [--app FILE|builtin:NAME] [--profile FILE] [--events FILE|-] -o FILE.svg"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let app = try Inputs.app(try args.option("--app"))
        let profile = try Inputs.profile(try args.option("--profile"))
        let eventsPath = try args.option("--events")
        guard let output = try args.option("-o") ?? args.option("--output") else { throw UsageError("-o FILE is required (- for stdout)") }
        try args.finish()

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
