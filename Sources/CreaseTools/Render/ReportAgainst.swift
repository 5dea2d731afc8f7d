import CreaseCore

/// `crease report ORIGINAL --against REPLAY`: a trace and its replay on the rig in one page
/// (issue 38). The replay's run (between its `replay of …, run N` marks, or the whole file)
/// drawn as a second timeline on the original's scale, both from their own start, and the
/// looks lined up by event as `crease trace diff --by-event` lines them up: each pair's
/// verdicts, how much later the replay looked after its move, and what the devices showed
/// differently. The first pairs that differ are pictured: the frame the model expected at
/// the replay's look, beside each device's screenshot where the rig kept one.
struct ReportAgainst {
    typealias Picture = (mime: String, base64: String)

    /// A pair of looks drawn: the replay's expected frame (SVG) and the screenshots found.
    struct Pictured {
        var pair: Int
        var expected: String
        var original: Picture?
        var replay: Picture?
    }

    /// The most pairs pictured: each is a frame and up to two screenshots.
    static let picturedPairs = 12

    var name: String
    var story: TraceStory
    var alignment: TraceAlignment
    var pictured: [Pictured] = []

    /// `originalShots` (`--screenshots`) and `replayShots` (`--against-screenshots`): the
    /// directories each run's screenshots are in, named as `--screenshots` names them.
    static func load(_ original: TraceFile, replay: TraceFile, name: String, run: Int?, originalShots: String? = nil,
                     replayShots: String? = nil) throws(TraceError) -> ReportAgainst {
        let alignment = try TraceAlignment.align(original: original, replay: replay, run: run)
        let range = alignment.replaySeqs
        let story = try TraceRun.replay(replay, title: name, keepFrames: false, stop: range?.upperBound, start: range?.lowerBound).story
        var against = ReportAgainst(name: name, story: story, alignment: alignment)
        let differing = against.ordered.prefix { !$0.sameVerdict || !$0.geometry.isEmpty }
        let chosen = Array((differing.isEmpty && (originalShots != nil || replayShots != nil) ? against.ordered[...] : differing)
            .prefix(picturedPairs))
        guard !chosen.isEmpty else { return against }
        // The replay's looks are its story's observations, each with a frame stub of its own, in order.
        let lookStubs = story.frameStubs.indices.filter { story.frameStubs[$0].verdict != nil }
        var stubOfLook: [Int: Int] = [:]  // pair index → stub index
        for pair in chosen {
            if let k = story.observations.firstIndex(where: { $0.seq == pair.replay.seq && $0.t == pair.replay.t }), k < lookStubs.count {
                stubOfLook[pair.index] = lookStubs[k]
            }
        }
        let kept = try TraceRun.replay(replay, title: name, keepFrames: true, keeping: Set(stubOfLook.values), stop: range?.upperBound,
                                       start: range?.lowerBound).story
        for pair in chosen {
            guard let frame = kept.frames.first(where: { $0.observed.map { $0.seq == pair.replay.seq && $0.t == pair.replay.t } ?? false }),
                  let o = frame.observed else { continue }
            let svg = FrameSVG.render(frame.layout, app: frame.app, caption: FrameSet.observedCaption(o, digest: frame.digest, kept), observed: o)
            against.pictured.append(Pictured(pair: pair.index, expected: svg,
                                             original: originalShots.flatMap { ReportCommand.screenshot(in: $0, id: pair.original.id, seq: pair.original.seq) },
                                             replay: replayShots.flatMap { ReportCommand.screenshot(in: $0, id: pair.replay.id, seq: pair.replay.seq) }))
        }
        return against
    }

    /// The pairs as the page lists them: those that differ first.
    var ordered: [TraceAlignment.LookPair] {
        alignment.looks.filter { !$0.sameVerdict || !$0.geometry.isEmpty } + alignment.looks.filter { $0.sameVerdict && $0.geometry.isEmpty }
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
        let ordered = self.ordered
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
        if !pictured.isEmpty {
            w.element("h3", text: "What the model expected at the replay's look, beside the devices' screenshots")
            for p in pictured {
                w.begin("figure", [("class", "against-look"), ("data-look", String(p.pair))])
                w.raw(ReportHTML.inline(p.expected))
                for (shot, whose) in [(p.original, "original"), (p.replay, "replay")] {
                    guard let shot else { continue }
                    w.begin("figure", [("class", "screenshot \(whose)")])
                    w.leaf("img", [("src", "data:\(shot.mime);base64,\(shot.base64)"), ("alt", "the \(whose) run's screenshot at look \(p.pair)")])
                    w.element("figcaption", text: "the \(whose) run's device")
                    w.end()
                }
                w.element("figcaption", text: "look \(p.pair): expected at the replay's seq, "
                          + (p.original == nil && p.replay == nil ? "no screenshot kept" : "then the devices"))
                w.end()
            }
        }
        w.end()
    }
}
