import CreaseCore
import Foundation
import Testing
@testable import CreaseTools

/// `crease render --trace`: the recorded corpus in Traces/ drawn as timelines, frames and
/// single layouts, each checked against what the trace file itself records.
@Suite struct RenderTraceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let traces: [String] = {
        let dir = root.appendingPathComponent("Traces").path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted().map { "\(dir)/\($0)" }
    }()

    /// What the file says, read record by record without the renderer.
    struct Recorded {
        var events: [TraceEvent] = []
        var marks: [String] = []
        var changes = 0
    }

    static func recorded(_ path: String) throws -> (TraceFile, Recorded) {
        let file = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        var r = Recorded()
        var digest = file.header.initialDigest
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            switch traced.record {
            case .event(let e):
                r.events.append(e)
                if e.digest != digest { r.changes += 1 }
                digest = e.digest
            case .mark(_, _, let label): r.marks.append(label)
            default: break
            }
        }
        return (file, r)
    }

    @Test func theCorpusIsThere() {
        #expect(Self.traces.count >= 8, "Traces/ holds \(Self.traces.count) traces")
    }

    @Test(arguments: traces)
    func everyTraceDrawsAsATimeline(path: String) throws {
        let (file, recorded) = try Self.recorded(path)
        let run = try TraceRun.replay(file, title: "t", keepFrames: false)
        let root = try XMLTree.parse(TimelineSVG.render(run.story))
        #expect(root["data-events"] == String(recorded.events.count))
        let layout = try #require(root.all("g", class: "lane").first { $0["data-lane"] == "layout" })
        // The changes the replay saw are the ones the daemon recorded.
        #expect(layout.all("path", class: "changes").first?["data-count"] == String(recorded.changes))
        #expect(root.all("g", class: "mark").compactMap { $0["data-label"] } == recorded.marks)
        let stems = try #require(root.first(id: "latency")?.all("g", class: "stems").first, "crease gen stamps ts from the daemon's clock")
        #expect(Int(stems["data-measured"] ?? "") ?? 0 > recorded.events.count / 2)
        #expect(root.first(id: "latency")?.all("g", class: "budget").first?["data-ns"] == "1000000")
    }

    /// The glitches lane holds what the checker finds, and the frames that show a glitch say so.
    @Test func theTimelineAndTheFramesMarkTheGlitches() throws {
        let path = try #require(Self.traces.first { $0.hasSuffix("burst-coalesced.jsonl") })
        let (file, _) = try Self.recorded(path)
        let found = try TraceGlitches.check(file, options: GlitchOptions()).glitches
        let run = try TraceRun.replay(file, title: "t", keepFrames: true)
        #expect(run.story.glitches == found)
        let root = try XMLTree.parse(TimelineSVG.render(run.story))
        let lane = try #require(root.all("g", class: "lane").first { $0["data-lane"] == "glitches" })
        #expect(lane["data-count"] == String(found.count))
        let drawn = lane.all("g", class: "glitch")
        #expect(drawn.reduce(0) { $0 + (Int($1["data-n"] ?? "") ?? 0) } == found.count, "every glitch drawn, alone or in its column's group")
        #expect(drawn.contains { $0["data-kind"] == "flash" && $0["data-subject"] == "keyboard" } || drawn.contains { $0["data-kind"] == "flash" && $0["data-seq"] == "314-315" })

        let files = FrameSet.files(run.story)
        let index = try XMLTree.parse(try #require(files.last).contents)
        let marked = index.all("li", class: "glitch")
        #expect(marked.contains { $0["data-seq"] == "315" && ($0["data-glitches"] ?? "").contains("flash") }, "the frame where the keyboard went")
        #expect(marked.allSatisfy { li in found.contains { g in g.firstSeq <= Int(li["data-seq"]!)! && Int(li["data-seq"]!)! <= g.lastSeq } })
        let frame = try XMLTree.parse(try #require(files.first { $0.name.hasSuffix("000315.svg") }).contents)
        #expect(frame.all("text", class: "glitch").contains { $0["data-kind"] == "flash" })
    }

    @Test func framesOfARunWhoseAppIsReplaced() throws {
        let path = try #require(Self.traces.first { $0.hasSuffix("app-replaced-mid-run.jsonl") })
        let (file, recorded) = try Self.recorded(path)
        let run = try TraceRun.replay(file, title: "t", keepFrames: true)
        let files = FrameSet.files(run.story)
        #expect(files.count == recorded.changes + 2)
        let appEvent = try #require(recorded.events.first { $0.envelope.event.name == "app" })
        // Frames before the app event name the first app; the one it caused names the new one.
        for f in files.dropLast() {
            let svg = try XMLTree.parse(f.contents)
            let seq = try #require(Int(svg["data-seq"] ?? ""))
            let heading = try #require(svg.first(id: "heading")).allText
            #expect(heading.hasPrefix(seq < appEvent.seq ? "Trailhead" : "Field Notes"), "\(f.name)")
            let digest = seq == file.header.initialSeq ? file.header.initialDigest : try #require(recorded.events.first { $0.seq == seq }).digest
            #expect(svg["data-digest"] == Digest.hex(digest), "\(f.name)")
        }
        #expect(try XMLTree.parse(try #require(files.last).contents).all("li").count == files.count - 1)
    }

    @Test func theCommandDrawsEachKind() throws {
        let path = try #require(Self.traces.first { $0.hasSuffix("trailing-sheet-partly-folded.jsonl") })
        let (_, recorded) = try Self.recorded(path)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crease-render-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func read(_ name: String) throws -> XMLTree {
            try XMLTree.parse(String(decoding: try Data(contentsOf: dir.appendingPathComponent(name)), as: UTF8.self))
        }

        let target = recorded.events[recorded.events.count / 2]
        #expect(CLI.main(["render", "--trace", path, "--at", String(target.seq), "-o", dir.appendingPathComponent("at.svg").path]) == 0)
        let at = try read("at.svg")
        #expect(at["data-seq"] == String(target.seq) && at["data-digest"] == Digest.hex(target.digest))

        #expect(CLI.main(["render", "--trace", path, "--timeline", "-o", dir.appendingPathComponent("timeline.svg").path]) == 0)
        #expect(try read("timeline.svg")["data-events"] == String(recorded.events.count))

        let frames = dir.appendingPathComponent("frames")
        #expect(CLI.main(["render", "--trace", path, "--frames", frames.path]) == 0)
        let index = try XMLTree.parse(String(decoding: try Data(contentsOf: frames.appendingPathComponent("index.html")), as: UTF8.self))
        let listed = index.all("li").compactMap { $0["data-src"] }
        #expect(listed.count == recorded.changes + 1)
        for name in listed { #expect(FileManager.default.fileExists(atPath: frames.appendingPathComponent(name).path), "\(name)") }
    }

    /// `--at SEQ` draws the observations held against that seq beside the layout, each
    /// exactly as `--frames` draws it.
    @Test func atASeqDrawsItsObservationsAsTheFramesDo() throws {
        let path = try #require(Self.traces.first { $0.hasSuffix("rig-observations.jsonl") })
        let file = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        var held: [Int: [Verdict]] = [:]
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            if case .observation(let o) = traced.record { held[o.result.seq, default: []].append(o.result.verdict) }
        }
        // The seq the rig looked at twice: once matching, once with a control out of place.
        let (seq, verdicts) = try #require(held.first { $0.value.count > 1 && $0.value.contains(.mismatch) })
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crease-render-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(CLI.main(["render", "--trace", path, "--at", String(seq), "-o", dir.appendingPathComponent("at.svg").path]) == 0)
        let frames = dir.appendingPathComponent("frames")
        #expect(CLI.main(["render", "--trace", path, "--frames", frames.path]) == 0)
        let padded = String(repeating: "0", count: max(0, 6 - String(seq).count)) + String(seq)
        for n in 1...verdicts.count {
            let suffix = FrameSet.observedSuffix(n) + ".svg"
            let drawn = try Data(contentsOf: dir.appendingPathComponent("at" + suffix))
            #expect(drawn == (try Data(contentsOf: frames.appendingPathComponent("frame-" + padded + suffix))), "observation \(n)")
            let tree = try XMLTree.parse(String(decoding: drawn, as: UTF8.self))
            #expect(!tree.all("g", class: "observed").isEmpty)
            #expect(tree.all("g", class: "difference").isEmpty == (verdicts[n - 1] == .match), "observation \(n): \(verdicts[n - 1])")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("at" + FrameSet.observedSuffix(verdicts.count + 1) + ".svg").path))
        // The layout itself is drawn as before, with no observation over it.
        #expect(try XMLTree.parse(String(decoding: try Data(contentsOf: dir.appendingPathComponent("at.svg")), as: UTF8.self))
            .all("g", class: "observed").isEmpty)
    }

    @Test func misuseExitsTwo() throws {
        let path = try #require(Self.traces.first)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("crease-render-\(UUID().uuidString).svg").path
        #expect(CLI.main(["render", "--trace", path, "-o", out]) == ExitStatus.usage)                          // no mode
        #expect(CLI.main(["render", "--trace", path, "--timeline", "--at", "3", "-o", out]) == ExitStatus.usage)
        #expect(CLI.main(["render", "--trace", path, "--timeline", "--app", "builtin:split", "-o", out]) == ExitStatus.usage)
        #expect(CLI.main(["render", "--trace", path, "--timeline"]) == ExitStatus.usage)                       // no -o
        #expect(CLI.main(["render", "--trace", path, "--frames", "/tmp", "-o", out]) == ExitStatus.usage)
        #expect(CLI.main(["render", "--trace", path, "--at", "99999999", "-o", out]) == ExitStatus.usage)
        #expect(CLI.main(["render", "--timeline", "-o", out]) == ExitStatus.usage)                            // no --trace
        #expect(CLI.main(["render", "--trace", "/nonexistent.jsonl", "--timeline", "-o", out]) == ExitStatus.usage)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
