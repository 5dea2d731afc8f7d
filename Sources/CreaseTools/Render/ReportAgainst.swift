import CreaseCore

/// `crease report ORIGINAL --against REPLAY`: a trace and its replay on the rig in one page
/// (issue 38). The replay's run (between its `replay of …, run N` marks, or the whole file)
/// drawn as a second timeline on the original's scale, both from their own start, and the
/// looks lined up by event as `crease trace diff --by-event` lines them up: each pair's
/// verdicts, how much later the replay looked after its move, and what the devices showed
/// differently.
struct ReportAgainst {
    var name: String
    var story: TraceStory
    var alignment: TraceAlignment

    static func load(_ original: TraceFile, replay: TraceFile, name: String, run: Int?) throws(TraceError) -> ReportAgainst {
        let alignment = try TraceAlignment.align(original: original, replay: replay, run: run)
        let range = alignment.replaySeqs
        let story = try TraceRun.replay(replay, title: name, keepFrames: false, stop: range?.upperBound, start: range?.lowerBound).story
        return ReportAgainst(name: name, story: story, alignment: alignment)
    }

    /// The scale both timelines share: the longer of the two runs.
    func span(with original: TraceStory) -> UInt64 { max(TimelineSVG.span(of: original), TimelineSVG.span(of: story)) }

    func write(to w: inout XMLWriter, original: TraceStory) {
        let a = alignment
        w.begin("section", [("id", "against"), ("data-replay", name), ("data-looks", String(a.looks.count)),
                            ("data-verdicts-differ", String(a.looks.count { !$0.sameVerdict }))])
        w.element("h2", text: "Against \(name)")
        var facts = TraceAlignmentReport.summary(a)
        if a.firstMoveDifference == nil { facts.insert("every move the same", at: 1) }
        if a.firstVerdictDifference == nil, !a.looks.isEmpty { facts.append("every look gave the same verdict") }
        w.element("p", [("id", "against-summary")], text: facts.joined(separator: " · "))
        w.element("h3", text: "The replay's timeline, on the original's scale")
        w.raw(ReportHTML.inline(TimelineSVG.render(story, span: span(with: original))))
        w.element("h3", text: "The looks, lined up by event")
        w.begin("table", [("id", "against-looks")])
        w.begin("tr")
        for h in ["look", "original", "replay", "replay looked later by", "what the devices showed differently"] { w.element("th", text: h) }
        w.end()
        // Differences first; at most as many rows as a moments list.
        let ordered = a.looks.filter { !$0.sameVerdict || !$0.geometry.isEmpty } + a.looks.filter { $0.sameVerdict && $0.geometry.isEmpty }
        for pair in ordered.prefix(ReportHTML.momentsListed) {
            w.begin("tr", [("class", pair.sameVerdict ? "same" : "differs"), ("data-look", String(pair.index))])
            w.element("td", text: String(pair.index))
            w.element("td", [("class", pair.original.result.verdict.rawValue)], text: "seq \(pair.original.seq): \(pair.original.result.verdict.rawValue)")
            w.element("td", [("class", pair.replay.result.verdict.rawValue)], text: "seq \(pair.replay.seq): \(pair.replay.result.verdict.rawValue)")
            w.element("td", text: pair.timingNs.map { Format.fixed(Double($0) / 1e6, 1) + " ms" } ?? "")
            w.element("td", text: pair.geometry.isEmpty ? "the same" : pair.geometry.prefix(3).map(\.description).joined(separator: "; ")
                          + (pair.geometry.count > 3 ? "; and \(pair.geometry.count - 3) more" : ""))
            w.end()
        }
        w.end()
        if ordered.count > ReportHTML.momentsListed {
            w.element("p", [("class", "more")], text: "… and \(ordered.count - ReportHTML.momentsListed) more looks (crease trace diff --by-event --json lists them all)")
        }
        w.end()
    }
}
