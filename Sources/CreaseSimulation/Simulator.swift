import CreaseCore
import CreaseDaemonCore

/// How a simulation runs.
public struct SimulationOptions: Sendable {
    /// What the daemon starts with.
    public var engine: Engine
    /// `--fsync always`: every reply waits for its record to be durable.
    public var repliesWaitForDisk: Bool
    /// A client's queue limit (`--max-queue-bytes`), small so stalled clients are dropped.
    public var queueLimit = 16 * 1024
    public var budgetUs: UInt64 = 1000
    /// A fault planted in the simulated disk, to show the checks catch what it breaks.
    public var fault: SimulationFault?
    /// Keep a log of the run (each step, every line sent and written, closes, disk reports): for
    /// reading a shrunk schedule's failure, not for long runs.
    public var log = false

    public init(engine: Engine, repliesWaitForDisk: Bool, fault: SimulationFault? = nil) {
        self.engine = engine
        self.repliesWaitForDisk = repliesWaitForDisk
        self.fault = fault
    }
}

/// The first invariant a run broke.
public struct SimulationFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// The step (0-based) after which it was found; `steps` for the final drain.
    public var step: Int
    public var invariant: String
    public var detail: String
    public var description: String { "step \(step): \(invariant): \(detail)" }
}

/// What a run did, and how it ended.
public struct SimulationOutcome: Sendable, Equatable {
    public var steps = 0
    public var clients = 0
    public var linesSent = 0
    public var acks = 0
    public var layoutPushes = 0
    public var drops = 0
    public var refusals = 0
    public var crashes = 0
    public var recordsLost = 0
    /// Inputs a fresh core was fed again (the replay check), over every run between crashes.
    public var inputsReplayed = 0
    /// Events of the runs' traces that `DaemonReplay` fed through a fresh core again.
    public var traceEventsReplayed = 0
    public var failure: SimulationFailure?
    /// With `SimulationOptions.log`: what happened, a line each.
    public var log: [String] = []
}

/// Drives the real `DaemonCore` with a virtual clock, the way `Daemon` does (every input
/// through `handle`, the actions performed in order, the gauges sampled when asked), through
/// a schedule of clients connecting, sending bursts, bad lines and commands, stalling and
/// vanishing, a disk that stalls, fills and tears on a crash, and restarts with `--resume`.
/// After every step it checks the invariants (docs/simulation.md); the run stops at the
/// first broken one. Nothing here reads a clock or a file: the same schedule gives the same
/// outcome, byte for byte.
public enum Simulator {
    public static func run(_ schedule: [SimStep], options: SimulationOptions) -> SimulationOutcome {
        var world = SimulatedWorld(options: options)
        for (i, step) in schedule.enumerated() {
            world.stepIndex = i
            world.take(step)
            world.outcome.steps = i + 1
            if world.outcome.failure != nil { return world.outcome }
        }
        world.stepIndex = schedule.count
        world.finish()
        return world.outcome
    }
}
