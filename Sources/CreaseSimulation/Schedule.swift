import CreaseCore

/// One thing that happens to a simulated daemon. Steps name clients by a pick, taken modulo
/// the clients alive when the step runs, so any subset of a schedule still runs: that is what
/// lets the shrinker drop steps freely.
public enum SimStep: Equatable, Sendable {
    /// Who connects: a publisher, a layout subscriber (with more topics by `topics`' bits), a
    /// peer that may only read, or one the access policy does not name.
    public enum Role: Equatable, Sendable {
        case publisher
        case subscriber(topics: Int)
        case reader
        case stranger
    }

    case connect(Role)
    /// `count` event lines from a publisher, in one read; `seed` picks the events.
    case burst(client: Int, count: Int, seed: UInt64)
    /// A line the daemon must refuse (`kind`: bad JSON, an unknown event, a bad value, a line
    /// past the limit, a JSON array).
    case malformed(client: Int, kind: Int)
    /// A command (`kind`: sync, stats, mark, hello, layout, observe, subscribe, unsubscribe,
    /// a stats reset, a trace rotation).
    case command(client: Int, kind: Int)
    /// The loop ends an iteration `gapNs` after the last thing it did.
    case endOfIteration(gapNs: UInt64)
    /// The client stops reading; what the daemon sends it waits in its queue.
    case stall(client: Int)
    /// The client reads again: what waited is delivered.
    case resume(client: Int)
    /// The client hangs up, `unterminated` bytes after its last newline.
    case vanish(client: Int, unterminated: Int)
    /// The disk writes up to `records` of the records handed to it, then syncs them.
    case disk(records: Int)
    /// The disk stops writing for its next `steps` disk steps.
    case diskStall(steps: Int)
    /// The disk is full for its next `records` records: they are counted lost (a gap).
    case diskFull(records: Int)
    /// The stats timer (or, with `metrics`, the metrics timer) fires.
    case tick(metrics: Bool)
    /// The process dies (no shutdown); it starts again with `--resume` from what the disk holds.
    case crash

    /// The schedule `seed` gives: the same seed, the same steps, on every machine.
    public static func schedule(seed: UInt64, steps: Int) -> [SimStep] {
        var rng = SplitMix64(seed: seed)
        var out: [SimStep] = []
        out.reserveCapacity(steps)
        // A run starts with someone to talk to.
        out.append(.connect(.publisher))
        out.append(.connect(.subscriber(topics: 0)))
        while out.count < steps { out.append(step(&rng)) }
        return Array(out.prefix(steps))
    }

    private static func step(_ rng: inout SplitMix64) -> SimStep {
        func below(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        let client = below(1 << 16)
        let roll = below(1000)
        switch roll {
        case ..<50:
            let roles: [Role] = [.publisher, .publisher, .subscriber(topics: below(16)), .subscriber(topics: 0), .reader, .stranger]
            return .connect(roles[below(roles.count)])
        case ..<360: return .burst(client: client, count: 1 + below(below(4) == 0 ? 60 : 8), seed: rng.next())
        case ..<400: return .malformed(client: client, kind: below(5))
        case ..<500: return .command(client: client, kind: below(10))
        case ..<680: return .endOfIteration(gapNs: UInt64(below(4) == 0 ? below(3_000_000) : below(200_000)))
        case ..<710: return .stall(client: client)
        case ..<750: return .resume(client: client)
        case ..<775: return .vanish(client: client, unterminated: below(3) == 0 ? 1 + below(40) : 0)
        case ..<935: return .disk(records: 1 + below(below(3) == 0 ? 200 : 12))
        case ..<950: return .diskStall(steps: 1 + below(20))
        case ..<960: return .diskFull(records: 1 + below(30))
        case ..<996: return .tick(metrics: below(2) == 0)
        default: return .crash
        }
    }
}

extension SimStep: CustomStringConvertible {
    public var description: String {
        switch self {
        case .connect(let role): "connect \(role)"
        case .burst(let c, let n, let seed): "burst client#\(c) \(n) events (seed \(seed))"
        case .malformed(let c, let kind): "malformed client#\(c) kind \(kind)"
        case .command(let c, let kind): "command client#\(c) kind \(kind)"
        case .endOfIteration(let gap): "end of iteration after \(gap) ns"
        case .stall(let c): "stall client#\(c)"
        case .resume(let c): "resume client#\(c)"
        case .vanish(let c, let n): "vanish client#\(c) (\(n) unterminated bytes)"
        case .disk(let n): "disk writes \(n) records"
        case .diskStall(let n): "disk stalls for \(n) disk steps"
        case .diskFull(let n): "disk full for \(n) records"
        case .tick(let metrics): metrics ? "metrics tick" : "stats tick"
        case .crash: "crash and --resume"
        }
    }
}
