import CreaseCore
import Foundation

/// `crease bench`: relayout and transport latency, measured against the physical limit
/// (see BENCHMARKS.md). Scenarios run alone or together; `--json` for machines, `--svg`
/// for a picture of the distributions. Exit status 1 when something was wrong beyond
/// the figures (a dropped subscriber, a lost layout, a divergent replay, a daemon that
/// did not stop cleanly); targets missed are reported, not failed.
enum BenchCommand {
    static let allScenarios = ["core", "rtt", "observe", "stream", "burst", "replay", "memory", "glitches", "plan"]

    static let usage = """
        crease bench [SCENARIO...] [--json] [--svg FILE] [--quick] [--quiet]
                 [--core-count N] [--core-apps NAME,...] [--core-modes MODE,...] [--core-events NAME,...] [--rtt-count N] [--rtt-placement same,split,free] [--observe-count N]
                 [--stream-seconds S] [--stream-subscribers N,N,...]
                 [--burst-events N] [--burst-subscribers N] [--memory-events N] [--memory-stream-seconds S]
                 [--replay-events N] [--replay-rounds N] [--trace FILE] [--budget-us N] [--daemon-arg ARG]...
                 [--glitch-layouts N] [--glitch-rounds N]
               crease bench serve-echo --socket PATH --reply LINE
          SCENARIO: core, rtt, observe, stream, burst, replay, memory, glitches, plan (default: all of them, in that order)
          --quick          tiny counts: checks that everything runs, measures nothing worth quoting
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
                guard name == "all" || allScenarios.contains(name) else {
                    throw UsageError("no scenario \"\(name)\"; scenarios: \(allScenarios.joined(separator: ", "))")
                }
                if name == "all" { o.scenarios += allScenarios } else { o.scenarios.append(name) }
            }
            if o.scenarios.isEmpty { o.scenarios = allScenarios }
            // Each once, in the standard order.
            o.scenarios = allScenarios.filter(o.scenarios.contains)
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
            default:
                preconditionFailure("scenario names are checked when the options are parsed: \(name)")
            }
            scenario.othersCPU = watch.othersShare(cores: report.machine.cores)
            report.scenarios.append(scenario)
        }
        if let svg = o.svg {
            try TraceIO.write(Array(BenchSVG.render(report).utf8), to: svg)
        }
        if o.json { Console.out(bytes: report.json()) } else { Console.out(report.text()) }
        return report.scenarios.contains { !$0.problems.isEmpty } ? ExitStatus.checkFailed : ExitStatus.success
    }
}
