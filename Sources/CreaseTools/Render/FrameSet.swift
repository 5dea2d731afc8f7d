import CreaseCore

/// `--frames DIR`: one SVG per layout of a run (the first, then one per change of
/// digest) and an `index.html` that steps through them with the arrow keys. The page
/// needs nothing but the files beside it, so it opens from the file system; it is
/// well-formed XML as well as HTML, so the tests can parse it.
public enum FrameSet {
    public struct File: Sendable, Equatable {
        public var name: String
        public var contents: String
    }

    /// The files to write, index.html last. An observation's frame follows the layout it
    /// was held against: `frame-<seq>_observed-<n>.svg` sorts after `frame-<seq>.svg`.
    public static func files(_ story: TraceStory) -> [File] {
        let digits = max(6, String(story.frames.last?.seq ?? 0).count)
        var files: [File] = []
        var entries: [(name: String, frame: TraceStory.Frame)] = []
        var observedAtSeq = 0
        for frame in story.frames {
            let seq = String(frame.seq)
            var name = "frame-" + String(repeating: "0", count: digits - seq.count) + seq
            if frame.observed != nil {
                observedAtSeq = entries.last?.frame.seq == frame.seq && entries.last?.frame.observed != nil ? observedAtSeq + 1 : 1
                name += observedSuffix(observedAtSeq)
            }
            name += ".svg"
            // A glitch is shown on the layout's own frame, not again on the observations of it.
            let caption = frame.observed.map { observedCaption($0, digest: frame.digest, story) }
                ?? FrameCaption(seq: frame.seq, digest: frame.digest, time: Int64(frame.t &- story.start.t), event: frame.eventText,
                                glitches: glitches(at: frame.seq, story.glitches))
            files.append(File(name: name, contents: FrameSVG.render(frame.layout, app: frame.app, caption: caption, observed: frame.observed)))
            entries.append((name, frame))
        }
        files.append(File(name: "index.html", contents: index(story, entries)))
        return files
    }

    /// `_observed-001`: the name's mark of the layout's first observation.
    static func observedSuffix(_ n: Int) -> String {
        let digits = String(n)
        return "_observed-" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    /// An observation's frame: the verdict in the heading; the layout's glitches stay on its own frame.
    static func observedCaption(_ o: TraceStory.Observed, digest: UInt64, _ story: TraceStory) -> FrameCaption {
        FrameCaption(seq: o.seq, digest: digest, time: Int64(o.t &- story.start.t), event: "observe: \(o.result.verdict.rawValue)")
    }

    static func index(_ story: TraceStory, _ entries: [(name: String, frame: TraceStory.Frame)]) -> String {
        var w = XMLWriter(declaration: false)
        w.raw("<!DOCTYPE html>")
        w.begin("html", [("xmlns", "http://www.w3.org/1999/xhtml"), ("lang", "en")])
        w.begin("head")
        w.leaf("meta", [("charset", "utf-8")])
        w.element("title", text: "\(story.title) · \(entries.count) layouts")
        w.begin("style")
        w.raw("""
            body { font-family: \(Palette.sans); margin: 16px; color: \(Palette.ink); background: \(Palette.page); }
            header { display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
            h1 { font-size: 18px; margin: 0; }
            #where { font-family: \(Palette.mono); font-size: 13px; }
            main { display: flex; gap: 16px; align-items: flex-start; margin-top: 12px; }
            #frame { max-width: calc(100vw - 340px); height: auto; border: 1px solid #cbd5e1; background: #ffffff; }
            ol { font-family: \(Palette.mono); font-size: 12px; width: 300px; max-height: calc(100vh - 90px); overflow: auto; margin: 0; padding-left: 40px; }
            li { cursor: pointer; padding: 1px 4px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
            li.current { background: #ddd6fe; }
            li.glitch { color: \(Palette.glitch); font-weight: bold; }
            a { color: inherit; text-decoration: none; }
            """)
        w.end()
        w.end()
        w.begin("body")
        w.begin("header")
        w.element("h1", text: story.title)
        w.element("span", [("id", "where")], text: entries.isEmpty ? "no layouts"
                  : caption(entries[0].frame, story: story, index: 0, count: entries.count, glitches: glitches(at: entries[0].frame.seq, story.glitches)))
        w.element("button", [("id", "previous"), ("type", "button"), ("title", "previous layout (←)")], text: "←")
        w.element("button", [("id", "next"), ("type", "button"), ("title", "next layout (→)")], text: "→")
        w.element("span", [("class", "hint")], text: "← → step, Home End jump, or pick one from the list")
        w.end()
        w.begin("main")
        w.leaf("img", [("id", "frame"), ("src", entries.first?.name ?? ""), ("alt", "the layout")])
        w.begin("ol", [("id", "frames")])
        for (i, e) in entries.enumerated() {
            let shown = e.frame.observed == nil ? glitches(at: e.frame.seq, story.glitches) : []
            var attributes: XMLWriter.Attributes = [("data-src", e.name), ("data-seq", String(e.frame.seq)), ("data-digest", Digest.hex(e.frame.digest)),
                                                    ("data-caption", caption(e.frame, story: story, index: i, count: entries.count, glitches: shown))]
            if !shown.isEmpty { attributes += [("class", "glitch"), ("data-glitches", shown.map(\.kind.rawValue).joined(separator: " "))] }
            if let o = e.frame.observed { attributes += [("data-verdict", o.result.verdict.rawValue), ("style", "color: \(Palette.verdict(o.result.verdict))")] }
            w.begin("li", attributes)
            w.element("a", [("href", e.name)], text: "\(shown.isEmpty ? "" : "⚠ ")seq \(e.frame.seq) · \(Timescale.seconds(Int64(e.frame.t &- story.start.t))) · \(e.frame.eventText ?? "start")")
            w.end()
        }
        w.end()
        w.end()
        // The script has neither `<` nor `&`, and sits in a commented CDATA section besides,
        // so the page is well-formed XML and plain HTML at once.
        w.begin("script")
        w.raw(script)
        w.end()
        w.end()
        w.end()
        return w.finish()
    }

    static func caption(_ frame: TraceStory.Frame, story: TraceStory, index: Int, count: Int, glitches: [Glitch]) -> String {
        let base = "\(index + 1)/\(count) · seq \(frame.seq) · t \(Timescale.seconds(Int64(frame.t &- story.start.t))) · \(frame.eventText ?? "start of the run")"
        return glitches.isEmpty ? base : base + " · ⚠ " + glitches.map { "\($0.kind.rawValue) \($0.subject): \($0.message)" }.joined(separator: "; ")
    }

    /// The glitches whose seq range holds `seq`: a frame shows them.
    static func glitches(at seq: Int, _ all: [Glitch]) -> [Glitch] {
        all.filter { $0.firstSeq <= seq && seq <= $0.lastSeq }
    }

    static let script = """
        //<![CDATA[
        (function () {
          var items = Array.prototype.slice.call(document.querySelectorAll('#frames li'));
          var img = document.getElementById('frame');
          var where = document.getElementById('where');
          var current = 0;
          function show(n) {
            if (items.length === 0) { return; }
            current = Math.max(0, Math.min(items.length - 1, n));
            var li = items[current];
            img.src = li.getAttribute('data-src');
            where.textContent = li.getAttribute('data-caption');
            items.forEach(function (x, k) { x.className = k === current ? 'current' : ''; });
            li.scrollIntoView({ block: 'nearest' });
          }
          document.addEventListener('keydown', function (e) {
            var keys = { ArrowRight: 1, ArrowDown: 1, PageDown: 10, ArrowLeft: -1, ArrowUp: -1, PageUp: -10 };
            if (e.key in keys) { show(current + keys[e.key]); e.preventDefault(); }
            else if (e.key === 'Home') { show(0); e.preventDefault(); }
            else if (e.key === 'End') { show(items.length - 1); e.preventDefault(); }
          });
          items.forEach(function (li, k) {
            li.addEventListener('click', function (e) { e.preventDefault(); show(k); });
          });
          document.getElementById('previous').addEventListener('click', function () { show(current - 1); });
          document.getElementById('next').addEventListener('click', function () { show(current + 1); });
          show(0);
        })();
        //]]>
        """
}
