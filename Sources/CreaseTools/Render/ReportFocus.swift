import CreaseCore

/// Which frames `crease report` draws: all of them while they fit `--max-frames`, else (and
/// with `--focus`) a window of frames around what matters: the device's mismatches, then
/// its stale looks, then the glitches (or the frame at a seq), each with its neighbours;
/// without `--focus` the room left goes to frames spread evenly over the run. The timeline
/// still shows every event; a moment whose frame is not drawn is listed without a link.
enum ReportFocus: Equatable, Sendable {
    case seq(Int)
    case glitches
    case mismatches

    static let defaultMaxFrames = 150
    /// Frames either side of a moment.
    static let window = 2

    static func parse(_ text: String) throws -> ReportFocus {
        switch text {
        case "glitch", "glitches": return .glitches
        case "mismatch", "mismatches": return .mismatches
        default:
            guard let seq = Int(text), seq >= 0 else { throw UsageError("--focus takes a seq, glitch or mismatches, not \"\(text)\"") }
            return .seq(seq)
        }
    }

    struct Selection: Equatable {
        /// Indexes into the story's frames, ascending.
        var kept: [Int]
        var total: Int
        /// Glitches whose frame is not drawn.
        var undrawnGlitches: Int
        var all: Bool { kept.count == total }
    }

    /// The story's layout frames (not its observations') by seq, for the frame a glitch is
    /// drawn at (the last layout frame at or before its first seq), found by bisection: a campaign's report asks it of tens of thousands of glitches over
    /// tens of thousands of frames (a scan each took a 12,960-look trace's report 160 s).
    struct LayoutFrames {
        private var seqs: [Int] = []
        private var indexes: [Int] = []
        private let empty: Bool

        /// Over every frame of the run (indexes into `frameStubs`).
        init(run story: TraceStory) { self.init(story.frameStubs.map { ($0.seq, $0.verdict == nil) }) }

        /// Over the frames the story drew (indexes into `frames`).
        init(drawn story: TraceStory) { self.init(story.frames.map { ($0.seq, $0.observed == nil) }) }

        init(_ frames: [(seq: Int, isLayout: Bool)]) {
            empty = frames.isEmpty
            for (i, f) in frames.enumerated() where f.isLayout {
                // Frames come in seq order; of equal seqs the last is the one drawn.
                if seqs.last == f.seq { indexes[indexes.count - 1] = i } else { seqs.append(f.seq); indexes.append(i) }
            }
        }

        func frame(of seq: Int) -> Int? {
            var lo = 0, hi = seqs.count  // the first layout frame past `seq`
            while lo < hi {
                let mid = (lo + hi) / 2
                if seqs[mid] <= seq { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { return indexes[lo - 1] }
            return empty ? nil : 0
        }
    }

    /// From every frame of the run (`frameStubs`: a first replay needs keep none whole).
    static func select(_ story: TraceStory, focus: ReportFocus?, maxFrames: Int) -> Selection {
        let stubs = story.frameStubs
        let total = stubs.count
        if focus == nil && total <= maxFrames {
            return Selection(kept: Array(0..<total), total: total, undrawnGlitches: 0)
        }
        var moments: [Int] = []
        func looks(_ verdict: Verdict) -> [Int] { stubs.indices.filter { stubs[$0].verdict == verdict } }
        let layoutFrames = LayoutFrames(run: story)
        let glitchFrames = story.glitches.compactMap { layoutFrames.frame(of: $0.firstSeq) }
        switch focus {
        case .seq(let seq): moments = layoutFrames.frame(of: seq).map { [$0] } ?? []
        case .mismatches: moments = looks(.mismatch) + looks(.stale)
        case .glitches: moments = glitchFrames
        case nil: moments = looks(.mismatch) + looks(.stale) + glitchFrames
        }
        var kept = Set<Int>()
        if total > 0 { kept.insert(0) }
        outer: for m in moments {
            for i in [m] + (1...window).flatMap({ [m - $0, m + $0] }) where i >= 0 && i < total {
                if kept.count >= maxFrames { break outer }
                kept.insert(i)
            }
        }
        if focus == nil, kept.count < maxFrames, total > 0 {
            // The room left, spread over the run.
            let room = maxFrames - kept.count
            for k in 0..<room {
                kept.insert(min(total - 1, k * total / room))
            }
        }
        let drawn = kept.sorted()
        let undrawn = glitchFrames.filter { !kept.contains($0) }.count
        return Selection(kept: Array(drawn.prefix(maxFrames)), total: total, undrawnGlitches: undrawn)
    }
}
