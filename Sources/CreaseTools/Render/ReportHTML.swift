import CreaseCore

/// `crease report`: a trace as one self-contained HTML page for a bug ticket (docs/report.md).
/// Inline CSS, script and SVG, and screenshots as data URIs: the page loads nothing, so it
/// opens from `file://` and offline. At the top the figures `trace info`, `trace glitches`
/// and `trace conformance` give; then the timeline, and a player that shows the frame at
/// the cursor (a slider, the arrow keys, and a list of the moments that went wrong, each a
/// link to its frame); at an observation, what the rig saw drawn over what was expected,
/// with the differences, and the device's screenshot beside it when one was given.
enum ReportHTML {
    struct Input {
        var title: String
        var file: TraceFile
        var summary: TraceSummary
        var story: TraceStory
        /// Screenshots by frame index: MIME type and base64 data.
        var screenshots: [Int: (mime: String, base64: String)]
        /// `--minimize`: what was shrunk, and the event lines left.
        var minimized: (property: String, lines: [String])?
        /// Which of the run's frames `story` draws (`ReportFocus`), and the frame each of its
        /// glitches is drawn at (nil: not drawn).
        var selection: ReportFocus.Selection
        var glitchFrames: [Int?]
        var focus: String?
        /// The why of each drawn frame's controls and mismatches.
        var why: ReportWhy
        /// `--filmstrips`: a frame judge's picture of each flagged frame, by index in `story.screen`.
        var filmstrips: [Int: (mime: String, base64: String)] = [:]
        /// `--against REPLAY`: the replay on the rig, beside this trace.
        var against: ReportAgainst?
    }

    /// The most moments each list names (mismatches first): a campaign has tens of thousands
    /// of looks and glitches, which made its page 12 MB; the figures at the top count them all.
    static let momentsListed = 500

    static func render(_ input: Input) -> String {
        let story = input.story
        let s = input.summary
        let h = input.file.header
        var w = XMLWriter(declaration: false)
        w.raw("<!DOCTYPE html>")
        w.begin("html", [("lang", "en")])
        w.begin("head")
        w.leaf("meta", [("charset", "utf-8")])
        w.leaf("meta", [("name", "generator"), ("content", "crease report")])
        w.element("title", text: input.title)
        w.begin("style")
        w.raw(css)
        w.end()
        w.end()
        w.begin("body")
        w.begin("header")
        w.element("h1", text: input.title)
        w.element("p", [("class", "meta")],
                  text: "\(h.daemon) · app \(h.app.name) · profile \(h.profile.name) · started \(h.started) · part \(h.part) (\(h.reason))"
                      + (h.labels.isEmpty ? "" : " · " + h.labels.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")))
        w.end()

        // The figures.
        w.begin("section", [("id", "summary")])
        w.element("h2", text: "Summary")
        w.begin("table", [("class", "figures")])
        func row(_ name: String, _ value: String, id: String) {
            w.begin("tr", [("id", id)])
            w.element("th", text: name)
            w.element("td", text: value)
            w.end()
        }
        row("duration", Timescale.seconds(Int64(s.durationNs)) + ", seq \(h.initialSeq + 1)…\(s.lastSeq ?? h.initialSeq)", id: "duration")
        row("events", "\(s.events): " + s.eventsByType.map { "\($0.name) \($0.count)" }.joined(separator: ", "), id: "events")
        let poses = uniqueInOrder(story.points.map { "\($0.pose.rawValue)" }, first: story.start.pose.rawValue)
        let orientations = uniqueInOrder(story.points.map { $0.orientation.rawValue }, first: story.start.orientation.rawValue)
        row("poses", poses.joined(separator: " → "), id: "poses")
        row("orientations", orientations.joined(separator: " → "), id: "orientations")
        // As `trace info` gives it (its percentiles), with how many went over the budget.
        if let l = s.relayoutLatency {
            let over = h.budgetNs.map { b in story.points.filter { ($0.relayoutNs ?? 0) > b }.count } ?? 0
            row("latency", "read → layout queued: p50 \(micros(l.p50)) µs, p99 \(micros(l.p99)) µs, over the budget \(over) of \(l.count)",
                id: "latency")
        } else {
            row("latency", "not recorded in this trace", id: "latency")
        }
        // The device's mismatches and stale looks apart from what the model's rules did.
        let device: [GlitchKind] = [.mismatch, .stale]
        let glitchCounts = GlitchKind.allCases.map { k in (k, story.glitches.filter { $0.kind == k }.count) }.filter { $0.1 > 0 }
        let deviceCounts = glitchCounts.filter { device.contains($0.0) }, modelCounts = glitchCounts.filter { !device.contains($0.0) }
        row("device", deviceCounts.isEmpty ? "no mismatch" : deviceCounts.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", "), id: "device-glitches")
        let shifts = story.shifts
        // The device's windows as a frame judge measured them, beside the model's.
        let deviceShift = story.deviceShifts.max { ($0.score ?? 0) < ($1.score ?? 0) }
        row("layout shift", (shifts.windows.isEmpty ? "the model: 0, no control moved under the user"
            : "the model: \(LayoutShift.text(shifts.max)), the largest of \(shifts.windows.count) session windows"
                + (shifts.windows.max(by: { $0.score < $1.score }).map { " (seq \($0.fromSeq)…\($0.toSeq))" } ?? ""))
            + (deviceShift.map { "; the device: \(LayoutShift.text($0.score ?? 0)), the largest of \(story.deviceShifts.count) windows a frame judge measured (up to frame \($0.frame), about seq \($0.refSeq))" }
                ?? "; the device: not measured (a frame judge records its windows: crease.frames Judgement.record)"),
            id: "layout-shift")
        let sel = input.selection
        row("frames", sel.all ? "all \(sel.total) drawn"
            : "\(sel.kept.count) of \(sel.total) drawn, " + (input.focus.map { "around \($0) (--focus)" } ?? "around the mismatches and glitches, the rest spread over the run")
                + "; the timeline shows every event" + (sel.undrawnGlitches > 0 ? "; \(sel.undrawnGlitches) glitches fall outside the frames drawn" : ""),
            id: "frames-drawn")
        row("glitches", modelCounts.isEmpty ? "none" : modelCounts.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", "), id: "glitches")
        row("screen", screenSummary(story, relayout: s.relayoutLatency), id: "screen")
        let verdicts = Verdict.allCases.map { v in (v, story.observations.filter { $0.result.verdict == v }.count) }
        row("conformance", story.observations.isEmpty ? "no observations" : verdicts.map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", "),
            id: "conformance")
        w.end()
        w.end()

        // The timeline, as crease render --timeline draws it.
        w.begin("section", [("id", "timeline")])
        w.element("h2", text: "Timeline")
        w.raw(inline(TimelineSVG.render(story, span: input.against?.span(with: story))))
        w.end()
        input.against?.write(to: &w, original: story)

        // The player.
        let files = FrameSet.files(story).filter { $0.name.hasSuffix(".svg") }
        w.begin("section", [("id", "player")])
        w.element("h2", text: "Frames")
        w.begin("div", [("class", "controls")])
        w.leaf("input", [("type", "range"), ("id", "scrub"), ("min", "0"), ("max", String(max(0, files.count - 1))), ("value", "0"),
                         ("aria-label", "frame")])
        w.element("span", [("id", "position")], text: "1 / \(files.count)")
        w.element("span", [("class", "hint")], text: "← → step · Page Up/Down ten · Home/End")
        w.element("label", [("for", "why-subject")], text: "why:")
        w.begin("select", [("id", "why-subject")])
        for subject in input.why.subjects {
            w.element("option", [("value", ReportWhy.key(subject))], text: subject.description)
        }
        w.end()
        w.end()
        w.element("p", [("id", "caption")], text: "")
        w.begin("div", [("class", "stage")])
        w.begin("div", [("id", "frames")])
        for (i, f) in files.enumerated() {
            let frame = story.frames[i]
            var attributes: [(String, String)] = [("class", "frame"), ("id", "frame-\(i)"), ("data-seq", String(frame.seq)),
                                                  ("data-t", Timescale.seconds(Int64(frame.t &- story.start.t))),
                                                  ("data-digest", Digest.hex(frame.digest)), ("data-event", frame.eventText ?? "the start")]
            if let o = frame.observed { attributes.append(("data-verdict", o.result.verdict.rawValue)) }
            if i != 0 { attributes.append(("hidden", "hidden")) }
            w.begin("div", attributes)
            w.raw(inline(f.contents))
            if let shot = input.screenshots[i] {
                w.begin("figure", [("class", "screenshot")])
                w.leaf("img", [("src", "data:\(shot.mime);base64,\(shot.base64)"), ("alt", "the device's screenshot at this observation")])
                w.element("figcaption", text: "the device's screenshot")
                w.end()
            }
            if let o = frame.observed, !o.result.differences.isEmpty {
                w.begin("ul", [("class", "differences")])
                for d in o.result.differences {
                    w.begin("li")
                    w.element("span", text: "\(d)")
                    if let e = input.why.explanation(at: frame.seq, mismatchAt: d.path) {
                        w.element("div", [("class", "mismatch-why")], text: "expected, " + ReportWhy.text(e))
                    }
                    w.end()
                }
                w.end()
            }
            // The why of every control here; the page shows the one chosen above.
            w.begin("ul", [("class", "why")])
            for e in input.why.bySeq[frame.seq] ?? [] {
                w.element("li", [("data-subject", ReportWhy.key(e.subject)), ("hidden", "hidden")], text: ReportWhy.text(e))
            }
            w.end()
            w.end()
        }
        w.end()
        // The moments that went wrong, each a link to its frame: first what the device showed
        // against the model (its looks, mismatches first), then the model's own glitches
        // (what the rules did: a flap the profile allows, an item pushed off screen).
        w.begin("div", [("id", "moments")])
        w.element("h3", text: "Moments")
        let looks = story.frames.enumerated().compactMap { i, frame in frame.observed.map { (i, $0) } }
        let order: [Verdict] = [.mismatch, .stale, .match]
        w.element("h4", text: "The device against the model")
        w.begin("ul", [("id", "device-moments")])
        var shown = 0
        for verdict in order {
            for (i, o) in looks where o.result.verdict == verdict {
                shown += 1
                if shown > momentsListed { continue }
                w.begin("li", [("class", "observation \(o.result.verdict.rawValue)"), ("data-frame", String(i)), ("data-verdict", o.result.verdict.rawValue)])
                w.element("a", [("href", "#frame-\(i)")],
                          text: "observation · seq \(o.seq): \(o.result.verdict.rawValue)"
                              + (o.result.differences.first.map { ", \($0)" } ?? ""))
                w.end()
            }
        }
        if shown > momentsListed {
            w.element("li", [("class", "more")], text: "… and \(shown - momentsListed) more looks, not listed (crease trace conformance lists them all)")
        }
        if shown == 0 { w.element("li", text: looks.isEmpty ? "no look at the device in this trace" : "every look matched") }
        w.end()
        w.element("h4", text: "The model's own glitches")
        w.begin("ul", [("id", "model-moments")])
        shown = 0
        for (k, g) in story.glitches.enumerated() where g.kind != .mismatch && g.kind != .stale {
            shown += 1
            if shown > momentsListed { continue }
            let text = "\(g.kind.rawValue) \(g.subject) · seq \(g.firstSeq): \(g.message)"
            guard k < input.glitchFrames.count, let i = input.glitchFrames[k] else {
                w.element("li", [("class", "glitch undrawn"), ("data-kind", g.kind.rawValue)], text: text + " (its frame is not drawn)")
                continue
            }
            w.begin("li", [("class", "glitch"), ("data-frame", String(i)), ("data-kind", g.kind.rawValue)])
            w.element("a", [("href", "#frame-\(i)")], text: text)
            w.end()
        }
        if shown > momentsListed {
            w.element("li", [("class", "more")], text: "… and \(shown - momentsListed) more glitches, not listed (crease trace glitches lists them all)")
        }
        if shown == 0 { w.element("li", text: "none") }
        w.end()
        w.end()
        w.end()
        w.end()

        if !story.screen.isEmpty { filmstrip(input, to: &w) }

        // The rules the why lines name, each with the passage it applies, once.
        let rules = LayoutRule.allCases.filter { rule in input.why.bySeq.values.contains { $0.contains { $0.rule == rule } } }
        if !rules.isEmpty {
            w.begin("section", [("id", "rules")])
            w.element("h2", text: "The rules named above")
            w.begin("dl")
            for rule in rules {
                w.element("dt", text: rule.name)
                w.element("dd", text: rule.passage)
            }
            w.end()
            w.end()
        }

        if let m = input.minimized {
            w.begin("section", [("id", "minimized")])
            let observations = m.lines.count { $0.hasPrefix(#"{"cmd":"observe""#) }
            let events = m.lines.count - observations
            w.element("h2", text: "Minimized: \(events) events" + (observations > 0 ? " and \(observations) observation\(observations == 1 ? "" : "s")" : "")
                      + " show \(m.property)")
            w.element("p", text: observations > 0
                      ? "Send these lines to a fresh daemon (crease send, or a socket) to see the verdict again; the events alone go to crease layout --events -:"
                      : "Paste into crease layout --events - (or send them to a daemon) to see it again:")
            w.element("pre", [("id", "minimized-events")], text: m.lines.joined(separator: "\n"))
            w.end()
        }

        w.begin("script")
        w.raw(script)
        w.end()
        w.end()
        w.end()
        return w.finish()
    }

    /// The `#screen` row: what a frame judge flagged, by kind, and the device's relayout
    /// latency its late relayouts measured beside creased's own.
    static func screenSummary(_ story: TraceStory, relayout: Percentiles?) -> String {
        guard !story.screen.isEmpty else { return "no frame flagged (a frame judge records its verdicts into the trace: crease.frames Judgement.record)" }
        let kinds = FrameVerdict.Kind.allCases.map { k in (k, story.screen.filter { $0.kind == k }.count) }.filter { $0.1 > 0 }
        var text = "\(story.screen.count) flagged: " + kinds.map { "\($0.0.rawValue) \($0.1)" }.joined(separator: ", ")
        // As trace info ranks creased's own latencies, in microseconds.
        if let d = Percentiles(story.screen.compactMap { $0.relayoutMs.map { UInt64(($0 * 1000).rounded()) } }) {
            text += "; the device's relayout p50 \(Format.fixed(Double(d.p50) / 1000, 1)) ms, p99 \(Format.fixed(Double(d.p99) / 1000, 1)) ms"
                + " over \(d.count) late relayout\(d.count == 1 ? "" : "s")"
            if let r = relayout { text += " (creased's own: p50 \(micros(r.p50)) µs, p99 \(micros(r.p99)) µs)" }
        }
        return text
    }

    /// The filmstrip lane: each flagged frame in the trace's order, the judge's picture of it
    /// when `--filmstrips` gave one (the frames before and after, and the picture expected),
    /// and a link to the expected frame drawn in the player.
    static func filmstrip(_ input: Input, to w: inout XMLWriter) {
        let story = input.story
        w.begin("section", [("id", "filmstrip")])
        w.element("h2", text: "The screen, frame by frame")
        w.element("p", text: input.filmstrips.isEmpty
                  ? "What a frame judge flagged on the device's screen. Give --filmstrips DIR (crease-rig frames judge --filmstrip DIR) to see each flagged frame beside the picture expected."
                  : "What a frame judge flagged on the device's screen: the frame before, the flagged frame (outlined), the frame after, and the picture the model expected.")
        w.begin("div", [("class", "lane")])
        let layoutFrames = ReportFocus.LayoutFrames(drawn: story)
        for (i, v) in story.screen.enumerated() {
            w.begin("figure", [("class", "strip \(v.kind.rawValue)"), ("data-kind", v.kind.rawValue), ("data-frame", String(v.frame)),
                               ("data-seq", String(v.refSeq))])
            if let shot = input.filmstrips[i] {
                w.leaf("img", [("src", "data:\(shot.mime);base64,\(shot.base64)"), ("alt", "frame \(v.frame): \(v.kind.rawValue)")])
            }
            var caption = "\(v.kind.rawValue) · frame \(v.frame) · t \(Timescale.seconds(Int64(v.t &- story.start.t))) · seq \(v.refSeq)"
            if let r = v.region { caption += " · region \(Format.fixed(r.x, 0)),\(Format.fixed(r.y, 0)) \(Format.fixed(r.w, 0))×\(Format.fixed(r.h, 0)) pt" }
            if let ms = v.relayoutMs { caption += " · \(Format.fixed(ms, 0)) ms late" }
            w.begin("figcaption")
            w.element("span", text: caption)
            if let f = layoutFrames.frame(of: v.refSeq) {
                w.element("a", [("href", "#frame-\(f)"), ("data-frame", String(f))], text: " expected: frame \(f + 1)")
            }
            w.end()
            w.end()
        }
        w.end()
        w.end()
    }

    /// An SVG document without its XML declaration, to sit inside the page.
    static func inline(_ svg: String) -> String {
        guard svg.hasPrefix("<?xml"), let end = svg.range(of: "?>") else { return svg }
        return String(svg[end.upperBound...]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func uniqueInOrder(_ values: [String], first: String) -> [String] {
        var out = [first]
        for v in values where v != out.last { out.append(v) }
        return out.count > 40 ? Array(out.prefix(20)) + ["… \(out.count - 40) more"] + Array(out.suffix(20)) : out
    }

    static func micros(_ ns: UInt64) -> String { Format.fixed(Double(ns) / 1000, 1) }

    static let css = """
        body { font-family: \(Palette.sans); margin: 16px; color: \(Palette.ink); background: \(Palette.page); }
        h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 20px 0 8px; }
        .meta { color: #555; margin: 0; }
        table.figures th { text-align: left; padding-right: 16px; font-weight: 600; vertical-align: top; }
        table.figures td { padding: 2px 0; }
        #timeline svg { max-width: 100%; height: auto; }
        .controls { display: flex; gap: 12px; align-items: center; }
        #scrub { flex: 1; }
        .hint { color: #777; font-size: 12px; }
        .stage { display: flex; gap: 16px; align-items: flex-start; }
        #frames { flex: 0 1 auto; }
        #frames svg { max-height: 80vh; width: auto; }
        #moments { flex: 1; max-height: 80vh; overflow: auto; font-size: 13px; }
        #moments li.glitch a, #moments li.mismatch a { color: #b00020; }
        #moments li.stale a { color: #a06000; } #moments li.match a { color: #1b7f3a; }
        #moments h4 { margin: 8px 0 2px; font-size: 13px; }
        figure.screenshot img { max-height: 60vh; border: 1px solid #ccc; }
        ul.differences { color: #b00020; font-size: 13px; }
        ul.why { font-size: 13px; list-style: none; padding: 0; max-width: 60em; }
        .mismatch-why { color: \(Palette.ink); }
        #filmstrip .lane { display: flex; gap: 12px; overflow-x: auto; padding-bottom: 8px; }
        #filmstrip figure { margin: 0; flex: 0 0 auto; font-size: 12px; }
        #filmstrip img { max-height: 40vh; border: 1px solid #ccc; display: block; }
        pre { background: #f4f4f4; padding: 8px; overflow: auto; }
        """

    static let script = """
        (function () {
          var frames = Array.prototype.slice.call(document.querySelectorAll('#frames .frame'));
          var scrub = document.getElementById('scrub');
          var position = document.getElementById('position');
          var caption = document.getElementById('caption');
          var current = 0;
          function go(i) {
            if (!frames.length) return;
            i = Math.max(0, Math.min(frames.length - 1, i));
            frames[current].hidden = true;
            frames[i].hidden = false;
            current = i;
            scrub.value = String(i);
            position.textContent = (i + 1) + ' / ' + frames.length;
            var f = frames[i];
            caption.textContent = 'seq ' + f.dataset.seq + ' · t ' + f.dataset.t + ' · digest ' + f.dataset.digest + ' · ' + f.dataset.event
              + (f.dataset.verdict ? ' · observation: ' + f.dataset.verdict : '');
            document.body.dataset.frame = String(i);
            showWhy();
          }
          var whySubject = document.getElementById('why-subject');
          function showWhy() {
            if (!frames.length) return;
            Array.prototype.forEach.call(frames[current].querySelectorAll('ul.why li'), function (li) {
              li.hidden = li.dataset.subject !== whySubject.value;
            });
          }
          whySubject.addEventListener('change', showWhy);
          scrub.addEventListener('input', function () { go(parseInt(scrub.value, 10)); });
          document.addEventListener('keydown', function (e) {
            var step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, PageDown: 10, PageUp: -10 }[e.key];
            if (step !== undefined) { go(current + step); e.preventDefault(); }
            else if (e.key === 'Home') { go(0); e.preventDefault(); }
            else if (e.key === 'End') { go(frames.length - 1); e.preventDefault(); }
          });
          Array.prototype.forEach.call(document.querySelectorAll('#moments li[data-frame] a'), function (a) {
            a.addEventListener('click', function (e) { e.preventDefault(); go(parseInt(a.parentNode.dataset.frame, 10)); });
          });
          Array.prototype.forEach.call(document.querySelectorAll('#filmstrip a[data-frame]'), function (a) {
            a.addEventListener('click', function (e) { e.preventDefault(); go(parseInt(a.dataset.frame, 10)); scrub.scrollIntoView(); });
          });
          var m = /^#frame-(\\d+)$/.exec(location.hash);
          go(m ? parseInt(m[1], 10) : 0);
        })();
        """
}
