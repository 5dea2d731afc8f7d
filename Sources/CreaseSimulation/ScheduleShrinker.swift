/// Shrinks a failing schedule to the fewest steps that still break the same invariant
/// (Zeller's delta debugging over the steps, in order). Steps name clients by pick, so any
/// subset runs; each candidate is one more simulation, within a budget of runs.
public enum ScheduleShrinker {
    public struct Result: Sendable {
        public var steps: [SimStep]
        public var failure: SimulationFailure
        public var runs: Int
    }

    public static func shrink(_ schedule: [SimStep], failure: SimulationFailure, options: SimulationOptions, budget: Int = 500) -> Result {
        var steps = Array(schedule.prefix(failure.step + 1))
        var last = failure
        var runs = 0
        /// The candidate's failure, when it breaks the same invariant.
        func fails(_ candidate: [SimStep]) -> SimulationFailure? {
            runs += 1
            guard let f = Simulator.run(candidate, options: options).failure, f.invariant == failure.invariant else { return nil }
            return f
        }
        var chunks = 2
        while steps.count > 1, runs < budget {
            let size = (steps.count + chunks - 1) / chunks
            var reduced = false
            var start = 0
            while start < steps.count, runs < budget {
                var candidate = steps
                candidate.removeSubrange(start..<min(start + size, steps.count))
                if let f = fails(candidate) {
                    // The steps after the one that fails now can go too.
                    steps = Array(candidate.prefix(f.step + 1))
                    last = f
                    reduced = true
                    chunks = max(chunks - 1, 2)
                    break
                }
                start += size
            }
            if !reduced {
                if size == 1 { break }
                chunks = min(chunks * 2, steps.count)
            }
        }
        return Result(steps: steps, failure: last, runs: runs)
    }
}
