/// Walks a run's layouts in time order and reports glitches as they become known. Pure and
/// incremental: one `check` per layout, with its seq, time and digest; events and
/// conformance verdicts go in through their own `check`s. A layout with the digest of the
/// one before costs a comparison; a new one is analysed once per distinct layout (the
/// analysis of the last few is kept, so a layout that keeps coming back is a lookup).
///
/// A condition of one layout (lostItem, occluded, offscreen) is reported when it begins,
/// at the layout that shows it first; while it lasts (or comes back within the flapping
/// window) it is the same episode and is not reported again. Flapping is reported once per
/// episode, when the returns first pass the threshold; an episode ends once the returns
/// within the window have thinned out to half the threshold. A flash is reported when the thing goes (or comes back), pairing each
/// change with the one before at most once.
public struct GlitchChecker: Sendable {
    public let options: GlitchOptions
    private let budgetNs: UInt64
    private var declared: DeclaredItems?
    private var subjects = SubjectTable()

    // The layout before.
    private var last: LayoutFindings?
    private var lastDigest: UInt64 = 0

    // Analyses of recent distinct layouts, most recent last; searched linearly.
    private var recent: [(digest: UInt64, findings: LayoutFindings)] = []
    private static let recentCapacity = 8

    // lostItem, occluded, offscreen: when each condition (by key) last held.
    private var conditionSeen: [String: UInt64] = [:]

    // flapping: layouts left within the window, and the returns to them.
    private var leftAt: [(digest: UInt64, t: UInt64)] = []
    private var returns: [(seq: Int, t: UInt64)] = []
    private var returnsStart = 0
    private var flapping = false

    // flash: per subject number, its last change.
    private struct Change: Sendable { var seq: Int; var t: UInt64; var appeared: Bool; var paired: Bool }
    private var changes: [Change?] = []

    // sideJump: the vertical bar as last seen, and whether anything that can move it happened since.
    private var bar: (edge: HorizontalEdge, side: Side, id: String, seq: Int, t: UInt64)?
    private var moved = false

    public init(options: GlitchOptions = GlitchOptions(), app: App? = nil) {
        self.options = options
        budgetNs = options.budgetNs ?? GlitchOptions.defaultBudgetNs
        declared = app.map(DeclaredItems.init)
    }

    /// The app whose declared items `lostItem` looks for; call it when the app is replaced.
    public mutating func use(app: App) {
        declared = DeclaredItems(app: app)
        recent.removeAll()
    }

    /// The whole state was replaced (a `load`, or a trace resuming after a gap): anything,
    /// the vertical bar included, may change without an event that explains it.
    public mutating func replaced(app: App) {
        use(app: app)
        moved = true
    }

    /// The layout at `seq`, time `t` (ns), whose digest is `digest`.
    public mutating func check(layout: Layout, seq: Int, t: UInt64, digest: UInt64) -> [Glitch] {
        if let previous = last, digest == lastDigest {
            if previous.verticalEdge != nil { moved = false }
            return []
        }
        let findings = analysis(layout, digest: digest)
        var out: [Glitch] = []
        conditions(findings, seq: seq, t: t, into: &out)
        if let previous = last {
            flap(to: digest, from: lastDigest, seq: seq, t: t, into: &out)
            flash(from: previous.present, to: findings.present, seq: seq, t: t, into: &out)
            if previous.orientation != findings.orientation || previous.display != findings.display
                || previous.direction != findings.direction || previous.window != findings.window {
                moved = true
            }
        }
        sideJump(findings, seq: seq, t: t, into: &out)
        last = findings
        lastDigest = digest
        return options.ignore.isEmpty ? out : out.filter { !options.ignores($0) }
    }

    /// An applied event: its latency against the budget, and whether it can move the vertical bar.
    public mutating func check(event e: CheckedEvent) -> [Glitch] {
        applied(e)
        return check(latencyOf: e)
    }

    /// An applied event, before its latency is known: whether it can move the vertical bar.
    /// The daemon calls this, then checks the layout, then `check(latencyOf:)`, so that the
    /// latency it reports counts the checker's own work on the event's path.
    public mutating func applied(_ e: CheckedEvent) {
        if e.canMoveBar { moved = true }
    }

    /// An applied event's latency against the budget.
    public func check(latencyOf e: CheckedEvent) -> [Glitch] {
        guard let latency = e.latencyNs, latency > budgetNs else { return [] }
        let g = Glitch(kind: .overBudget, subject: e.name, firstSeq: e.seq, lastSeq: e.seq, firstT: e.t, lastT: e.t,
                       message: "\(e.name) event at seq \(e.seq) took \(Duration.text(latency)), over the \(Duration.text(budgetNs)) budget")
        return options.ignores(g) ? [] : [g]
    }

    /// A conformance verdict that did not match: a `mismatch`, or a `stale` look (the device
    /// catching up), each its own kind.
    public mutating func check(verdict v: NonMatchVerdict) -> [Glitch] {
        let what = v.kind == .stale ? "the device had not caught up with the layout at seq" : "the device did not match the layout at seq"
        let g = Glitch(kind: v.kind, subject: v.subject, firstSeq: v.seq, lastSeq: v.seq, firstT: v.t, lastT: v.t,
                       message: "\(what) \(v.seq): \(v.message)")
        return options.ignores(g) ? [] : [g]
    }

    // MARK: - The checks

    private mutating func analysis(_ layout: Layout, digest: UInt64) -> LayoutFindings {
        if let i = recent.lastIndex(where: { $0.digest == digest }) {
            let entry = recent.remove(at: i)
            recent.append(entry)
            return entry.findings
        }
        let f = LayoutFindingRules.analyze(layout, declared: declared, subjects: &subjects)
        if recent.count == GlitchChecker.recentCapacity { recent.removeFirst() }
        recent.append((digest, f))
        return f
    }

    private mutating func conditions(_ f: LayoutFindings, seq: Int, t: UInt64, into out: inout [Glitch]) {
        let before = last?.findings ?? []
        let beforeKeys = last?.keys ?? []
        // Conditions that end here held until now.
        for old in before where !f.keys.contains(old.conditionKey) {
            conditionSeen[old.conditionKey] = t
        }
        for c in f.findings where !beforeKeys.contains(c.conditionKey) {
            let key = c.conditionKey
            if let seen = conditionSeen[key], t &- seen <= options.flappingWindowNs { continue }
            conditionSeen[key] = t
            out.append(Glitch(kind: c.kind, subject: c.subject, firstSeq: seq, lastSeq: seq, firstT: t, lastT: t,
                              message: c.message + " from seq \(seq)"))
        }
    }

    private mutating func flap(to digest: UInt64, from previous: UInt64, seq: Int, t: UInt64, into out: inout [Glitch]) {
        let window = options.flappingWindowNs
        leftAt.removeAll { t &- $0.t > window || $0.digest == previous }
        let isReturn = leftAt.contains { $0.digest == digest }
        leftAt.append((previous, t))
        if leftAt.count > 64 { leftAt.removeFirst() }
        guard isReturn else { return }
        while returnsStart < returns.count, t &- returns[returnsStart].t > window { returnsStart += 1 }
        if flapping, returns.count - returnsStart <= options.flappingReturns / 2 {
            // The returns have thinned out to half the threshold: the episode is over, and
            // the next one counts from here.
            flapping = false
            returns.removeAll(keepingCapacity: true)
            returnsStart = 0
        }
        if returnsStart > 256 {
            returns.removeFirst(returnsStart)
            returnsStart = 0
        }
        returns.append((seq, t))
        let count = returns.count - returnsStart
        guard count > options.flappingReturns, !flapping else { return }
        flapping = true
        let first = returns[returnsStart]
        let layouts = leftAt.count
        out.append(Glitch(kind: .flapping, subject: "layout", firstSeq: first.seq, lastSeq: seq, firstT: first.t, lastT: t,
                          message: "the layout went back to one it had shown within \(Duration.text(window)) \(count) times in \(Duration.text(t &- first.t)) (seq \(first.seq)…\(seq)), among \(layouts) layouts"))
    }

    private mutating func flash(from before: [Int32], to now: [Int32], seq: Int, t: UInt64, into out: inout [Glitch]) {
        var i = 0, j = 0
        while i < before.count || j < now.count {
            if j == now.count || (i < before.count && before[i] < now[j]) {
                changed(before[i], appeared: false, seq: seq, t: t, into: &out)
                i += 1
            } else if i == before.count || now[j] < before[i] {
                changed(now[j], appeared: true, seq: seq, t: t, into: &out)
                j += 1
            } else {
                i += 1
                j += 1
            }
        }
    }

    private mutating func changed(_ subject: Int32, appeared: Bool, seq: Int, t: UInt64, into out: inout [Glitch]) {
        let n = Int(subject)
        if n >= changes.count { changes.append(contentsOf: repeatElement(nil, count: n + 1 - changes.count)) }
        var paired = false
        if let c = changes[n], !c.paired, c.appeared != appeared, t &- c.t < options.flashNs {
            paired = true
            let (kind, id) = subjects.names[n]
            let what = SubjectTable.describe(kind, id)
            let lasted = Duration.text(t &- c.t)
            let message = c.appeared
                ? "\(what) appeared at seq \(c.seq) and was gone \(lasted) later, at seq \(seq)"
                : "\(what) vanished at seq \(c.seq) and was back \(lasted) later, at seq \(seq)"
            out.append(Glitch(kind: .flash, subject: id, firstSeq: c.seq, lastSeq: seq, firstT: c.t, lastT: t, message: message))
        }
        changes[n] = Change(seq: seq, t: t, appeared: appeared, paired: paired)
    }

    private mutating func sideJump(_ f: LayoutFindings, seq: Int, t: UInt64, into out: inout [Glitch]) {
        guard let edge = f.verticalEdge, let side = f.verticalSide, let id = f.verticalBarId else { return }
        if let b = bar, b.edge != edge || b.side != side, !moved {
            out.append(Glitch(kind: .sideJump, subject: id, firstSeq: b.seq, lastSeq: seq, firstT: b.t, lastT: t,
                              message: "the vertical bar moved from the \(b.edge.rawValue) edge (\(b.side.rawValue)) at seq \(b.seq) to the \(edge.rawValue) edge (\(side.rawValue)) at seq \(seq) with no rotation, Split View, display, writing direction or app change in between"))
        }
        bar = (edge, side, id, seq, t)
        moved = false
    }
}

extension SubjectTable {
    static func describe(_ kind: Kind, _ id: String) -> String {
        switch kind {
        case .item: "item \"\(id)\""
        case .bar: "bar \"\(id)\""
        case .region: "the \(LayoutFindingRules.regionName(RegionKind(rawValue: id) ?? .statusBar))"
        case .sheet: "sheet \"\(id)\""
        }
    }
}
