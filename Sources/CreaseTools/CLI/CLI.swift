import CreaseCore
import CreaseDaemonCore

/// The `crease` command table. Each subcommand lives in its own file under Commands/.
public enum CLI {
    struct Command: Sendable {
        let name: String
        let usage: String
        let summary: String
        let run: @Sendable (inout Arguments) throws -> Int32
    }

    static let commands: [Command] = [
        Command(name: "layout", usage: LayoutCommand.usage, summary: "apply events to the default state and print the layout", run: LayoutCommand.run),
        Command(name: "replay", usage: ReplayCommand.usage, summary: "replay a trace in process or into a daemon; --verify checks every digest", run: ReplayCommand.run),
        Command(name: "trace", usage: TraceCommand.usage, summary: "check, info, slice, diff, export, bench, glitches, minimize and index trace files", run: TraceCommand.run),
        Command(name: "why", usage: WhyCommand.usage, summary: "the rule behind a control or field of the layout after some events, and the events that set its inputs", run: WhyCommand.run),
        Command(name: "glitches", usage: GlitchesCommand.usage, summary: "check NDJSON layouts (with a t in ns) for flapping, flashes, lost, occluded and offscreen items", run: GlitchesCommand.run),
        Command(name: "gen", usage: GenCommand.usage, summary: "synthesize rig-like event streams (stdout or --to SOCKET)", run: GenCommand.run),
        Command(name: "bench", usage: BenchCommand.usage, summary: "relayout and transport latency: core, rtt, stream, burst, replay, memory", run: BenchCommand.run),
        Command(name: "render", usage: RenderCommand.usage, summary: "draw a layout as the device shows it, or a trace as a timeline or frames (SVG, HTML)", run: RenderCommand.run),
        Command(name: "report", usage: ReportCommand.usage, summary: "a trace as one self-contained HTML page for a bug ticket", run: ReportCommand.run),
        Command(name: "calibrate", usage: CalibrateCommand.usage, summary: "fit the profile's assumed numbers to what the device showed in traces", run: CalibrateCommand.run),
        Command(name: "plan", usage: PlanCommand.usage + "\n       " + TourCommand.usage, summary: "every layout the app can show, and the shortest events to each; --tour: one walk that shows the phone every class", run: PlanCommand.run),
        Command(name: "coverage", usage: CoverageCommand.usage, summary: "which of a plan's layouts and transitions a campaign's traces showed", run: CoverageCommand.run),
        Command(name: "hunt", usage: HuntCommand.usage, summary: "the seeded simulator: the daemon's core through clients, crashes and a failing disk, checked after every step", run: HuntCommand.run),
        Command(name: "demo", usage: DemoCommand.usage, summary: "the built-in app through folding, rotating, keyboard and Live Activities", run: DemoCommand.run),
        Command(name: "version", usage: "crease version (or crease --version)", summary: "print the version, as creased --version does", run: version),
    ] + clientCommands

    /// `crease version` and `crease --version`: the same version as the creased built with it.
    static func version(_ args: inout Arguments) throws -> Int32 {
        try args.finish()
        Console.out("crease \(DaemonInfo.version)")
        return ExitStatus.success
    }

    public static func main(_ argv: [String]) -> Int32 {
        guard let name = argv.first, name != "--help", name != "-h", name != "help" else {
            Console.out(help())
            return argv.isEmpty ? ExitStatus.usage : ExitStatus.success
        }
        if name == "--version" {
            var rest = Arguments(Array(argv.dropFirst()))
            do { return try version(&rest) } catch { Console.err("crease: \(error)"); return ExitStatus.usage }
        }
        guard let command = commands.first(where: { $0.name == name }) else {
            Console.err("crease: unknown command \"\(name)\"\n\n" + help())
            return ExitStatus.usage
        }
        var args = Arguments(Array(argv.dropFirst()))
        if args.flag("--help") {
            Console.out("usage: \(command.usage)")
            return ExitStatus.success
        }
        do {
            return try command.run(&args)
        } catch let e as UsageError {
            Console.err("crease \(name): \(e.message)")
            return ExitStatus.usage
        } catch let e as CheckFailed {
            // A check that failed, or a daemon that could not be reached or did not answer: 1.
            Console.err("crease \(name): \(e.message)")
            return ExitStatus.checkFailed
        } catch {
            Console.err("crease \(name): \(error)")
            return ExitStatus.usage
        }
    }

    static func help() -> String {
        var lines = ["usage: crease COMMAND [OPTIONS]", "", "commands:"]
        for c in commands { lines.append("  \(c.name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(c.summary)") }
        lines.append("")
        lines.append("`crease COMMAND --help` shows a command's options. Exit status: 0 ok, 1 check failed, 2 usage or input error.")
        lines.append("The commands that talk to creased use --socket PATH, else $CREASE_SOCKET, else")
        lines.append("$XDG_RUNTIME_DIR/crease/creased.sock, else /run/crease/creased.sock.")
        lines.append("Documentation: README.md and docs/ (installed under PREFIX/share/doc/crease): lab.md runs a lab.")
        return lines.joined(separator: "\n")
    }
}
