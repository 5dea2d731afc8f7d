import CreaseCore

/// The why of `crease report`'s frames: at every drawn frame's seq, each control of its layout
/// (and the bar axis, and each field an observation there disagreed on) explained as
/// `crease trace why` explains it, in one pass over the trace. The page shows the selected
/// control's at the cursor and each mismatch's beside it.
struct ReportWhy {
    /// By seq: the explanations there, in the layout's order (bar axis, then controls).
    private(set) var bySeq: [Int: [TraceWhy.Explanation]] = [:]
    /// Every subject explained at some frame, in the order first met: the page's choice.
    private(set) var subjects: [WhySubject] = []
    /// By seq: the subject of each path an observation there disagreed on.
    private var mismatchSubjects: [Int: [(path: String, subject: WhySubject)]] = [:]

    static func compute(_ file: TraceFile, story: TraceStory) throws(TraceError) -> ReportWhy {
        var seqs: [Int] = []
        var mismatchPaths: [Int: [String]] = [:]
        for frame in story.frames {
            seqs.append(frame.seq)
            guard let o = frame.observed, o.result.verdict != .match else { continue }
            mismatchPaths[frame.seq, default: []] += o.result.differences.map(\.path)
        }
        seqs.sort()
        seqs = seqs.enumerated().filter { $0.offset == 0 || seqs[$0.offset - 1] != $0.element }.map(\.element)
        var why = ReportWhy()
        let answers = try TraceWhy.explainAll(file, at: seqs, subjects: { engine in
            let mismatches = (mismatchPaths[engine.seq] ?? []).map { ($0, TraceWhy.subject(of: $0, in: engine.layout)) }
            if !mismatches.isEmpty { why.mismatchSubjects[engine.seq] = mismatches }
            return controls(engine.layout) + mismatches.map(\.1)
        })
        for (seq, explanations) in answers {
            var unique: [TraceWhy.Explanation] = []
            for e in explanations where !unique.contains(where: { $0.subject == e.subject }) { unique.append(e) }
            why.bySeq[seq] = unique
            for e in unique where !why.subjects.contains(e.subject) { why.subjects.append(e.subject) }
        }
        return why
    }

    /// The bar axis, then every control the layout places: the bars' items and overflow
    /// menus, the floating buttons.
    static func controls(_ layout: Layout) -> [WhySubject] {
        var ids: [String] = []
        for bar in layout.bars {
            for item in bar.items where !ids.contains(item.id) { ids.append(item.id) }
            for id in bar.overflow where !ids.contains(id) { ids.append(id) }
        }
        for f in layout.floating where !ids.contains(f.id) { ids.append(f.id) }
        return [.field("barAxis")] + ids.map { .item($0) }
    }

    func explanation(at seq: Int, of subject: WhySubject) -> TraceWhy.Explanation? {
        bySeq[seq]?.first { $0.subject == subject }
    }

    /// The why of the value expected where an observation at `seq` found `path` different.
    func explanation(at seq: Int, mismatchAt path: String) -> TraceWhy.Explanation? {
        guard let subject = mismatchSubjects[seq]?.first(where: { $0.path == path })?.subject else { return nil }
        return explanation(at: seq, of: subject)
    }

    /// One line: where it is, the rule, and the event that made it so (the rule's passage is
    /// the line's title, so a page with many controls stays small).
    static func text(_ e: TraceWhy.Explanation) -> String {
        let because: String
        if let b = e.because, let s = b.setBy {
            because = "because \(b.name) became \(b.value) at seq \(s.seq): \(s.event)"
        } else {
            because = "decided by the manifest and the start state (no input the rule reads moved it)"
        }
        return "\(e.subject): \(e.outcome) · \(e.rule.name) · \(because)"
    }

    /// The value a `<select>` option and a `data-subject` attribute carry.
    static func key(_ subject: WhySubject) -> String {
        switch subject {
        case .item(let id): "item:" + id
        case .field(let path): "field:" + path
        }
    }
}
