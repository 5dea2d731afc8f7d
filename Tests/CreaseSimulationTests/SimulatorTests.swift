import CreaseCore
import CreaseDaemonCore
import CreaseSimulation
import Testing

/// The seeded simulator (issue 41): the real `DaemonCore` through thousands of steps of
/// clients, bad lines, stalls, drops, a failing disk and crashes, every invariant checked
/// after every step. CI runs a fixed budget of seeds here; a soak is `crease hunt --seeds N`.
@Suite struct SimulatorTests {
    static let engine = Engine(profile: .builtin, app: Engine.builtinApp(named: "tabs")!)

    static func options(_ seed: UInt64, fault: SimulationFault? = nil) -> SimulationOptions {
        SimulationOptions(engine: engine, repliesWaitForDisk: seed % 2 == 0, fault: fault)
    }

    @Test("the CI budget of seeds breaks no invariant", arguments: 1...8)
    func aBudgetOfSeedsPasses(seed: UInt64) {
        let outcome = Simulator.run(SimStep.schedule(seed: seed, steps: 3000), options: SimulatorTests.options(seed))
        #expect(outcome.failure == nil, "\(outcome.failure.map(\.description) ?? "")")
        #expect(outcome.steps == 3000)
        // The run did what it is for: clients came and went, the disk failed, the process crashed.
        #expect(outcome.clients > 100 && outcome.acks > 500 && outcome.layoutPushes > 100, "\(outcome)")
        #expect(outcome.drops > 0 && outcome.refusals > 0 && outcome.crashes > 0 && outcome.recordsLost > 0, "\(outcome)")
        #expect(outcome.inputsReplayed > outcome.linesSent, "every run between crashes was replayed into a fresh core")
        #expect(outcome.traceEventsReplayed > outcome.acks / 2, "and its trace through the daemon's replay")
    }

    @Test("the same seed gives the same run, step for step")
    func theSameSeedGivesTheSameRun() {
        var options = SimulatorTests.options(3)
        options.log = true
        let schedule = SimStep.schedule(seed: 3, steps: 600)
        #expect(schedule == SimStep.schedule(seed: 3, steps: 600))
        #expect(schedule != SimStep.schedule(seed: 4, steps: 600))
        let first = Simulator.run(schedule, options: options)
        let second = Simulator.run(schedule, options: options)
        #expect(first == second)
        #expect(first.log.count > 600, "the log names every step and what it sent")
    }

    /// The planted fault: the disk reports each record durable one seq before it is, so under
    /// --fsync always an acknowledgement leaves before its record is durable.
    @Test("a planted early-durable disk is caught and shrunk to the fewest steps that show it")
    func aPlantedFaultIsCaughtAndShrunk() throws {
        let options = SimulatorTests.options(2, fault: .earlyDurable)
        let schedule = SimStep.schedule(seed: 2, steps: 4000)
        let failure = try #require(Simulator.run(schedule, options: options).failure)
        #expect(failure.invariant == "no event is acknowledged before its record is durable")
        let shrunk = ScheduleShrinker.shrink(schedule, failure: failure, options: options)
        #expect(shrunk.steps.count <= 3, "\(shrunk.steps)")
        #expect(shrunk.steps.contains { if case .connect(.publisher) = $0 { true } else { false } })
        #expect(Simulator.run(shrunk.steps, options: options).failure?.invariant == failure.invariant)
        // Without the fault the same schedule passes.
        #expect(Simulator.run(schedule, options: SimulatorTests.options(2)).failure == nil)
    }

    /// Replies that do not wait for the disk cannot break durability, so the planted fault
    /// breaks nothing there: the check is only as strong as the promise `--fsync` makes.
    @Test("under --fsync interval the early-durable fault breaks no promise")
    func intervalMakesNoDurabilityPromise() {
        var options = SimulatorTests.options(1, fault: .earlyDurable)
        options.repliesWaitForDisk = false
        #expect(Simulator.run(SimStep.schedule(seed: 1, steps: 2000), options: options).failure == nil)
    }
}
