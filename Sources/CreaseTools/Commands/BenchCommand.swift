import CreaseCore
import Foundation

/// `crease bench`: relayout and transport latency, measured against the physical limit
/// (see BENCHMARKS.md). Scenarios run alone or together; `--json` for machines, `--svg`
/// for a picture of the distributions; `--instructions` counts the event path and the
/// relayout under callgrind. `--repeat N` runs them N times and reports each figure's
/// spread; `--save FILE` keeps the figures, `--compare FILE` judges this run against them.
/// Exit status (BENCHMARKS.md): under `--compare`, 1 when a figure regressed beyond
/// its noise margin, a figure of the baseline was not measured, or the run went wrong;
/// otherwise 1 when a target was missed (not under `--quick`) or something was wrong
/// beyond the figures (a dropped subscriber, a lost layout, a divergent replay, a daemon
/// that did not stop cleanly).
enum BenchCommand {
    static let allScenarios = ["core", "rtt", "observe", "stream", "burst", "replay", "memory", "glitches", "plan"]
    /// Scenarios run only when named (or, for `instructions`, by `--instructions`).
    static let namedOnly = ["instructions"]

    static let usage = """
        crease bench [SCENARIO...] [--json] [--svg FILE] [--quick] [--quiet] [--instructions]
                 [--repeat N] [--save BASELINE.json] [--compare BASELINE.json] [--margin PERCENT]
                 [--core-count N] [--core-apps NAME,...] [--core-modes MODE,...] [--core-events NAME,...] [--rtt-count N] [--rtt-placement same,split,free] [--observe-count N]
                 [--stream-seconds S] [--stream-subscribers N,N,...]
                 [--burst-events N] [--burst-subscribers N] [--memory-events N] [--memory-stream-seconds S]
                 [--replay-events N] [--replay-rounds N] [--trace FILE] [--budget-us N] [--daemon-arg ARG]...
                 [--glitch-layouts N] [--glitch-rounds N]
               crease bench serve-echo --socket PATH --reply LINE
          SCENARIO: core, rtt, observe, stream, burst, replay, memory, glitches, plan (default: all of them, in that order),
                    instructions (only when named, or with --instructions)
          --quick          tiny counts: checks that everything runs, measures nothing worth quoting (targets not enforced)
          --instructions   the hinge round trip and a relayout miss in instructions, under valgrind's callgrind
                           (alone, unless scenarios are named too)
          --repeat N       run the scenarios N times and report each figure's median and spread
                           (default 5 with --save or --compare, else 1)
          --save FILE      write the compared figures of every repeat to FILE (a baseline)
          --compare FILE   judge this run against the baseline FILE: exit 1 on a regression beyond the noise margin
          --margin PCT     the smallest noise margin (default 5); the spread of either run's repeats widens it
          --core-apps      core on these apps only (built-in names and large; default all), e.g. to profile one
          --core-modes     core in these modes only: unchanged, hit, miss, scratch (default all)
          --core-events    core with these event drivers only (default all): \(CoreScenario.driverNames.joined(separator: ", "))
          --rtt-placement  where rtt's client and servers run: same (one core), split (client on one,
                           servers on another), free (unpinned); default same,split
          --daemon-arg A   passes A to every creased the bench starts (e.g. --daemon-arg --no-trace)
          --trace FILE     replay this trace instead of recording one
          serve-echo       the bare libuv echo server of `rtt` (the bench starts it itself)
        `creased` must be next to `crease` (swift build -c release builds both).
        """

    struct Options {
        var scenarios: [String]
        var json = false
        var quick = false
        var repeats = 1
        var save: String?
        var compare: String?
        var marginFloor = BenchComparison.defaultMarginFloor
        var instructionCounts = InstructionScenario.Counts()
        var svg: String?
        var quiet = false
        var coreCount = 10_000
        var coreApps: [String]?
        var coreModes = CoreScenario.Mode.allCases
        var coreEvents: [String]?
        var rttCount = 20_000
        var rttPlacements: [Placement] = [.same, .split]
        var observeCount = 5_000
        var streamSeconds = 5.0
        var streamSubscribers = [1, 16, 64]
        var burstEvents = 200_000
        var burstSubscribers = 16
        var memoryEvents = 1_000_000
        var memoryStreamSeconds = 5.0
        var replayEvents = 200_000
        var replayRounds = 3
        var glitchLayouts = 300_000
        var glitchRounds = 5
        var planMaxStates = 200_000
        var trace: String?
        var budgetUs = 1000
        var daemonArguments: [String] = []

        /// `serve-echo`'s socket and reply.
        var echo: (socket: String, reply: String)?

        static func parse(_ args: inout Arguments) throws -> Options {
            var o = Options(scenarios: [])
            if args.flag("--quick") {
                o.quick = true
                o.instructionCounts = .quick
                o.coreCount = 50
                o.rttCount = 300
                o.observeCount = 100
                o.streamSeconds = 0.3
                o.burstEvents = 5_000
                o.burstSubscribers = 4
                o.memoryEvents = 5_000
                o.memoryStreamSeconds = 0.3
                o.replayEvents = 5_000
                o.replayRounds = 1
                o.glitchLayouts = 5_000
                o.glitchRounds = 1
                o.planMaxStates = 2_000
            }
            o.json = args.flag("--json")
            o.quiet = args.flag("--quiet")
            o.svg = try args.option("--svg")
            let instructions = args.flag("--instructions")
            o.save = try args.option("--save")
            o.compare = try args.option("--compare")
            if let r = try args.int("--repeat") {
                guard (1...100).contains(r) else { throw UsageError("--repeat takes 1 to 100 runs") }
                o.repeats = r
            } else if o.save != nil || o.compare != nil {
                o.repeats = 5
            }
            if let m = try args.double("--margin") {
                guard m >= 0, m <= 100 else { throw UsageError("--margin takes a percentage from 0 to 100") }
                o.marginFloor = m / 100
            }
            o.coreCount = try positive(args.int("--core-count"), "--core-count") ?? o.coreCount
            if let list = try args.option("--core-apps") {
                let names = list.split(separator: ",").map(String.init)
                let known = BuiltinApps.names + [LargeApp.name]
                guard !names.isEmpty, names.allSatisfy(known.contains) else {
                    throw UsageError("--core-apps takes app names separated by commas (\(known.joined(separator: ", "))), not \"\(list)\"")
                }
                o.coreApps = names
            }
            if let list = try args.option("--core-modes") {
                let parts = list.split(separator: ",").map(String.init)
                let modes = parts.compactMap(CoreScenario.Mode.init(rawValue:))
                guard !modes.isEmpty, modes.count == parts.count else {
                    throw UsageError("--core-modes takes unchanged, hit, miss or scratch, separated by commas, not \"\(list)\"")
                }
                o.coreModes = CoreScenario.Mode.allCases.filter(modes.contains)
            }
            if let list = try args.option("--core-events") {
                let names = list.split(separator: ",").map(String.init)
                guard !names.isEmpty, names.allSatisfy(CoreScenario.driverNames.contains) else {
                    throw UsageError("--core-events takes event drivers separated by commas (\(CoreScenario.driverNames.joined(separator: ", "))), not \"\(list)\"")
                }
                o.coreEvents = names
            }
            o.rttCount = try positive(args.int("--rtt-count"), "--rtt-count") ?? o.rttCount
            if let list = try args.option("--rtt-placement") {
                let parts = list.split(separator: ",").map(String.init)
                let placements = parts.compactMap(Placement.init(rawValue:))
                guard !placements.isEmpty, placements.count == parts.count else {
                    throw UsageError("--rtt-placement takes same, split or free, separated by commas, not \"\(list)\"")
                }
                o.rttPlacements = placements
            }
            o.observeCount = try positive(args.int("--observe-count"), "--observe-count") ?? o.observeCount
            o.streamSeconds = try seconds(args.double("--stream-seconds"), "--stream-seconds") ?? o.streamSeconds
            if let list = try args.option("--stream-subscribers") {
                let counts = list.split(separator: ",").compactMap { Int($0) }
                guard !counts.isEmpty, counts.count == list.split(separator: ",").count, counts.allSatisfy({ $0 >= 1 && $0 <= 1000 }) else {
                    throw UsageError("--stream-subscribers takes counts from 1 to 1000 separated by commas, not \"\(list)\"")
                }
                o.streamSubscribers = counts
            }
            o.burstEvents = try positive(args.int("--burst-events"), "--burst-events") ?? o.burstEvents
            o.burstSubscribers = try args.int("--burst-subscribers") ?? o.burstSubscribers
            guard (0...1000).contains(o.burstSubscribers) else { throw UsageError("--burst-subscribers takes 0 to 1000") }
            o.memoryEvents = try positive(args.int("--memory-events"), "--memory-events") ?? o.memoryEvents
            o.memoryStreamSeconds = try seconds(args.double("--memory-stream-seconds"), "--memory-stream-seconds") ?? o.memoryStreamSeconds
            o.replayEvents = try positive(args.int("--replay-events"), "--replay-events") ?? o.replayEvents
            o.replayRounds = try positive(args.int("--replay-rounds"), "--replay-rounds") ?? o.replayRounds
            o.glitchLayouts = try positive(args.int("--glitch-layouts"), "--glitch-layouts") ?? o.glitchLayouts
            o.glitchRounds = try positive(args.int("--glitch-rounds"), "--glitch-rounds") ?? o.glitchRounds
            o.trace = try args.option("--trace")
            o.budgetUs = try positive(args.int("--budget-us"), "--budget-us") ?? o.budgetUs
            o.daemonArguments = try args.options("--daemon-arg")
            let echoSocket = try args.option("--socket"), echoReply = try args.option("--reply")
            // Positionals last: an option's value is not one.
            let names = args.remainingPositionals()
            try args.finish()
            if names.first == "serve-echo" {
                guard names.count == 1, let echoSocket, let echoReply else { throw UsageError("serve-echo needs --socket PATH and --reply LINE, and nothing else") }
                o.echo = (echoSocket, echoReply)
                return o
            }
            if echoSocket != nil || echoReply != nil { throw UsageError("--socket and --reply go with serve-echo") }
            for name in names {
                guard name == "all" || allScenarios.contains(name) || namedOnly.contains(name) else {
                    throw UsageError("no scenario \"\(name)\"; scenarios: \((allScenarios + namedOnly).joined(separator: ", "))")
                }
                if name == "all" { o.scenarios += allScenarios } else { o.scenarios.append(name) }
            }
            if instructions { o.scenarios.append("instructions") }
            if o.scenarios.isEmpty { o.scenarios = allScenarios }
            // Each once, in the standard order.
            o.scenarios = (allScenarios + namedOnly).filter(o.scenarios.contains)
            if let save = o.save, save == o.compare { throw UsageError("--save and --compare name the same file, \(save)") }
            return o
        }

        static func positive(_ v: Int?, _ name: String) throws -> Int? {
            guard let v else { return nil }
            guard v >= 1, v <= 100_000_000 else { throw UsageError("\(name) takes a whole number from 1 to 100000000") }
            return v
        }

        static func seconds(_ v: Double?, _ name: String) throws -> Double? {
            guard let v else { return nil }
            guard v >= 0.1, v <= 3600 else { throw UsageError("\(name) takes seconds from 0.1 to 3600") }
            return v
        }
    }

    static func run(_ args: inout Arguments) throws -> Int32 {
        let o = try Options.parse(&args)
        if let echo = o.echo {
            try EchoServer(path: echo.socket, reply: Array(echo.reply.utf8)).run()
            return ExitStatus.success
        }
        // A baseline that cannot be read fails before anything is measured.
        let baseline = try o.compare.map(BenchBaseline.read)
        let progress = Progress(enabled: !o.quiet)
        progress.phase("measuring the machine")
        var report = BenchReport(machine: MachineInfo.current(), scenarios: [])
        if report.machine.buildConfiguration != "release" {
            progress.phase("warning: a debug build; figures are only comparable from `swift build -c release`")
        }
        let needsDaemon = o.scenarios.contains { $0 != "core" && $0 != "glitches" && $0 != "plan" && !($0 == "replay" && o.trace != nil) }
        let directory = needsDaemon ? try BenchDirectory() : nil
        defer { directory?.remove() }
        let settings = try directory.map {
            DaemonSettings(binaries: try BenchBinaries.locate(), directory: $0, budgetUs: o.budgetUs, extraArguments: o.daemonArguments)
        }
        var repeats = BenchRepeats()
        for round in 1...o.repeats {
            if o.repeats > 1 { progress.phase("repeat \(round) of \(o.repeats)") }
            let scenarios = try runScenarios(o, settings: settings, cores: report.machine.cores, progress: progress)
            repeats.add(scenarios)
            // The first repeat's report is printed whole; later ones add their problems.
            if round == 1 {
                report.scenarios = scenarios
            } else {
                for (i, s) in scenarios.enumerated() where i < report.scenarios.count {
                    report.scenarios[i].problems += s.problems.map { "repeat \(round): \($0)" }
                }
            }
        }
        if o.repeats > 1 { report.repeats = repeats }
        if let baseline, let path = o.compare {
            report.comparison = BenchComparison(baseline: baseline.repeats, at: path, current: repeats, ran: o.scenarios, marginFloor: o.marginFloor)
        }
        if let path = o.save {
            let saved = BenchBaseline(command: (["crease"] + CommandLine.arguments.dropFirst()).joined(separator: " "),
                                      commit: SourceCommit.describe(), machine: report.machine.summary, repeats: repeats)
            try TraceIO.write(saved.json(), to: path)
            progress.phase("saved \(repeats.figures.count) figures of \(repeats.count) repeat\(repeats.count == 1 ? "" : "s") to \(path)")
        }
        if let svg = o.svg {
            try TraceIO.write(Array(BenchSVG.render(report).utf8), to: svg)
        }
        if o.json { Console.out(bytes: report.json()) } else { Console.out(report.text()) }
        let problems = report.scenarios.contains { !$0.problems.isEmpty }
        if let comparison = report.comparison {
            // Under --compare the comparison decides (a run with problems compares nothing).
            return comparison.failed || problems ? ExitStatus.checkFailed : ExitStatus.success
        }
        let missed = !o.quick && report.scenarios.contains { $0.targets.contains { !$0.met } }
        return missed || problems ? ExitStatus.checkFailed : ExitStatus.success
    }

    /// Every scenario of `o` once, in order.
    static func runScenarios(_ o: Options, settings: DaemonSettings?, cores: Int, progress: Progress) throws -> [ScenarioReport] {
        var reports: [ScenarioReport] = []
        for name in o.scenarios {
            let watch = CPUWatch()
            var scenario: ScenarioReport
            switch name {
            case "core":
                scenario = try CoreScenario.run(count: o.coreCount, apps: o.coreApps, modes: o.coreModes, events: o.coreEvents, progress: progress)
            case "rtt":
                scenario = try RTTScenario.run(count: o.rttCount, placements: o.rttPlacements, settings: settings!, progress: progress)
            case "observe":
                scenario = try ObserveScenario.run(count: o.observeCount, settings: settings!, progress: progress)
            case "stream":
                scenario = try DaemonScenarios.runStream(subscriberCounts: o.streamSubscribers, seconds: o.streamSeconds,
                                                         settings: settings!, progress: progress)
            case "burst":
                scenario = try DaemonScenarios.runBurst(events: o.burstEvents, subscribers: o.burstSubscribers,
                                                        settings: settings!, progress: progress)
            case "replay":
                scenario = try ReplayScenario.run(events: o.replayEvents, trace: o.trace, rounds: o.replayRounds,
                                                  settings: settings, progress: progress)
            case "plan":
                scenario = PlanScenario.run(maxStates: o.planMaxStates, progress: progress)
            case "glitches":
                scenario = GlitchScenario.run(count: o.glitchLayouts, rounds: o.glitchRounds, progress: progress)
            case "memory":
                scenario = try DaemonScenarios.runMemory(events: o.memoryEvents, streamSeconds: o.memoryStreamSeconds,
                                                         settings: settings!, progress: progress)
            case "instructions":
                scenario = try InstructionScenario.run(counts: o.instructionCounts, settings: settings!, progress: progress)
            default:
                preconditionFailure("scenario names are checked when the options are parsed: \(name)")
            }
            scenario.othersCPU = watch.othersShare(cores: cores)
            reports.append(scenario)
        }
        return reports
    }
}
