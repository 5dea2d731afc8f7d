/// What an observation was found to be.
public enum Verdict: String, Sendable, CaseIterable {
    /// It agrees with the current layout.
    case match
    /// It disagrees with the current layout but agrees with one that was current within
    /// the settle window: the device is still animating or has not caught up.
    case stale
    /// No layout in the window agrees, or it stayed stale past the window.
    case mismatch
}

/// The answer to one observation: what the daemon replies, what the trace records and
/// what a replay must reproduce.
public struct ConformanceResult: Sendable, Equatable {
    public var verdict: Verdict
    /// Events applied when the observation was taken.
    public var seq: Int
    /// The seq of the current layout's push: the layout the observation was held against.
    public var layoutSeq: Int
    /// The seq of the push it agrees with: `layoutSeq` for a match, an earlier one when
    /// stale, and for a mismatch that was stale too long the layout the device is stuck on.
    /// Nil for a mismatch that agrees with no layout in the window.
    public var matchedSeq: Int?
    /// Every field that differs from the current layout (empty for a match).
    public var differences: [ConformanceDifference]

    public init(verdict: Verdict, seq: Int, layoutSeq: Int, matchedSeq: Int?, differences: [ConformanceDifference]) {
        self.verdict = verdict
        self.seq = seq
        self.layoutSeq = layoutSeq
        self.matchedSeq = matchedSeq
        self.differences = differences
    }

    /// `"verdict","seq","layoutSeq","matchedSeq","differences"` into an open object. The
    /// reply writes them all; a trace record, which begins with its own `seq`, leaves it out.
    public func writeMembers(to w: inout JSONWriter, seq includeSeq: Bool = true) {
        w.key("verdict"); w.string(verdict.rawValue)
        if includeSeq { w.key("seq"); w.int(seq) }
        w.key("layoutSeq"); w.int(layoutSeq)
        w.key("matchedSeq"); if let matchedSeq { w.int(matchedSeq) } else { w.null() }
        w.key("differences"); w.beginArray(); for d in differences { d.write(to: &w) }; w.endArray()
    }
}

/// Keeps the layouts published within the settle window and judges observations
/// against them. Pure: time is a parameter (nanoseconds on the daemon's clock, the trace's
/// `t`), and memory is bounded (`capacity` layouts at most, fewer once they age out).
public struct ConformanceTracker: Sendable {
    public static let defaultWindowNs: UInt64 = 500_000_000
    /// At most this many layouts are kept: a flapping hinge at 1 kHz publishes hundreds
    /// within a window, and a device is never expected to show one that old.
    public static let capacity = 256
    /// Layouts are kept this long after they stopped being current (and at least the
    /// window), so a capture delivered late (a page source takes hundreds of milliseconds)
    /// is still judged against what was on screen then.
    public static let captureRetentionNs: UInt64 = 10_000_000_000

    struct Published: Sendable {
        var seq: Int
        var t: UInt64
        var digest: UInt64
        var layout: Layout
    }

    public let windowNs: UInt64
    /// Oldest first; the last is the current layout. Entry i stopped being current at entry i+1's `t`.
    private var history: [Published]
    /// When the current run of stale observations began.
    private var staleSince: UInt64?
    /// Where this tracker's knowledge begins: a replay that starts mid-run (a rotated
    /// part, a gap) does not know the layouts or the stale run before it.
    public private(set) var knownFrom: (seq: Int, t: UInt64)
    /// False when layouts or a stale run may have come before `knownFrom`.
    private let knowsAll: Bool
    private var observedSinceKnown = false
    private var staleRunMayPredate = false

    /// `knowsAll`: nothing came before this layout (a daemon starting, a trace's first part);
    /// false for a replay that starts mid-run.
    public init(layout: Layout, digest: UInt64, seq: Int, t: UInt64, windowNs: UInt64 = ConformanceTracker.defaultWindowNs,
                knowsAll: Bool = true) {
        self.windowNs = windowNs
        self.knowsAll = knowsAll
        history = [Published(seq: seq, t: t, digest: digest, layout: layout)]
        knownFrom = (seq, t)
    }

    /// The settle window from a daemon's configuration (`settleMs`), else the default.
    public static func windowNs(config: JSONValue) -> UInt64 {
        if case .number(let ms)? = config["settleMs"], ms >= 0, ms <= 3_600_000 { return UInt64(ms * 1_000_000) }
        return defaultWindowNs
    }

    /// How many layouts are kept (bounded by `capacity` and the window).
    public var keptLayouts: Int { history.count }

    /// A new layout became current at `seq`, time `t`. The same digest as the current one is no change.
    public mutating func publish(layout: Layout, digest: UInt64, seq: Int, t: UInt64) {
        guard digest != history[history.count - 1].digest else { return }
        history.append(Published(seq: seq, t: t, digest: digest, layout: layout))
        // Entries that stopped being current more than a window ago can never match again.
        let retain = max(windowNs, ConformanceTracker.captureRetentionNs)
        var drop = 0
        while drop < history.count - 1, t > history[drop + 1].t + retain { drop += 1 }
        drop = max(drop, history.count - ConformanceTracker.capacity)
        if drop > 0 { history.removeFirst(drop) }
    }

    /// Starts over from one layout with nothing known before it (a gap in a trace).
    public mutating func restart(layout: Layout, digest: UInt64, seq: Int, t: UInt64) {
        self = ConformanceTracker(layout: layout, digest: digest, seq: seq, t: t, windowNs: windowNs, knowsAll: false)
    }

    /// Judges an observation received at `t` after `seq` events, captured over `captured`
    /// (on this tracker's clock; nil: judged as of `t`, against the current layout).
    ///
    /// A capture over [start, end] cannot end after it was received: a later time, an error
    /// of the client's clock offset, counts as the time received. It is `match` when it
    /// agrees with a layout current at some moment of the capture, `stale` when with one that
    /// stopped being current within the window before the capture began, else `mismatch`,
    /// with the differences from the layout current when the capture ended. Without a
    /// capture, the capture is the moment `t` and the layout current is the newest.
    public mutating func observe(_ request: ObserveRequest, seq: Int, t: UInt64, captured: ClosedRange<UInt64>? = nil) -> Judgement {
        guard let captured else { return judge(request, seq: seq, from: t, shown: history.count - 1, earliest: history.count - 1) }
        let start = min(captured.lowerBound, t), end = min(captured.upperBound, t)
        // The layout current at the end (the oldest kept, for a capture before it), and back
        // to the one current at the start.
        var shown = history.count - 1
        while shown > 0, history[shown].t > end { shown -= 1 }
        var earliest = shown
        while earliest > 0, history[earliest].t > start { earliest -= 1 }
        return judge(request, seq: seq, from: start, shown: shown, earliest: earliest)
    }

    /// The verdict, given the layouts current during the observation (`earliest...shown`,
    /// `shown` the last of them) and when it began (`start`).
    private mutating func judge(_ request: ObserveRequest, seq: Int, from start: UInt64, shown: Int, earliest: Int) -> Judgement {
        defer { observedSinceKnown = true }
        let layout = history[shown]
        func agrees(_ p: Published) -> Bool { Conformance.matches(request.observed, tolerance: request.tolerance, layout: p.layout) }
        for i in stride(from: shown, through: earliest, by: -1) where agrees(history[i]) {
            staleSince = nil
            staleRunMayPredate = false
            return Judgement(ConformanceResult(verdict: .match, seq: seq, layoutSeq: layout.seq, matchedSeq: history[i].seq, differences: []),
                             checkable: true, matchedDigest: history[i].digest)
        }
        let differences = Conformance.differences(request.observed, tolerance: request.tolerance, layout: layout.layout)
        // A layout that stopped being current within the window before the observation began.
        var matched: Int?
        var matchedDigest: UInt64?
        var k = earliest - 1
        while k >= 0, start <= history[k + 1].t + windowNs {
            if history[k].digest != layout.digest, agrees(history[k]) {
                matched = history[k].seq
                matchedDigest = history[k].digest
                break
            }
            k -= 1
        }
        // Within a window of where knowledge begins, a layout from before it might have matched.
        let windowReachesBack = !knowsAll && start <= knownFrom.t + windowNs
        guard let matchedSeq = matched else {
            staleSince = nil
            staleRunMayPredate = false
            return Judgement(ConformanceResult(verdict: .mismatch, seq: seq, layoutSeq: layout.seq, matchedSeq: nil, differences: differences),
                             checkable: !windowReachesBack)
        }
        if staleSince == nil {
            staleSince = start
            staleRunMayPredate = !knowsAll && !observedSinceKnown
        }
        let verdict: Verdict = start > staleSince! + windowNs ? .mismatch : .stale
        return Judgement(ConformanceResult(verdict: verdict, seq: seq, layoutSeq: layout.seq, matchedSeq: matchedSeq, differences: differences),
                         checkable: !windowReachesBack && !staleRunMayPredate, matchedDigest: matchedDigest)
    }

    /// A result, and whether it depends only on what this tracker has seen: a replay that
    /// starts mid-run cannot know the layouts, or the stale run, that came before it.
    public struct Judgement: Sendable {
        public var result: ConformanceResult
        public var checkable: Bool
        /// The digest of the layout the observation agrees with (a match's, or the older
        /// one a stale look shows); nil when it agrees with none.
        public var matchedDigest: UInt64?
        init(_ result: ConformanceResult, checkable: Bool, matchedDigest: UInt64? = nil) {
            self.result = result
            self.checkable = checkable
            self.matchedDigest = matchedDigest
        }
    }

    /// Whether a look captured over `captured` could agree with a layout from before this
    /// tracker's knowledge begins (a replay that starts mid-run): a look is judged against
    /// the layouts current during its capture and, when stale, a window before it.
    public func mayPredateKnowledge(captured: ClosedRange<UInt64>) -> Bool {
        !knowsAll && captured.lowerBound <= knownFrom.t + windowNs
    }

    /// The kept layout with this digest (the newest, if it was current more than once).
    public func kept(digest: UInt64) -> Layout? {
        history.last(where: { $0.digest == digest })?.layout
    }

    /// How a trace keeps a judged look compactly: as a reference to the layout it agrees
    /// with, when it is exactly one view of it. Nil for a mismatch (kept whole: it is the
    /// evidence) and for anything else a rig saw.
    public func reference(for observed: Observation, _ judged: Judgement) -> ObservedReference? {
        guard judged.result.verdict != .mismatch, let digest = judged.matchedDigest, let layout = kept(digest: digest) else { return nil }
        return ObservedReference.of(observed, layout: layout, layoutDigest: digest)
    }

    /// The observation `reference` stands for, from the layouts kept: what a compact trace
    /// record of a look rebuilds (nil when that layout is not kept or this build views it otherwise).
    public func resolve(_ reference: ObservedReference) -> Observation? {
        kept(digest: reference.layout).flatMap { reference.resolve(in: $0) }
    }

    /// Whether a recorded result is the one replayed, reading any seq before the known
    /// history as equal (the push that made the first known layout current is not known).
    public func agrees(recorded: ConformanceResult, replayed: ConformanceResult) -> Bool {
        let floor = knownFrom.seq
        func clamp(_ s: Int?) -> Int? { s.map { max($0, floor) } }
        return recorded.verdict == replayed.verdict && recorded.seq == replayed.seq
            && clamp(recorded.layoutSeq) == clamp(replayed.layoutSeq) && clamp(recorded.matchedSeq) == clamp(replayed.matchedSeq)
            && recorded.differences == replayed.differences
    }
}

extension NonMatchVerdict {
    /// A stale or mismatching result as the glitch checker takes it (a `stale` or a `mismatch`): the
    /// subject is what differs first (`items[share]`), the message the verdict and its differences.
    public init(_ r: ConformanceResult, t: UInt64) {
        let first = r.differences.first
        var message = "\(r.verdict.rawValue) against seq \(r.layoutSeq)"
        if r.verdict == .stale, let m = r.matchedSeq { message += " (the device shows seq \(m))" }
        if let first { message += ": \(first)" + (r.differences.count > 1 ? " and \(r.differences.count - 1) more" : "") }
        self.init(seq: r.seq, t: t, kind: GlitchKind(verdict: r.verdict) ?? .mismatch, subject: first?.subject ?? "layout", message: message)
    }
}
