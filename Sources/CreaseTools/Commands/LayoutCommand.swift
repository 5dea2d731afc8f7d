import CreaseCore

/// `crease layout [--app FILE|builtin:NAME] [--profile FILE] [--events FILE|-] [--each]`:
/// applies the events to the default state and prints the final layout. Nothing is
/// printed unless every event applies: a bad event exits 2 naming its line and field.
enum LayoutCommand {
    static let usage = "crease layout [--app FILE|builtin:NAME] [--profile FILE] [--events FILE|-] [--each]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let app = try Inputs.app(try args.option("--app"))
        let profile = try Inputs.profile(try args.option("--profile"))
        let eventsPath = try args.option("--events")
        let each = args.flag("--each")
        try args.finish()
        var engine = Engine(profile: profile, app: app)
        var lines: [[UInt8]] = []
        if let eventsPath {
            let name = eventsPath == "-" ? "stdin" : eventsPath
            // Each event's `ts` is the engine's clock, as a trace's `t` is: it never goes back.
            var last: (ts: Int64, line: Int)?
            for (line, envelope) in try Inputs.events(try Inputs.readFile(eventsPath), name: name) {
                if let ts = envelope.ts {
                    if let last, ts < last.ts {
                        throw UsageError("\(name):\(line): field \"ts\" goes back: \(ts) after \(last.ts) at line \(last.line); the events' times must not decrease")
                    }
                    last = (ts, line)
                }
                do { try engine.apply(envelope.event, at: envelope.ts) } catch {
                    throw UsageError("\(name):\(line): \(error)")
                }
                if each { lines.append(engine.layoutJSON()) }
            }
        }
        if !each { lines.append(engine.layoutJSON()) }
        for l in lines { Console.out(bytes: l) }
        return ExitStatus.success
    }
}
