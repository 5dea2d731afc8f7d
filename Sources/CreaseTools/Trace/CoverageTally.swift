import CreaseCore

/// What a campaign's traces showed of a plan or a tour (`crease coverage`): the layouts the
/// model passed through, and of those, the ones the device was seen to show (a `match`
/// observation judged against them) or seen to show otherwise (a `mismatch`). A stale look
/// counts for neither: the device was catching up. A frame judge's verdicts (`frame`
/// records) flag the layout they refer to: the screen misbehaved on the way to or at it.
struct CoverageTally {
    /// How the plan tells classes apart: nil for a plan (each layout its own class).
    let observe: RigProfile.ObserveMode?
    private(set) var passed = Set<UInt64>()
    private(set) var observed = Set<UInt64>()
    private(set) var mismatched = Set<UInt64>()
    /// Layouts a frame judge flagged the screen at.
    private(set) var flagged = Set<UInt64>()
    private(set) var frameVerdicts = 0
    /// A page-source class of each layout passed through.
    private var classOf: [UInt64: UInt64] = [:]
    private(set) var steps = Set<[UInt64]>()
    private(set) var events = 0
    private(set) var observations = 0

    init(observe: RigProfile.ObserveMode?) { self.observe = observe }

    /// The class of a layout passed through (its digest unless classes are by page source).
    func classOf(_ digest: UInt64) -> UInt64 { observe == .pageSource ? classOf[digest] ?? digest : digest }

    func classes(of digests: Set<UInt64>) -> Set<UInt64> { Set(digests.map(classOf)) }

    /// Replays one trace, counting what it passed through and what its observations saw.
    mutating func add(_ file: TraceFile, path: String) throws {
        var replayer = TraceReplayer(header: file.header, verify: false)
        var previous = DigestAlgorithm.crease64v.digest(replayer.engine.body)
        // The layout of each push, by its seq: what an observation was judged against.
        var layoutAt: [Int: UInt64] = [replayer.engine.seq: previous]
        // Every layout change in seq order, for the layout at a frame verdict's seq.
        var changes: [(seq: Int, digest: UInt64)] = [(replayer.engine.seq, previous)]
        pass(previous, replayer.engine)
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw UsageError("\(path): seq \(d.seq) cannot be applied: \(error)")
            }
            switch traced.record {
            case .event, .load, .gap:
                if case .event = traced.record { events += 1 }
                let now = DigestAlgorithm.crease64v.digest(replayer.engine.body)
                if now != previous {
                    steps.insert([previous, now])
                    layoutAt[replayer.engine.seq] = now
                    changes.append((replayer.engine.seq, now))
                }
                pass(now, replayer.engine)
                previous = now
            case .observation(let o):
                observations += 1
                guard let judged = layoutAt[o.result.layoutSeq] else { continue }
                switch o.result.verdict {
                case .match: observed.insert(judged)
                case .mismatch: mismatched.insert(judged)
                case .stale: break
                }
            case .frame(_, _, _, let verdict):
                // A layout-shift window is a figure, not a flagged frame.
                guard verdict.kind.flags else { continue }
                frameVerdicts += 1
                if let at = changes.last(where: { $0.seq <= verdict.refSeq }) { flagged.insert(at.digest) }
            default: break
            }
        }
    }

    private mutating func pass(_ digest: UInt64, _ engine: Engine) {
        guard passed.insert(digest).inserted, observe == .pageSource else { return }
        classOf[digest] = PageSourceView.classDigest(of: engine.layout)
    }
}
