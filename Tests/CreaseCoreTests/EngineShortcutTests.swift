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

    /// Events drawn from a few values, so that a sequence revisits inputs: the recent
    /// layouts fill, evict their least recently used entry and hit again, and builds meet
    /// the last build's bars unchanged, moved (the keyboard) or changed.
    struct RevisitingEvents {
        var rng: SplitMix64
        var random: RandomEvents

        init(seed: UInt64, app: App) {
            rng = SplitMix64(seed: seed)
            random = RandomEvents(seed: seed &+ 1, app: app, without: [.app])
        }

        /// The clock to apply the last event at.
        var time: Int64 { random.time }

        mutating func next() -> Event {
            switch rng.next() % 8 {
            case 0, 1: .keyboard(visible: rng.next() % 3 != 0, height: [nil, 250, 300, 333.5][Int(rng.next() % 4)])
            case 2: .liveActivities(count: Int(rng.next() % 3))
            case 3: .pip(active: rng.next() % 2 == 0)
            case 4: .hinge(angle: [10, 90, 175][Int(rng.next() % 3)])
            default: random.next()
            }
        }
    }

    @Test("long sequences that evict and revisit recent layouts and reuse the last build's bars equal builds from scratch",
          arguments: BuiltinApps.names)
    func evictAndRevisit(app name: String) {
        let a = builtin(name)
        var compared = 0, unchanged = 0
        for s in 0..<60 {
            var gen = RevisitingEvents(seed: 11 &+ UInt64(s) &* 7919, app: a)
            var e = Engine(profile: .builtin, app: a)
            var history: [Event] = []
            for _ in 0..<60 {
                let ev = gen.next()
                guard let changed = try? e.apply(ev, at: gen.time) else { continue }
                history.append(ev)
                if !changed { unchanged += 1 }
                #expect(e.layoutJSON() == scratch(e), "diverged at seq \(e.seq) after:\n\(history)")
                compared += 1
            }
        }
        #expect(compared > 3_000 && unchanged > 100)
    }

    /// UI events revisit a few scenes (push and pop, present and dismiss, tab switches): the
    /// engine keeps the last four and takes one again instead of resolving it.
    @Test("a scene taken from the recent scenes equals the scene resolved anew, over random events", arguments: BuiltinApps.names)
    func recentScenesEqualResolvedOnes(app name: String) {
        let a = builtin(name)
        var gen = RevisitingEvents(seed: 41, app: a)
        var driver = Engine(profile: .builtin, app: a), cache = driver
        var checked = 0
        for _ in 0..<800 {
            guard (try? driver.apply(gen.next(), at: gen.time)) != nil else { continue }
            let g = ScreenGeometryRule.geometry(profile: driver.profile, state: driver.state)
            #expect(cache.scene(of: SceneKey(ui: driver.state.ui, geometry: g)) == Scene(app: a, ui: driver.state.ui, geometry: g))
            checked += 1
        }
        #expect(checked > 500)
    }

    /// Evicted layouts wait in `retired` until the shell frees them: when it does (after
    /// every event, now and then, or never) changes no layout, and the wait stays bounded.
    @Test("freeing evicted layouts early, late or never gives the same layouts, and the wait is bounded",
          arguments: BuiltinApps.names)
    func retiredLayoutsFreedWheneverChangeNothing(app name: String) {
        let a = builtin(name)
        var gen = RevisitingEvents(seed: 97, app: a)
        var eager = Engine(profile: .builtin, app: a), sometimes = eager, never = eager
        var mostWaiting = 0
        for i in 0..<600 {
            let ev = gen.next()
            guard (try? eager.apply(ev, at: gen.time)) != nil else { continue }
            _ = try? sometimes.apply(ev, at: gen.time)
            _ = try? never.apply(ev, at: gen.time)
            eager.releaseRetired()
            #expect(eager.retiredCount == 0)
            if i % 7 == 0 { sometimes.releaseRetired() }
            mostWaiting = max(mostWaiting, never.retiredCount)
            #expect(never.retiredCount <= Engine.retiredCapacity)
            #expect(sometimes.layoutJSON() == eager.layoutJSON() && never.layoutJSON() == eager.layoutJSON(), "\(name): differs after \(ev)")
        }
        // The sequence evicts: the never-freed engine's list filled to its bound.
        #expect(mostWaiting == Engine.retiredCapacity)
        #expect(never.layoutJSON() == scratch(never))
    }

    /// A bar whose inputs did not change is the last build's (its arrays shared, not
    /// rebuilt); a bar the keyboard moved is built anew next to bars that kept theirs.
    @Test("unchanged bars keep the last build's storage; moved bars are rebuilt")
    func unchangedBarsShareStorage() throws {
        func identical<T>(_ a: [T], _ b: [T]) -> Bool { BuildMemo.identical(a, b) }
        var e = try engine(builtin("tabs"), [.hinge(angle: 175), .keyboard(visible: true, height: 300)])
        let before = e.layout
        let navigation = try #require(before.bar(.navigation))
        #expect(before.bar(.tabBar) != nil && !navigation.overflow.isEmpty)

        // A Live Activity moves no bar here: the whole bars array is the last build's.
        #expect(try e.apply(.liveActivities(count: 2)) == true)
        #expect(e.layout.regions != before.regions)
        #expect(e.layout.bars == before.bars && identical(e.layout.bars, before.bars))
        #expect(identical(e.layout.diagnostics, before.diagnostics) && identical(e.layout.custom, before.custom))
        #expect(e.layoutJSON() == scratch(e))

        // A taller keyboard moves the tab bar: rebuilt; the navigation bar keeps its arrays.
        let moved = e.layout
        #expect(try e.apply(.keyboard(visible: true, height: 320)) == true)
        let tabBar = try #require(e.layout.bar(.tabBar)), movedTabBar = try #require(moved.bar(.tabBar))
        #expect(tabBar.frame.y != movedTabBar.frame.y && !identical(tabBar.items, movedTabBar.items))
        let nav = try #require(e.layout.bar(.navigation))
        #expect(identical(nav.items, navigation.items) && identical(nav.overflow, navigation.overflow))
        #expect(e.layoutJSON() == scratch(e))
    }

    /// The engine hands its state to the builder with `DeviceState.assign`, which copies its
    /// three parts and keeps the UI state's storage when it is the same: it must give an equal state.
    @Test("DeviceState.assign gives an equal state over random events, and copies every stored part",
          arguments: BuiltinApps.names)
    func stateAssignCopiesEverything(app name: String) {
        let a = builtin(name)
        // New device fields go into DeviceInputs or DeviceBookkeeping, which `assign` copies whole.
        #expect(Mirror(reflecting: DeviceState(app: a)).children.map(\.label) == ["inputs", "bookkeeping", "ui"])
        var random = RandomEvents(seed: 5, app: a)
        var e = Engine(profile: .builtin, app: a)
        var copy = DeviceState(app: a)
        var assigned = 0
        for i in 0..<400 {
            let event: Event = i % 5 == 0 ? .keyboard(visible: i % 2 == 0, height: 200 + Double(i)) : random.next()
            guard (try? e.apply(event, at: random.time)) != nil else { continue }
            copy.assign(e.state)
            #expect(copy == e.state, "\(name): differs after \(event)")
            assigned += 1
        }
        #expect(assigned > 200)
    }
}
