import CreaseCore
import Foundation
import Testing
@testable import CreaseTools

/// The timeline and the stepped frames of a run, parsed as XML and checked against the
/// engine that produced the run.
@Suite struct RenderTimelineTests {
    /// The demo script, one event every 5 ms, a mark at each caption, and a latency per
    /// event that passes the 1 ms budget on every 10th event.
    static func demoStory(keepFrames: Bool = false, latency: Bool = true) throws -> TraceStory {
        let app = try #require(BuiltinApps.app(named: "tabs"))
        var e = Engine(profile: .builtin, app: app)
        var story = TraceStory(title: "demo", engine: e, t: 1_000, keepFrames: keepFrames,
                               latencyMeaning: "test latency", budgetNs: latency ? 1_000_000 : nil)
        var t: UInt64 = 1_000
        for step in DemoScript.steps(for: app) {
            if let c = step.caption { story.mark(seq: e.seq, t: t, label: c) }
            for event in step.events {
                t += 5_000_000
                try e.apply(event)
                story.record(e, t: t, event: event, latencyNs: latency ? (e.seq % 10 == 0 ? 1_500_000 : 200_000) : nil)
            }
        }
        return story
    }

    static func runs<V: Equatable>(_ values: [V]) -> [V] {
        values.reduce(into: []) { out, v in if out.last != v { out.append(v) } }
    }

    /// A campaign resets thousands of times: each reset's load mark drawn apart made 25 MB of
    /// a page. Marks that share a pixel column are one mark that counts them.
    @Test func marksInOnePixelColumnAreDrawnAsOneThatCountsThem() throws {
        let app = try #require(BuiltinApps.app(named: "tabs"))
        var e = Engine(profile: .builtin, app: app)
        var story = TraceStory(title: "resets", engine: e, t: 0, keepFrames: false)
        for k in 1...10 {
            let t = UInt64(k) * 100_000_000
            let event = Event.hinge(angle: Double(k * 15))
            try e.apply(event)
            story.record(e, t: t, event: event)
            story.mark(seq: e.seq, t: t, label: "step \(k)")
            if k == 5 { for r in 0..<1000 { story.mark(seq: e.seq, t: t + UInt64(r), label: "load: reset \(r)") } }
        }
        let before = 10
        let marks = try XMLTree.parse(TimelineSVG.render(story)).all("g", class: "mark")
        let grouped = try #require(marks.first { $0["data-count"] != nil })
        #expect(Int(grouped["data-count"] ?? "") ?? 0 >= 1000)
        #expect(marks.count == before && marks.reduce(0) { $0 + (Int($1["data-count"] ?? "1") ?? 1) } == story.marks.count)
    }

    @Test func theTimelineShowsTheRun() throws {
        let story = try Self.demoStory()
        let root = try XMLTree.parse(TimelineSVG.render(story))
        let all = [story.start] + story.points
        #expect(root["data-events"] == String(story.points.count))

        // Pose bands follow the pose, stretch by stretch: one path per pose, a band per stretch.
        let bands = root.all("path", class: "pose-band")
        let stretches = Self.runs(all.map(\.pose))
        #expect(bands.compactMap { $0["data-pose"] } == Pose.allCases.map(\.rawValue))
        for band in bands {
            let mine = stretches.filter { $0.rawValue == band["data-pose"] }.count
            #expect(band["data-stretches"] == String(mine))
            #expect(band["d"]?.filter { $0 == "M" }.count == mine)
        }
        #expect(root.all("g", class: "threshold").map { $0["data-angle"] } == ["20", "160"])
        #expect(root.all("polyline", class: "angle").count == 1)

        func lane(_ name: String) throws -> [String] {
            let lane = try #require(root.all("g", class: "lane").first { $0["data-lane"] == name }, "lane \(name)")
            return lane.all("g", class: "span").compactMap { $0["data-value"] }
        }
        #expect(try lane("orientation") == Self.runs(all.map(\.orientation.rawValue)))
        #expect(try lane("keyboard") == Array(repeating: "visible", count: 2))
        #expect(try lane("pip") == ["active"])
        #expect(try lane("liveActivities") == ["1", "2", "3"])

        // One tick per layout change (5 ms apart, so none share a pixel here).
        let layoutLane = try #require(root.all("g", class: "lane").first { $0["data-lane"] == "layout" })
        let changes = try #require(layoutLane.all("path", class: "changes").first)
        let count = story.points.filter(\.layoutChanged).count
        #expect(count > 10 && changes["data-count"] == String(count) && changes["data-ticks"] == String(count))
        #expect(changes["d"]?.filter { $0 == "M" }.count == count)

        let marks = root.all("g", class: "mark")
        #expect(marks.compactMap { $0["data-label"] } == story.marks.map(\.label))

        // Latency: every event measured, the over-budget ones counted, the budget drawn.
        let latency = try #require(root.first(id: "latency"))
        let stems = try #require(latency.all("g", class: "stems").first)
        #expect(stems["data-measured"] == String(story.points.count))
        let over = story.points.filter { $0.seq % 10 == 0 }.count
        #expect(stems["data-over-budget"] == String(over))
        #expect(stems.all("path", class: "over").first?["data-columns"] == String(over))
        #expect(stems.all("path", class: "within").first?["data-columns"] == String(story.points.count - over))
        #expect(latency.all("g", class: "budget").first?["data-ns"] == "1000000")
        #expect(latency.all("text", class: "summary").first?.text == "\(story.points.count) measured · max 1500 µs · \(over) over budget")
        #expect(root.first(id: "axis")?.all("text", class: "tick").isEmpty == false)
        #expect(root.first(id: "legend") != nil)
    }

    @Test func aRunWithoutLatencySaysSo() throws {
        let root = try XMLTree.parse(TimelineSVG.render(try Self.demoStory(latency: false)))
        let latency = try #require(root.first(id: "latency"))
        #expect(latency.all("text", class: "none").first?.text == "this run records no per-event latency")
        #expect(latency.all("g", class: "stems").isEmpty)
    }

    @Test func aLongFastRunStaysSmall() throws {
        // 100,000 hinge events at 1 kHz, flapping between shut and flat: the drawing keeps
        // each pixel column's extremes, not every sample.
        let app = try #require(BuiltinApps.app(named: "tabs"))
        var e = Engine(profile: .builtin, app: app)
        var story = TraceStory(title: "flap", engine: e, t: 0, keepFrames: false, budgetNs: 1_000_000)
        for i in 1...100_000 {
            let event = Event.hinge(angle: i % 200 < 100 ? 0 : 180)
            try e.apply(event)
            story.record(e, t: UInt64(i) * 1_000_000, event: event, latencyNs: UInt64(i % 1000) * 1000)
        }
        let svg = TimelineSVG.render(story)
        #expect(svg.utf8.count < 150_000, "\(svg.utf8.count) bytes")
        let root = try XMLTree.parse(svg)
        let points = try #require(root.all("polyline", class: "angle").first?["points"]).split(separator: " ")
        #expect(points.count <= 4 * 1100)
        let ys = Set(points.compactMap { $0.split(separator: ",").last.map(String.init) })
        #expect(ys.contains(num(78)) && ys.contains(num(78 + 220)))   // both 180° and 0° are still drawn
        let stems = try #require(root.first(id: "latency")?.all("g", class: "stems").first)
        #expect(stems["data-measured"] == "100000")
        let columns = stems.all("path").compactMap { $0["data-columns"].flatMap { Int($0) } }.reduce(0, +)
        #expect(columns > 1000 && columns <= 1100)
    }

    @Test("the daemon's own latency is drawn beside the transport latency, counted against the same budget")
    func relayoutLatencyIsDrawnToo() throws {
        let app = try #require(BuiltinApps.app(named: "tabs"))
        var e = Engine(profile: .builtin, app: app)
        var story = TraceStory(title: "both", engine: e, t: 0, keepFrames: false, latencyMeaning: TraceRun.latencyMeaning, budgetNs: 1_000_000)
        for i in 1...50 {
            try e.apply(.hinge(angle: Double(i * 3)))
            story.record(e, t: UInt64(i) * 1_000_000, event: .hinge(angle: Double(i * 3)), latencyNs: 100_000,
                         relayoutNs: i % 25 == 0 ? 2_000_000 : 40_000)
        }
        let latency = try #require(try XMLTree.parse(TimelineSVG.render(story)).first(id: "latency"))
        let ticks = try #require(latency.all("path", class: "relayout").first)
        #expect(ticks["data-measured"] == "50" && ticks["data-over-budget"] == "2")
        #expect(latency.all("g", class: "stems").first?["data-measured"] == "50")
        #expect(latency.all("text", class: "summary").first?.text.contains("relayout 50") == true)
    }

    @Test func identicalRunsDrawIdenticalTimelines() throws {
        #expect(TimelineSVG.render(try Self.demoStory()) == TimelineSVG.render(try Self.demoStory()))
    }

    @Test func framesStepThroughEveryLayoutChange() throws {
        let story = try Self.demoStory(keepFrames: true)
        let files = FrameSet.files(story)
        let changes = story.points.filter(\.layoutChanged)
        // The first layout, then one per change; index.html last.
        #expect(files.count == changes.count + 2)
        #expect(files.last?.name == "index.html")
        #expect(files.first?.name == "frame-000000.svg")
        let names = files.dropLast().map(\.name)
        #expect(names == names.sorted(), "file names sort in seq order")

        for (file, seq) in zip(files.dropLast(), [story.start.seq] + changes.map(\.seq)) {
            let root = try XMLTree.parse(file.contents)
            #expect(root["data-seq"] == String(seq), "\(file.name)")
        }
        let frame = try XMLTree.parse(files[1].contents)
        #expect(frame.first(id: "heading")?.allText.contains("after \(try #require(story.frames[1].eventText))") == true)

        let index = try XMLTree.parse(try #require(files.last).contents)
        #expect(index.name == "html")
        let items = index.all("li")
        #expect(items.compactMap { $0["data-src"] } == Array(names))
        #expect(items.compactMap { $0["data-seq"] } == ([story.start.seq] + changes.map(\.seq)).map(String.init))
        #expect(items.dropFirst().compactMap { $0["data-caption"] }.allSatisfy { $0.contains("{\"event\":") })
        let image = try #require(index.all("img").first)
        #expect(image["src"] == names.first)
        // Arrow keys step; nothing is fetched, so the page works from file://.
        let script = try #require(index.all("script").first).text
        #expect(script.contains("ArrowRight") && script.contains("ArrowLeft"))
        #expect(!script.contains("fetch(") && !script.contains("XMLHttpRequest"))
        // Read as HTML, where CDATA means nothing, the script must still hold no markup.
        #expect(!script.contains("&") && !script.contains("<"))
    }
}
