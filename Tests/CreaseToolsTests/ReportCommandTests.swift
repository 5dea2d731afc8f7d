import CreaseCore
@testable import CreaseTools
import Foundation
import Testing

/// `crease report`: one self-contained page (the browser test is clients/python/tests/test_report.py).
@Suite struct ReportCommandTests {
    static let traces = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Traces")

    @Test("the page holds the figures, every frame inline, and the minimized events; it names nothing outside itself")
    func selfContained() throws {
        let out = NSTemporaryDirectory() + "crease-report-\(UUID().uuidString).html"
        defer { unlink(out) }
        let trace = Self.traces.appendingPathComponent("burst-coalesced.jsonl").path
        let r = try CommandRunner.run(["report", trace, "-o", out, "--minimize", "flash:keyboard"])
        #expect(r.status == 0 && r.stderr.contains("minimized events"), "\(r.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>") && html.contains(#"<tr id="conformance">"#) && html.contains(#"id="minimized-events""#))
        let frames = html.components(separatedBy: #"class="frame""#).count - 1
        #expect(frames > 3 && html.components(separatedBy: "<svg ").count - 1 >= frames + 1, "frames and the timeline, inline")
        // Nothing fetched: no src or href but data: URIs and links within the page.
        for attribute in ["src=\"", "href=\""] {
            for piece in html.components(separatedBy: attribute).dropFirst() {
                #expect(piece.hasPrefix("data:") || piece.hasPrefix("#"), "\(attribute)\(piece.prefix(40))")
            }
        }
        #expect(!html.contains("<?xml"))
        let minimized = try #require(html.components(separatedBy: #"<pre id="minimized-events">"#).last?.components(separatedBy: "</pre>").first)
        let lines = minimized.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#10;", with: "\n").split(separator: "\n").map(String.init)
        #expect(!lines.isEmpty && lines.count < 10)
        let replay = try CommandRunner.run(["layout", "--events", "-"], stdin: lines.joined(separator: "\n") + "\n")
        #expect(replay.status == 0, "the minimized lines are events crease layout takes: \(replay.stderr)")
        let bad = try CommandRunner.run(["report", trace, "-o", out, "--minimize", "wobble"])
        #expect(bad.status == 2 && bad.stderr.contains("--minimize"))
    }

    @Test("a minimized mismatch's paste block carries the observation: sent to a fresh daemon, the lines show the same mismatch")
    func minimizedMismatchPastesWithItsObservation() throws {
        let scratch = Scratch()
        let out = "\(scratch.path)/report.html"
        let trace = Self.traces.appendingPathComponent("rig-observations.jsonl").path
        let r = try CommandRunner.run(["report", trace, "-o", out, "--minimize", "mismatch"])
        #expect(r.status == 0 && r.stderr.contains("1 observations"), "\(r.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        let block = try #require(html.components(separatedBy: #"<pre id="minimized-events">"#).last?.components(separatedBy: "</pre>").first)
        let lines = block.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#10;", with: "\n")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
            .split(separator: "\n").map(String.init)
        let observe = lines.filter { $0.hasPrefix(#"{"cmd":"observe""#) }
        #expect(observe.count == 1 && !observe[0].contains("capturedAt"), "\(lines)")
        let daemon = try LiveDaemon(scratch, name: "paste", ["--no-trace"])
        let client = try SocketStreamer(path: daemon.socket)
        var verdict: JSONValue?
        for (i, line) in lines.enumerated() {
            // Each line with an id, so each is answered.
            let withID = String(line.dropLast()) + #","id":"p\#(i)"}"#
            let reply = try client.request(Array(withID.utf8), id: "p\(i)")
            #expect(reply["ok"] == .bool(true), "\(line): \(reply)")
            if line.hasPrefix(#"{"cmd":"observe""#) { verdict = reply["verdict"] }
        }
        #expect(verdict == .string("mismatch"))
        #expect(daemon.stop().status == 0)
    }

    @Test("every drawn frame carries the why of each of its controls, and every mismatch the why of the value expected")
    func whyOfControlsAndMismatches() throws {
        let scratch = Scratch()
        let out = "\(scratch.path)/report.html"
        let trace = Self.traces.appendingPathComponent("rig-observations.jsonl").path
        let r = try CommandRunner.run(["report", trace, "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        let frames = html.components(separatedBy: #"<div class="frame""#).dropFirst()
        #expect(!frames.isEmpty)
        for frame in frames {
            let why = try #require(frame.components(separatedBy: #"<ul class="why">"#).dropFirst().first?.components(separatedBy: "</ul>").first)
            let lines = why.components(separatedBy: "<li data-subject=").dropFirst()
            #expect(lines.first?.hasPrefix(#""field:barAxis""#) == true, "the bar axis first")
            #expect(lines.count > 1, "the controls of the frame")
            for line in lines {
                #expect(LayoutRule.allCases.contains { line.contains(" · \($0.name) · ") }, "\(line.prefix(120))")
            }
        }
        // The mismatches of the trace's observations, each with the why of what was expected.
        let differences = html.components(separatedBy: #"<ul class="differences">"#).dropFirst()
            .flatMap { $0.components(separatedBy: "</ul>")[0].components(separatedBy: "<li>").dropFirst() }
        #expect(!differences.isEmpty)
        for d in differences { #expect(d.contains(#"<div class="mismatch-why">expected, "#), "\(d.prefix(160))") }
        #expect(html.contains(#"<option value="field:barAxis">barAxis</option>"#) && html.contains(#"<section id="rules">"#))
    }

    @Test("frames a judge flagged make the filmstrip lane: each in order, its picture from --filmstrips, a link to the frame expected")
    func filmstripLane() throws {
        let scratch = Scratch()
        let daemon = try LiveDaemon(scratch, name: "judged")
        let lines = [#"{"event":"hinge","angle":180}"#, #"{"event":"orientation","value":"landscapeLeft"}"#,
                     #"{"cmd":"frame","kind":"flash","t":5000000,"refSeq":1,"frame":12,"region":{"x":8,"y":37,"w":653,"h":40}}"#,
                     #"{"cmd":"frame","kind":"lateRelayout","t":9000000,"refSeq":2,"frame":30,"relayoutMs":400}"#]
        #expect(try runProgram(Built.crease, ["send", "--socket", daemon.socket] + lines, in: scratch).status == 0)
        #expect(daemon.stop().status == 0)
        let trace = try daemon.traceFiles()[0]
        let strips = "\(scratch.path)/strips"
        try FileManager.default.createDirectory(atPath: strips, withIntermediateDirectories: true)
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0]).write(to: URL(fileURLWithPath: "\(strips)/12-flash.png"))
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: "\(strips)/30-lateRelayout.png"))
        let out = "\(scratch.path)/report.html"
        let r = try CommandRunner.run(["report", trace, "-o", out, "--filmstrips", strips])
        #expect(r.status == 0 && r.stderr.contains("2 flagged screen frames (1 pictured)") && r.stderr.contains("is not a PNG image"), "\(r.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        let row = try #require(html.components(separatedBy: #"<tr id="screen">"#).last?.components(separatedBy: "</tr>").first)
        #expect(row.contains("2 flagged: flash 1, lateRelayout 1") && row.contains("relayout p50 400.0 ms, p99 400.0 ms over 1 late relayout")
                && row.contains("own: p50"), "\(row)")
        let lane = try #require(html.components(separatedBy: #"<section id="filmstrip">"#).last?.components(separatedBy: "</section>").first)
        let figures = lane.components(separatedBy: "<figure ").dropFirst()
        #expect(figures.count == 2)
        #expect(figures.first?.contains(#"data-kind="flash""#) == true && figures.first?.contains("data:image/png;base64,") == true)
        #expect(figures.last?.contains(#"data-kind="lateRelayout""#) == true && figures.last?.contains("<img") == false)
        #expect(figures.allSatisfy { $0.contains(##"href="#frame-"##) })
        let plain = try CommandRunner.run(["report", Self.traces.appendingPathComponent("rig-observations.jsonl").path, "-o", out])
        let plainHTML = try String(contentsOfFile: out, encoding: .utf8)
        #expect(plain.status == 0 && !plainHTML.contains(#"<section id="filmstrip">"#) && plainHTML.contains("no frame flagged"))
        #expect(try CommandRunner.run(["report", trace, "-o", out, "--filmstrips", "\(strips)/12-flash.png"]).status == 2)
    }

    @Test("a report draws at most --max-frames frames, around what matters; --focus mismatches draws the mismatch and its neighbours only")
    func focusBoundsTheFrames() throws {
        let scratch = Scratch()
        let out = "\(scratch.path)/report.html"
        func frames(_ html: String) -> Int { html.components(separatedBy: #"class="frame""#).count - 1 }
        let trace = Self.traces.appendingPathComponent("rig-observations.jsonl").path
        let whole = try CommandRunner.run(["report", trace, "-o", out])
        #expect(whole.status == 0, "\(whole.stderr)")
        let all = frames(try String(contentsOfFile: out, encoding: .utf8))
        #expect(all > 8)
        let capped = try CommandRunner.run(["report", trace, "-o", out, "--max-frames", "5"])
        #expect(capped.status == 0 && capped.stderr.contains("5 of \(all) frames"), "\(capped.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        #expect(frames(html) == 5 && html.contains("5 of \(all) drawn"))
        // The mismatching look is among the five, and it is what the player links to first.
        #expect(html.contains(#"data-verdict="mismatch""#))
        let focused = try CommandRunner.run(["report", trace, "-o", out, "--focus", "mismatches"])
        #expect(focused.status == 0, "\(focused.stderr)")
        let narrow = try String(contentsOfFile: out, encoding: .utf8)
        // The start, and each mismatching or stale look with its neighbours: fewer than the whole run.
        let looks = narrow.components(separatedBy: #"class="observation mismatch""#).count - 1 + narrow.components(separatedBy: #"class="observation stale""#).count - 1
        #expect(looks >= 1 && frames(narrow) <= 1 + looks * (2 * ReportFocus.window + 1) && frames(narrow) < all, "\(frames(narrow)) of \(all) frames")
        #expect(narrow.contains("around the mismatches (--focus)") && narrow.contains(#"data-verdict="mismatch""#))
        let bad = try CommandRunner.run(["report", trace, "-o", out, "--focus", "wobble"])
        #expect(bad.status == 2 && bad.stderr.contains("--focus"))
    }

    /// The frame of a seq is found by bisection; it must be the scan's answer: the last layout
    /// frame (not an observation's) at or before the seq, else the first frame.
    @Test("a seq's frame by bisection is the last layout frame at or before it, at every seq of a trace with observations")
    func layoutFrameOfASeq() throws {
        let file = try TraceIO.load(Self.traces.appendingPathComponent("rig-observations.jsonl").path)
        let story = try TraceRun.replay(file, title: "t", keepFrames: true).story
        #expect(story.frames.contains { $0.observed != nil } && story.frames.count > 5)
        let index = ReportFocus.LayoutFrames(drawn: story)
        for seq in 0...(story.frames.last!.seq + 2) {
            var scan: Int?
            for (i, f) in story.frames.enumerated() where f.seq <= seq && f.observed == nil { scan = i }
            #expect(index.frame(of: seq) == (scan ?? 0), "seq \(seq)")
        }
    }

    @Test("the moments lists name at most 500 each, mismatches first, and say how many more there are")
    func momentsAreBounded() throws {
        let scratch = Scratch()
        let daemon = try LiveDaemon(scratch, name: "looks")
        // The closed device shows a vertical bar: 600 looks that saw a horizontal one.
        let looks = (0..<600).map { _ in #"{"cmd":"observe","observed":{"barAxis":"horizontal"}}"# }
        #expect(try runProgram(Built.crease, ["send", "--socket", daemon.socket] + looks, in: scratch).status == 0)
        #expect(daemon.stop().status == 0)
        let out = "\(scratch.path)/report.html"
        let r = try CommandRunner.run(["report", try daemon.traceFiles()[0], "-o", out, "--max-frames", "1000"])
        #expect(r.status == 0 && r.stderr.contains("600 observations"), "\(r.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        let list = try #require(html.components(separatedBy: #"<ul id="device-moments">"#).last?.components(separatedBy: "</ul>").first)
        #expect(list.components(separatedBy: #"data-verdict="mismatch""#).count - 1 == ReportHTML.momentsListed)
        #expect(list.contains("… and 100 more looks, not listed"))
        #expect(html.contains("600 mismatch"), "the figures count them all")
    }

    @Test("--against puts a replay on the rig beside its original: its run's timeline on the original's scale and the looks lined up, differences first")
    func againstAReplay() throws {
        let scratch = Scratch()
        // The original: a fold, then a look that still saw the closed layout's vertical bar (stale), then one of the turned layout's axis.
        let original = try LiveDaemon(scratch, name: "original")
        let looks = [#"{"event":"hinge","angle":180}"#, #"{"cmd":"observe","observed":{"barAxis":"vertical"}}"#,
                     #"{"event":"orientation","value":"landscapeLeft"}"#, #"{"cmd":"observe","observed":{"barAxis":"horizontal"}}"#]
        #expect(try runProgram(Built.crease, ["send", "--socket", original.socket] + looks, in: scratch).status == 0)
        #expect(original.stop().status == 0)
        // The replay: a warm-up event outside the run, then the run between its marks, where the first look matches.
        let replay = try LiveDaemon(scratch, name: "replay")
        let run = [#"{"event":"keyboard","visible":true}"#, #"{"event":"keyboard","visible":false}"#,
                   #"{"cmd":"mark","label":"replay of original.jsonl, run 1: begin"}"#] + looks.enumerated().map { i, line in
                       i == 1 ? #"{"cmd":"observe","observed":{"barAxis":"horizontal"}}"# : line
                   } + [#"{"cmd":"mark","label":"replay of original.jsonl, run 1: end"}"#]
        #expect(try runProgram(Built.crease, ["send", "--socket", replay.socket] + run, in: scratch).status == 0)
        #expect(replay.stop().status == 0)
        let out = "\(scratch.path)/report.html"
        let r = try CommandRunner.run(["report", try original.traceFiles()[0], "--against", try replay.traceFiles()[0], "-o", out])
        #expect(r.status == 0 && r.stderr.contains("2 looks paired, 1 with another verdict"), "\(r.stderr)")
        let html = try String(contentsOfFile: out, encoding: .utf8)
        let section = try #require(html.components(separatedBy: #"<section id="against""#).last?.components(separatedBy: "</section>").first)
        #expect(section.contains(#"data-looks="2""#) && section.contains(#"data-verdicts-differ="1""#))
        let summary = try #require(section.components(separatedBy: #"<p id="against-summary">"#).last?.components(separatedBy: "</p>").first)
        #expect(summary.contains("every move the same") && summary.contains("first verdict difference: look 1: the original&apos;s seq 1 stale, the replay&apos;s seq 3 match"), "\(summary)")
        // The run alone: the replay's warm-up events are not drawn; both timelines share one scale.
        let spans = html.components(separatedBy: #"data-span-ns=""#).dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
        #expect(spans.count == 2 && spans[0] == spans[1], "\(spans)")
        let drawn = html.components(separatedBy: #"data-events=""#).dropFirst().compactMap { $0.split(separator: "\"").first.map(String.init) }
        #expect(drawn == ["2", "2"], "\(drawn)")
        let rows = section.components(separatedBy: "<tr class=").dropFirst()
        #expect(rows.count == 2 && rows.first?.hasPrefix(#""differs""#) == true)
        // The replay is an input: -o over it is refused; --run needs --against.
        let replayed = try replay.traceFiles()[0]
        #expect(try CommandRunner.run(["report", try original.traceFiles()[0], "--against", replayed, "-o", replayed]).status == 2)
        #expect(try CommandRunner.run(["report", try original.traceFiles()[0], "--run", "1", "-o", out]).status == 2)
        let missing = try CommandRunner.run(["report", try original.traceFiles()[0], "--against", replayed, "--run", "7", "-o", out])
        #expect(missing.status == 2 && missing.stderr.contains("no replay run 7"), "\(missing.stderr)")

        // The pair that differs is pictured: the model's frame at the replay's look, and each run's screenshot where one was kept.
        #expect(section.components(separatedBy: #"<figure class="against-look" data-look="1">"#).count == 2)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00]
        for (dir, file) in [("shots-original", "seq-1.png"), ("shots-replay", "seq-3.png")] {
            try FileManager.default.createDirectory(atPath: "\(scratch.path)/\(dir)", withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: "\(scratch.path)/\(dir)/\(file)", contents: Data(png))
        }
        let shown = try CommandRunner.run(["report", try original.traceFiles()[0], "--screenshots", "\(scratch.path)/shots-original",
                                           "--against", replayed, "--against-screenshots", "\(scratch.path)/shots-replay", "-o", out])
        #expect(shown.status == 0 && shown.stderr.contains("1 pictured"), "\(shown.stderr)")
        let pictured = try #require(try String(contentsOfFile: out, encoding: .utf8).components(separatedBy: #"<figure class="against-look" data-look="1">"#).last?
            .components(separatedBy: "look 1: expected at the replay").first)
        let encoded = Data(png).base64EncodedString()
        #expect(pictured.contains("<svg") && pictured.contains(#"<figure class="screenshot original">"#)
                && pictured.contains(#"<figure class="screenshot replay">"#) && pictured.components(separatedBy: encoded).count == 3, "\(pictured.prefix(400))")
        #expect(try CommandRunner.run(["report", try original.traceFiles()[0], "--against-screenshots", "\(scratch.path)/shots-replay", "-o", out]).status == 2)
        #expect(try CommandRunner.run(["report", try original.traceFiles()[0], "--against", replayed, "--against-screenshots", "\(scratch.path)/none", "-o", out]).status == 2)
    }
}
