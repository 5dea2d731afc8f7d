import Testing
@testable import CreaseCore

/// The builder's own memos (horizontal fits checked and moved in place, the tab bar's
/// items, screens' entries and notes): every `rebuild` must print what a build that
/// remembers nothing prints. The engine's recent-layouts cache answers revisited inputs
/// without building, so these drive one builder directly: every state is built.
struct BuilderMemoTests {
    /// Device events drawn from a few values (so fits, tab bars and pools are met again,
    /// moved or changed), mixed with any event (`EngineShortcutTests.RevisitingEvents`).
    @Test("every rebuild of one builder prints what a build from scratch prints, over revisiting sequences",
          arguments: BuiltinApps.names)
    func rebuildEqualsBuild(app name: String) throws {
        let profile = DeviceProfile.builtin
        var compared = 0
        for s in 0..<40 {
            var app = builtin(name)
            var state = DeviceState(app: app)
            var g = ScreenGeometryRule.geometry(profile: profile, state: state)
            var builder = LayoutBuilder(p: profile, app: app, state: state, g: g, scene: Scene(app: app, ui: state.ui, geometry: g), remembers: true)
            _ = builder.rebuild()
            var gen = EngineShortcutTests.RevisitingEvents(seed: 29 &+ UInt64(s) &* 7919, app: app)
            var history: [Event] = []
            for _ in 0..<50 {
                let event = gen.next()
                guard (try? StateMachine.apply(event, at: nil, to: &state, app: &app, profile: profile)) != nil else { continue }
                history.append(event)
                g = ScreenGeometryRule.geometry(profile: profile, state: state)
                builder.app = app
                builder.state = state
                builder.g = g
                builder.scene = Scene(app: app, ui: state.ui, geometry: g)
                let incremental = builder.rebuild().encodeBody()
                let scratch = LayoutBuilder.build(profile: profile, app: app, state: state).encodeBody()
                #expect(incremental == scratch, "diverged after:\n\(history)")
                compared += 1
            }
        }
        #expect(compared > 1_500)
    }

    /// The tab bar's items are the last build's when nothing they depend on changed (a Live
    /// Activity), moved with the bar over a keyboard (new storage, only the y of each), and
    /// placed anew, mirrored, for a right-to-left layout.
    @Test("the tab bar's items are kept, moved or placed anew as their inputs say")
    func tabBarItemsKeptMovedOrPlaced() throws {
        func identical<T>(_ a: [T], _ b: [T]) -> Bool { BuildMemo.identical(a, b) }
        var e = try engine(builtin("tabs"), [.hinge(angle: 175), .keyboard(visible: true, height: 300)])
        let first = try #require(e.layout.bar(.tabBar))

        #expect(try e.apply(.liveActivities(count: 1)) == true)
        let kept = try #require(e.layout.bar(.tabBar))
        #expect(identical(kept.items, first.items))

        #expect(try e.apply(.keyboard(visible: true, height: 310)) == true)
        let moved = try #require(e.layout.bar(.tabBar))
        #expect(!identical(moved.items, first.items) && moved.items.count == first.items.count)
        #expect(moved.items.allSatisfy { $0.frame.y == moved.frame.y } && moved.frame.y == first.frame.y - 10)
        #expect(zip(moved.items, first.items).allSatisfy { $0.id == $1.id && $0.frame.x == $1.frame.x && $0.frame.w == $1.frame.w })
        #expect(e.layoutJSON() == Engine.fromScratch(profile: e.profile, app: e.app, state: e.state, seq: e.seq))

        #expect(try e.apply(.layoutDirection(.rtl)) == true)
        let mirrored = try #require(e.layout.bar(.tabBar))
        #expect(mirrored.items.first?.id == first.items.first?.id && mirrored.items.first?.frame.x != first.items.first?.frame.x)
        #expect(e.layoutJSON() == Engine.fromScratch(profile: e.profile, app: e.app, state: e.state, seq: e.seq))
    }

    /// `FreeSpace.largestInterval` sorts the blocked intervals in a stack buffer; the
    /// reference below is the array version it replaced. Bit for bit over random bands and
    /// regions (overlapping, touching, equal starts, outside the band).
    @Test("the largest free interval equals the array-based sweep, bit for bit")
    func largestIntervalMatchesReference() {
        func reference(in band: Rect, axis: Axis, avoiding regions: [Region]) -> (Double, Double) {
            let lo = axis == .vertical ? band.y : band.x
            let hi = axis == .vertical ? band.maxY : band.maxX
            var blocked: [(Double, Double)] = []
            for r in regions where r.frame.intersects(band) {
                let s = axis == .vertical ? r.frame.y : r.frame.x
                let e = axis == .vertical ? r.frame.maxY : r.frame.maxX
                var i = blocked.count
                blocked.append((s, e))
                while i > 0, blocked[i - 1].0 > s { blocked.swapAt(i, i - 1); i -= 1 }
            }
            var best = (lo, lo)
            var cursor = lo
            for (s, e) in blocked {
                if s > cursor, min(s, hi) - cursor > best.1 - best.0 { best = (cursor, min(s, hi)) }
                cursor = max(cursor, e)
            }
            if hi - cursor > best.1 - best.0 { best = (cursor, hi) }
            return best
        }
        var rng = SplitMix64(seed: 14)
        func coordinate() -> Double { Double(rng.next() % 80) * 2.5 }
        let kinds: [RegionKind] = [.statusBar, .dynamicIsland, .division, .keyboard, .pip]
        var crossed = 0
        for _ in 0..<20_000 {
            let band = Rect(x: coordinate(), y: coordinate(), w: coordinate() + 1, h: coordinate() + 1)
            var regions: [Region] = []
            for _ in 0..<Int(rng.next() % 6) {
                regions.append(Region(kind: kinds[Int(rng.next() % 5)], frame: Rect(x: coordinate(), y: coordinate(), w: coordinate(), h: coordinate())))
            }
            for axis in [Axis.horizontal, .vertical] {
                let got = FreeSpace.largestInterval(in: band, axis: axis, avoiding: regions)
                let want = reference(in: band, axis: axis, avoiding: regions)
                #expect(got.0.bitPattern == want.0.bitPattern && got.1.bitPattern == want.1.bitPattern, "\(band) \(axis) \(regions)")
                if regions.contains(where: { $0.frame.intersects(band) }) { crossed += 1 }
            }
        }
        #expect(crossed > 10_000)
        // Bands no region crosses, infinite and empty ones among them.
        for band in [Rect(x: -.infinity, y: 0, w: 10, h: 10), Rect(x: 0, y: 0, w: .infinity, h: 10), Rect(x: 5, y: 5, w: 0, h: 0),
                     Rect(x: 5, y: 5, w: -3, h: 2), Rect(x: .nan, y: 0, w: 1, h: 1)] {
            for axis in [Axis.horizontal, .vertical] {
                let got = FreeSpace.largestInterval(in: band, axis: axis, avoiding: [])
                let want = reference(in: band, axis: axis, avoiding: [])
                #expect(got.0.bitPattern == want.0.bitPattern && got.1.bitPattern == want.1.bitPattern, "\(band) \(axis)")
            }
        }
    }
}
