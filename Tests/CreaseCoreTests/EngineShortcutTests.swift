import Testing
@testable import CreaseCore

/// The engine's shortcuts past a build: each must give what a build from scratch gives.
struct EngineShortcutTests {
    func scratch(_ e: Engine) -> [UInt8] { Engine.fromScratch(profile: e.profile, app: e.app, state: e.state, seq: e.seq) }

    /// Only vertical bars show `reduceTransparency` (their background), so with horizontal
    /// bars a toggle leaves the layout as it is, and with a vertical bar it changes it.
    @Test("reduceTransparency changes a layout only where a vertical bar shows it")
    func reduceTransparencyOnlyWhereRead() throws {
        let tabs = builtin("tabs")
        var horizontal = try engine(tabs, [.hinge(angle: 175)])
        #expect(horizontal.layout.verticalBar == nil)
        #expect(try horizontal.apply(.reduceTransparency(enabled: true)) == false)
        #expect(horizontal.layoutJSON() == scratch(horizontal))

        var vertical = try engine(tabs, [.hinge(angle: 175), .orientation(.landscapeLeft)])
        let before = try #require(vertical.layout.verticalBar)
        #expect(before.background == false)
        #expect(try vertical.apply(.reduceTransparency(enabled: true)) == true)
        #expect(try #require(vertical.layout.verticalBar).background == true)
        #expect(vertical.layoutJSON() == scratch(vertical))

        // Toggled while horizontal, then rotated: the vertical bar shows the toggled value.
        #expect(try horizontal.apply(.orientation(.landscapeLeft)) == true)
        #expect(try #require(horizontal.layout.verticalBar).background == true)
        #expect(horizontal.layoutJSON() == scratch(horizontal))
    }

    /// A rig reloading the same manifest sends equal JSON, decoded into new storage: the UI
    /// state still resets, and the caches built from the equal app still serve.
    @Test("the same manifest again resets the UI state and keeps the layout exact")
    func equalManifestReload() throws {
        let tabs = builtin("tabs")
        let again = try App.decode(tabs.source, path: "app")
        var e = try engine(tabs, [.hinge(angle: 175)])
        let initial = (body: e.body, seq: e.seq)
        #expect(try e.apply(.app(again)) == false)   // nothing to reset: the layout stays
        #expect(e.body == initial.body && e.seq == initial.seq + 1)
        #expect(e.layoutJSON() == scratch(e))

        let other = try #require(tabs.containers.compactMap { c -> String? in
            if case .tabView(let t) = c { return t.tabs[1].id }
            return nil
        }.first)
        #expect(try e.apply(.select(tab: other)) == true)
        #expect(try e.apply(.app(again)) == true)    // back to the first tab
        #expect(e.state.ui == UIState(app: tabs))
        #expect(e.layoutJSON() == scratch(e))
    }
}
