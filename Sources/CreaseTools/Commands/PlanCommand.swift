import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation

/// `crease plan`: every layout the app can show from a start, and the shortest event
/// sequence to each (docs/plan.md).
enum PlanCommand {
    static let usage = "crease plan [--app FILE|builtin:NAME] [--profile FILE] [--from STATE] [--transitions] [--max-depth N] [--max-states N] [-o PLAN.jsonl] [--json]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        if args.flag("--tour") { return try TourCommand.run(&args) }
        let app = try Inputs.app(try args.option("--app"))
        let profile = try Inputs.profile(try args.option("--profile"))
        let fromPath = try args.option("--from")
        let transitions = args.flag("--transitions")
        let maxDepth = try args.int("--max-depth") ?? 64
        let maxStates = try args.int("--max-states") ?? 200_000
        let output = try args.option("-o")
        let json = args.flag("--json")
        try args.finish()
        guard (1...1_000).contains(maxDepth) else { throw UsageError("--max-depth must be between 1 and 1000, not \(maxDepth)") }
        guard (1...5_000_000).contains(maxStates) else { throw UsageError("--max-states must be between 1 and 5000000, not \(maxStates)") }
        let start = try fromPath.map { try startState($0, app: app, profile: profile) } ?? DeviceState(app: app)
        let began = TraceIO.monotonicNs()
        let result = ModelExplorer.explore(app: app, profile: profile, from: start,
                                           options: .init(maxDepth: maxDepth, maxStates: maxStates, transitions: transitions))
        let seconds = Double(TraceIO.monotonicNs() - began) / 1e9
        let document = PlanFile.encode(result, app: app, profile: profile, start: start, from: fromPath, maxDepth: maxDepth)
        if let output { try TraceIO.write(document, to: output) }
        if json {
            if output == nil { Console.out(bytes: document) }
            return ExitStatus.success
        }
        let lengths = result.sequences.map(\.events.count)
        let mean = lengths.isEmpty ? 0 : Double(lengths.reduce(0, +)) / Double(lengths.count)
        Console.out("plan: \(app.name) on \(profile.name), from \(fromPath ?? "the default state")")
        Console.out("explored \(Format.grouped(result.states)) states, \(Format.grouped(result.layouts)) distinct layouts, "
                    + "\(Format.grouped(result.transitionsExplored)) transitions in \(Format.fixed(seconds, 2)) s"
                    + (result.truncated ? " (cut at --max-states \(maxStates): not every state was reached)" : ""))
        Console.out("\(Format.grouped(result.sequences.count)) sequences, \(Format.fixed(mean, 1)) events each on average (longest \(lengths.max() ?? 0))"
                    + (transitions ? "; \(Format.grouped(result.transitionSequences.count)) more for the distinct transitions" : "")
                    + (output.map { "; written to \($0)" } ?? ""))
        if output == nil {
            for s in result.sequences.prefix(10) {
                Console.out("  \(Digest.hex(s.digest))  \(s.pose.rawValue), \(s.orientation.rawValue): "
                            + (s.events.isEmpty ? "(the start)" : s.events.map(EventLabel.text).joined(separator: ", ")))
            }
            if result.sequences.count > 10 { Console.out("  … \(result.sequences.count - 10) more (-o PLAN writes them all)") }
        }
        return ExitStatus.success
    }

    /// `--from`: a state as `state` prints it (`{"seq", "state"}`, or the inner state), read
    /// against the app and checked as `load` checks it.
    static func startState(_ path: String, app: App, profile: DeviceProfile) throws -> DeviceState {
        let bytes = try Inputs.readFile(path, what: "state", limit: InputFile.manifestLimit)
        let value: JSONValue
        do { value = try JSON.parse(bytes) } catch { throw UsageError("\(path): not JSON: \(error)") }
        do {
            return try LoadRequest(profile: profile, app: app, state: value).loaded(onto: Engine(profile: profile, app: app)).state
        } catch {
            throw UsageError("\(path): \(error)")
        }
    }
}
