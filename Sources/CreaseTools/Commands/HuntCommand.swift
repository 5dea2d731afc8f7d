import CreaseCore
import CreaseSimulation
import CreaseSystem
#if canImport(Glibc)
import Glibc
#endif

/// `crease hunt`: the seeded simulator (`CreaseSimulation`) over a lab's own app and profile.
/// Each seed is one schedule; a seed that breaks an invariant prints it, the commit, the
/// command that reproduces it and the schedule shrunk to its fewest steps, and the command
/// exits 1. The same seed prints the same bytes: no timings on stdout.
enum HuntCommand {
    static let usage = """
        crease hunt [--seed N] [--seeds K] [--steps N] [--app FILE|builtin:NAME] [--profile FILE]
                    [--fsync always|interval] [--plant early-durable] [--shrink-budget N] [--log]
          --seed N           the first seed (default 1); --seeds K runs seeds N … N+K-1 (default 1)
          --steps N          steps per seed (default 20000)
          --fsync MODE       always: every reply waits for its record on the disk; interval: replies
                             do not wait. Default: always for even seeds, interval for odd ones
          --plant FAULT      plant a fault in the simulated disk, to see the checks catch it:
                             early-durable reports each record durable one seq early
          --shrink-budget N  simulations the shrinker may run for a failing seed (default 500)
          --log              after a failure, the shrunk schedule's run: every line sent and
                             written, closes, drops and disk reports
        """

    static func run(_ args: inout Arguments) throws -> Int32 {
        let first = try args.int("--seed") ?? 1
        let count = try args.int("--seeds") ?? 1
        let steps = try args.int("--steps") ?? 20_000
        let fsync = try args.option("--fsync")
        let plant = try args.option("--plant")
        let budget = try args.int("--shrink-budget") ?? 500
        let log = args.flag("--log")
        let app = try Inputs.app(try args.option("--app"))
        let profile = try Inputs.profile(try args.option("--profile"))
        try args.finish()
        guard first >= 0 else { throw UsageError("--seed takes a whole number from 0, not \(first)") }
        guard (1...100_000).contains(count) else { throw UsageError("--seeds takes 1 to 100000, not \(count)") }
        guard (1...10_000_000).contains(steps) else { throw UsageError("--steps takes 1 to 10000000, not \(steps)") }
        guard budget >= 0 else { throw UsageError("--shrink-budget takes a whole number from 0") }
        guard fsync == nil || fsync == "always" || fsync == "interval" else {
            throw UsageError("--fsync takes always or interval, not \"\(fsync!)\"")
        }
        var fault: SimulationFault?
        if let plant {
            guard let f = SimulationFault(rawValue: plant) else {
                throw UsageError("--plant takes \(SimulationFault.allCases.map(\.rawValue).joined(separator: " or ")), not \"\(plant)\"")
            }
            fault = f
        }
        let engine = Engine(profile: profile, app: app)
        var failed = 0
        for seed in first..<(first + count) {
            let waits = fsync.map { $0 == "always" } ?? (seed % 2 == 0)
            let options = SimulationOptions(engine: engine, repliesWaitForDisk: waits, fault: fault)
            let schedule = SimStep.schedule(seed: UInt64(seed), steps: steps)
            let outcome = Simulator.run(schedule, options: options)
            let mode = waits ? "always" : "interval"
            guard let failure = outcome.failure else {
                Console.out("seed \(seed) (fsync \(mode)): \(steps) steps, \(summary(outcome)): ok")
                continue
            }
            failed += 1
            Console.out("seed \(seed) (fsync \(mode)): FAILED at step \(failure.step) of \(steps): \(failure.invariant): \(failure.detail)")
            Console.out("  commit \(SourceCommit.describe())")
            var again = "crease hunt --seed \(seed) --steps \(min(steps, failure.step + 1)) --fsync \(mode)"
            if let plant { again += " --plant \(plant)" }
            Console.out("  reproduce: \(again)")
            let shrunk = ScheduleShrinker.shrink(schedule, failure: failure, options: options, budget: budget)
            Console.out("  shrunk to \(shrunk.steps.count) steps in \(shrunk.runs) runs; they fail at step \(shrunk.failure.step): \(shrunk.failure.detail)")
            for (i, step) in shrunk.steps.enumerated() { Console.out("    \(i). \(step)") }
            if log {
                var logged = options
                logged.log = true
                Console.out("  the shrunk run:")
                for line in Simulator.run(shrunk.steps, options: logged).log { Console.out("    " + line) }
            }
        }
        if count > 1 { Console.out("\(count - failed) of \(count) seeds passed") }
        return failed == 0 ? ExitStatus.success : ExitStatus.checkFailed
    }

    static func summary(_ o: SimulationOutcome) -> String {
        "\(o.clients) clients, \(o.linesSent) lines, \(o.acks) acks, \(o.layoutPushes) layout pushes, \(o.drops) dropped, "
            + "\(o.refusals) refused, \(o.crashes) crashes, \(o.recordsLost) records lost, \(o.inputsReplayed) inputs and \(o.traceEventsReplayed) trace events replayed"
    }
}

/// The commit of the checkout `crease` runs in (read from `.git`, walking up from the working
/// directory), or `$CREASE_COMMIT`: what a failing seed is reported against.
enum SourceCommit {
    static func describe() -> String {
        if let env = getenv("CREASE_COMMIT").map({ String(cString: $0) }), !env.isEmpty { return env }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getcwd(&buffer, buffer.count) != nil else { return "unknown (set CREASE_COMMIT)" }
        var dir = String(cString: buffer)
        for _ in 0..<32 {
            if let commit = read(gitDir: dir + "/.git") { return commit }
            guard let slash = dir.lastIndex(of: "/"), dir != "/" else { break }
            dir = slash == dir.startIndex ? "/" : String(dir[..<slash])
        }
        return "unknown (not in a git checkout; set CREASE_COMMIT)"
    }

    private static func text(_ path: String) -> String? {
        guard let bytes = try? InputFile.read(path, what: "git file", limit: 1 << 20) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func read(gitDir: String) -> String? {
        guard let head = text(gitDir + "/HEAD")?.split(separator: "\n").first.map(String.init) else { return nil }
        guard head.hasPrefix("ref: ") else { return head }
        let ref = String(head.dropFirst(5))
        if let loose = text(gitDir + "/" + ref)?.split(separator: "\n").first { return String(loose) }
        for line in (text(gitDir + "/packed-refs") ?? "").split(separator: "\n") where line.hasSuffix(" " + ref) {
            return String(line.prefix(while: { $0 != " " }))
        }
        return nil
    }
}
