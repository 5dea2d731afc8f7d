import CreaseCore
import Foundation
import Testing

/// The `glitches` topic of a real creased: each glitch pushed as the daemon finds it in
/// what it publishes, and `stats` counting them by kind.
@Suite(.serialized) struct GlitchTopicTests {
    /// A `map` screen whose custom toolbar does not follow the vertical edge: once pushed on
    /// the folded device, it reaches under the vertical bar.
    static let manifest = #"""
        {"name": "Maps", "root": {"kind": "navigationStack", "id": "stack", "screens": [
          {"id": "list", "title": "Places", "verticalBehavior": "disabled", "toolbar": [{"id": "find", "title": "Find", "symbol": "magnifyingglass"}]},
          {"id": "map", "title": "Map", "toolbar": [{"id": "pin", "title": "Pin", "symbol": "mappin"}],
           "customBars": [{"id": "scaleBar", "kind": "toolbar", "edge": "bottom", "followsVerticalEdge": false}]}]}}
        """#

    static func glitchCounts(_ c: Client) throws -> JSONValue? {
        try c.request(#"{"cmd":"stats","id":"st"}"#)["stats"]?["glitches"]
    }

    @Test func aGlitchIsPushedToItsSubscribersAndCountedByKind() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let app = "\(dir)/maps.json"
        #expect(FileManager.default.createFile(atPath: app, contents: Data(Self.manifest.utf8)))
        // A budget no event can pass (a minute): under load a debug build's push took over the
        // default 1 ms and raised an overBudget glitch beside the one this test is about.
        let d = try DaemonProcess(arguments: ["--app", app, "--no-trace", "--budget-us", "60000000"])
        let watcher = try Client(d.socketPath)
        let sub = try watcher.request(#"{"cmd":"subscribe","topics":["glitches"],"id":"g"}"#)
        #expect(sub["topics"] == .array([.string("glitches")]))
        let rig = try Client(d.socketPath)
        #expect(try rig.request(#"{"event":"liveActivities","count":1,"id":1}"#)["seq"] == .number(1))
        #expect(try Self.glitchCounts(rig)?["occluded"] == .number(0), "nothing wrong before the push")
        #expect(try rig.request(#"{"event":"push","screen":"map","id":2}"#)["seq"] == .number(2))
        _ = try rig.request(#"{"cmd":"sync","id":"s"}"#)

        let pushes = readPushes(watcher, topic: "glitches")
        #expect(pushes.count == 1, "\(pushes)")
        let glitch = try Glitch.decode(try #require(pushes.first?["glitch"]))
        #expect(pushes.first?["seq"] == .number(2))
        #expect(glitch.kind == .occluded && glitch.subject == "scaleBar" && glitch.firstSeq == 2 && glitch.lastSeq == 2, "\(glitch)")
        #expect(glitch.message.contains("overlaps the vertical bar \"map.vertical\""))

        let counts = try #require(try Self.glitchCounts(rig))
        #expect(counts["occluded"] == .number(1))
        guard case .object(let members) = counts else { Issue.record("stats.glitches is not an object"); return }
        #expect(members.map(\.0) == GlitchKind.allCases.map(\.rawValue), "every kind, in order")
        // A client that did not subscribe got no glitch push.
        #expect(rig.readAvailable(quiet: 0.2).isEmpty)
        d.stop()
    }

    /// overBudget takes the daemon's own latency (read to publish), the one its histogram counts.
    @Test func overBudgetCountsTheEventsTheLatencyHistogramCountsOverBudget() throws {
        let d = try DaemonProcess(arguments: ["--budget-us", "1", "--no-trace"])
        let watcher = try Client(d.socketPath)
        _ = try watcher.request(#"{"cmd":"subscribe","topics":["glitches"],"id":"g"}"#)
        let rig = try Client(d.socketPath)
        // Each replaces the app, so each decodes a manifest and lays out anew: well over 1 µs on
        // any machine (a hinge tick inside its pose returns at once and can take less).
        for i in 1...20 {
            var w = JSONWriter()
            Event.app(Engine.builtinApp(named: i % 2 == 0 ? "tabs" : "split")!).write(to: &w, ts: nil, id: .number(Double(i)))
            _ = try rig.request(String(decoding: w.bytes, as: UTF8.self))
        }
        let stats = try #require(try rig.request(#"{"cmd":"stats","id":"st"}"#)["stats"])
        let over = try #require(stats["latency"]?["overBudget"]?.int)
        #expect(over >= 1, "a 1 µs budget")
        #expect(stats["glitches"]?["overBudget"]?.int == over)
        // Replacing apps shows other glitches too (items flash); the overBudget ones are one per slow event.
        let slow = readPushes(watcher, topic: "glitches").compactMap { $0["glitch"] }.compactMap { try? Glitch.decode($0) }
            .filter { $0.kind == .overBudget }
        #expect(slow.count == over)
        #expect(slow.allSatisfy { $0.subject == "app" })
        d.stop()
    }
}
