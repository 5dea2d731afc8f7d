import Testing
@testable import CreaseCore

/// The glitch checker over layout sequences made by hand: each kind found, with its subject
/// and seq range, and the near misses not found.
@Suite struct GlitchCheckerTests {
    /// A small app without custom bars or floating buttons, so nothing is wrong to begin with.
    static let app = try! stackApp(toolbar: #"""
        {"id": "add", "title": "Add", "symbol": "plus"},
        {"id": "share", "title": "Share", "symbol": "square.and.arrow.up"},
        {"id": "trash", "title": "Delete", "symbol": "trash", "placement": "bottomBar"}
        """#)

    static func layout(_ events: [Event] = []) -> Layout { try! engine(app, events).layout }

    /// Feeds layouts one at a time, numbering them and stamping them in milliseconds.
    struct Feed {
        var checker: GlitchChecker
        var seq = 0
        var found: [Glitch] = []

        init(_ options: GlitchOptions = GlitchOptions(), app: App? = GlitchCheckerTests.app) {
            checker = GlitchChecker(options: options, app: app)
        }

        @discardableResult
        mutating func show(_ l: Layout, atMs ms: Double) -> [Glitch] {
            let g = checker.check(layout: l, seq: seq, t: UInt64(ms * 1e6), digest: Digest.fnv1a(l.encodeBody()))
            seq += 1
            found += g
            return g
        }

        func of(_ kind: GlitchKind) -> [Glitch] { found.filter { $0.kind == kind } }
    }

    static let plain = layout()
    static let keyboard = layout([.keyboard(visible: true, height: nil)])

    @Test func aCleanRunFindsNothing() {
        var f = Feed()
        for (i, l) in [Self.plain, Self.plain, Self.keyboard, Self.plain].enumerated() { f.show(l, atMs: Double(i) * 500) }
        #expect(f.found.isEmpty, "\(f.found)")
    }

    // MARK: flapping

    @Test func flappingIsMoreThanFourReturnsWithinASecondReportedOncePerEpisode() {
        var f = Feed(app: nil)
        // Seq 0 plain, then keyboard and plain by turns every 10 ms: every change from seq 2 on is a return.
        for i in 0..<12 { f.show(i % 2 == 0 ? Self.plain : Self.keyboard, atMs: Double(i) * 10) }
        let flaps = f.of(.flapping)
        #expect(flaps.count == 1)
        #expect(flaps.first?.firstSeq == 2 && flaps.first?.lastSeq == 6, "the five returns seq 2…6: \(flaps)")
        #expect(flaps.first?.subject == "layout")
        #expect(flaps.first?.message.contains("5 times") == true, "\(flaps)")
        // Going on, it is the same episode.
        for i in 12..<40 { f.show(i % 2 == 0 ? Self.plain : Self.keyboard, atMs: Double(i) * 10) }
        #expect(f.of(.flapping).count == 1)
        // Once the returns thin out (one in the last second here), the next chatter is a new episode.
        f.show(Self.keyboard, atMs: 1_300)
        f.show(Self.plain, atMs: 1_390)
        #expect(f.of(.flapping).count == 1)
        for i in 0..<8 { f.show(i % 2 == 0 ? Self.keyboard : Self.plain, atMs: 1_400 + Double(i) * 10) }
        #expect(f.of(.flapping).count == 2)
    }

    @Test func fourReturnsOrReturnsSpreadOverMoreThanTheWindowAreNotFlapping() {
        var f = Feed(app: nil)
        for i in 0..<6 { f.show(i % 2 == 0 ? Self.plain : Self.keyboard, atMs: Double(i) * 10) }   // returns at seq 2…5
        #expect(f.of(.flapping).isEmpty)
        var slow = Feed(app: nil)
        for i in 0..<12 { slow.show(i % 2 == 0 ? Self.plain : Self.keyboard, atMs: Double(i) * 300) }
        #expect(slow.of(.flapping).isEmpty, "one return every 300 ms: at most three in any second")
        var options = GlitchOptions()
        options.flappingReturns = 2
        var strict = Feed(options, app: nil)
        for i in 0..<6 { strict.show(i % 2 == 0 ? Self.plain : Self.keyboard, atMs: Double(i) * 10) }
        #expect(strict.of(.flapping).first.map { ($0.firstSeq, $0.lastSeq) }! == (2, 4))
    }

    // MARK: flash

    @Test func aKeyboardUpForTwentyMillisecondsFlashes() {
        var f = Feed()
        f.show(Self.plain, atMs: 0)
        f.show(Self.keyboard, atMs: 100)
        f.show(Self.plain, atMs: 120)
        let flash = f.of(.flash).filter { $0.subject == "keyboard" }
        #expect(flash.count == 1)
        #expect(flash.first.map { ($0.firstSeq, $0.lastSeq, $0.firstT, $0.lastT) }! == (1, 2, 100_000_000, 120_000_000))
        #expect(flash.first?.message == "the keyboard appeared at seq 1 and was gone 20 ms later, at seq 2")
        // Up for 200 ms is no flash.
        var g = Feed()
        g.show(Self.plain, atMs: 0)
        g.show(Self.keyboard, atMs: 100)
        g.show(Self.plain, atMs: 300)
        #expect(g.of(.flash).isEmpty)
    }

    @Test func anItemGoneForAMomentFlashes() {
        var missing = Self.plain
        let bar = missing.bars.firstIndex { $0.items.contains { $0.id == "share" } }!
        missing.bars[bar].items.removeAll { $0.id == "share" }
        missing.bars[bar].overflow.append("share")
        var f = Feed()
        f.show(Self.plain, atMs: 0)
        f.show(missing, atMs: 500)
        f.show(Self.plain, atMs: 510)
        #expect(f.found == f.of(.flash), "in the overflow menu it is not lost: \(f.found)")
        #expect(f.of(.flash).map(\.message) == ["item \"share\" vanished at seq 1 and was back 10 ms later, at seq 2"])
    }

    // MARK: lostItem, occluded, offscreen

    @Test func anItemInNoBarAndNoMenuIsLostOnlyWhenTheAppIsKnown() {
        var lost = Self.plain
        for b in lost.bars.indices { lost.bars[b].items.removeAll { $0.id == "share" } }
        var f = Feed()
        f.show(Self.plain, atMs: 0)
        f.show(lost, atMs: 500)
        f.show(lost, atMs: 1_000)
        let found = f.of(.lostItem)
        #expect(found.count == 1, "reported once, where it begins")
        #expect(found.first.map { ($0.subject, $0.firstSeq, $0.lastSeq) }! == ("share", 1, 1))
        #expect(found.first?.message.contains("declared by screen \"s\"") == true, "\(found)")
        var unknown = Feed(app: nil)
        unknown.show(lost, atMs: 0)
        #expect(unknown.of(.lostItem).isEmpty)
    }

    @Test func anItemOnTheIslandIsOccludedAndOneOutsideTheWindowOffscreen() throws {
        let island = try #require(Self.plain.regions.first { $0.kind == .dynamicIsland })
        var covered = Self.plain
        let b = covered.bars.firstIndex { $0.items.contains { $0.id == "add" } }!
        let i = covered.bars[b].items.firstIndex { $0.id == "add" }!
        covered.bars[b].items[i].frame.y = island.frame.y
        covered.bars[b].items[i].frame.x = island.frame.x
        var f = Feed()
        f.show(Self.plain, atMs: 0)
        f.show(covered, atMs: 500)
        #expect(f.of(.occluded).map { ($0.subject, $0.firstSeq) }.elementsEqual([("add", 1)], by: ==), "\(f.found)")
        #expect(f.of(.occluded).first?.message.contains("overlaps the Dynamic Island") == true)

        var outside = Self.plain
        outside.bars[b].items[i].frame.x = outside.device.window.maxX - 10
        var g = Feed()
        g.show(outside, atMs: 0)
        #expect(g.of(.offscreen).map(\.subject) == ["add"])
        // Touching the window's edge exactly is inside; a hundredth of a point is not a glitch.
        outside.bars[b].items[i].frame.x = outside.device.window.maxX - outside.bars[b].items[i].frame.w + 0.004
        var h = Feed()
        h.show(outside, atMs: 0)
        #expect(h.found.isEmpty, "\(h.found)")
    }

    /// A bar that follows the vertical edge is laid out by the app inside the column: not counted.
    @Test func aCustomBarReachingUnderTheVerticalBarIsOccluded() throws {
        let withBar = try stackApp(toolbar: #"{"id": "add", "title": "Add", "symbol": "plus"}"#,
                                   extra: #", "customBars": [{"id": "scale", "kind": "toolbar", "edge": "bottom", "followsVerticalEdge": false}]"#)
        let l = try engine(withBar, []).layout
        #expect(l.verticalBar != nil)
        var f = Feed(app: withBar)
        f.show(l, atMs: 0)
        #expect(f.of(.occluded).map(\.subject) == ["scale"])
        #expect(f.of(.occluded).first?.message.contains("overlaps the vertical bar \"s.vertical\"") == true, "\(f.found)")
        let following = try stackApp(toolbar: #"{"id": "add", "title": "Add", "symbol": "plus"}"#,
                                     extra: #", "customBars": [{"id": "scale", "kind": "toolbar", "edge": "bottom", "followsVerticalEdge": true}]"#)
        var g = Feed(app: following)
        g.show(try engine(following, []).layout, atMs: 0)
        #expect(g.found.isEmpty, "\(g.found)")
    }

    // MARK: sideJump

    static func flipped(_ l: Layout) -> Layout {
        var m = l
        m.verticalBarEdge = l.verticalBarEdge == .leading ? .trailing : .leading
        m.verticalBarSide = l.verticalBarSide == .left ? .right : .left
        return m
    }

    @Test func theVerticalBarChangingSideWithNothingToMoveItJumps() {
        var f = Feed()
        f.show(Self.plain, atMs: 0)
        f.show(Self.flipped(Self.plain), atMs: 10)
        #expect(f.of(.sideJump).map { ($0.subject, $0.firstSeq, $0.lastSeq) }.elementsEqual([("s.vertical", 0, 1)], by: ==), "\(f.found)")
        // A layout in between without a vertical bar does not hide the jump.
        var horizontal = Self.plain
        horizontal.verticalBarEdge = nil
        horizontal.verticalBarSide = nil
        var g = Feed()
        g.show(Self.plain, atMs: 0)
        g.show(horizontal, atMs: 10)
        g.show(Self.flipped(Self.plain), atMs: 20)
        #expect(g.of(.sideJump).map { ($0.firstSeq, $0.lastSeq) }.elementsEqual([(0, 2)], by: ==))
    }

    @Test func aRotationOrARotationEventInBetweenMovesTheBar() {
        var rotated = Self.flipped(Self.plain)
        rotated.device.orientation = .landscapeLeft
        var f = Feed()
        f.show(Self.plain, atMs: 0)
        f.show(rotated, atMs: 10)
        #expect(f.of(.sideJump).isEmpty)
        // The event is applied but its layout is not published (inside a batch): still a move.
        var g = Feed()
        g.show(Self.plain, atMs: 0)
        _ = g.checker.check(event: CheckedEvent(seq: 1, t: 5_000_000, event: .splitView(.left), latencyNs: nil))
        g.show(Self.flipped(Self.plain), atMs: 10)
        #expect(g.of(.sideJump).isEmpty)
        // A hinge tick is no move.
        var h = Feed()
        h.show(Self.plain, atMs: 0)
        _ = h.checker.check(event: CheckedEvent(seq: 1, t: 5_000_000, event: .hinge(angle: 3), latencyNs: nil))
        h.show(Self.flipped(Self.plain), atMs: 10)
        #expect(h.of(.sideJump).count == 1)
    }

    // MARK: overBudget, mismatch

    @Test func anEventOverTheBudgetAndANonMatchingVerdictAreGlitches() {
        var c = GlitchChecker()
        #expect(c.check(event: CheckedEvent(seq: 4, t: 10, event: .pop, latencyNs: 999_999)).isEmpty)
        let over = c.check(event: CheckedEvent(seq: 5, t: 20, event: .pop, latencyNs: 1_500_000))
        #expect(over == [Glitch(kind: .overBudget, subject: "pop", firstSeq: 5, lastSeq: 5, firstT: 20, lastT: 20,
                                message: "pop event at seq 5 took 1.5 ms, over the 1 ms budget")])
        var options = GlitchOptions()
        options.budgetNs = 2_000_000
        var relaxed = GlitchChecker(options: options)
        #expect(relaxed.check(event: CheckedEvent(seq: 5, t: 20, event: .pop, latencyNs: 1_500_000)).isEmpty)

        // The conformance issue's observation records feed this; until they exist, by hand.
        let m = c.check(verdict: NonMatchVerdict(seq: 9, t: 30, subject: "bars[1].items[0].frame.y", message: "device 210, layout 206"))
        #expect(m.map(\.kind) == [.mismatch] && m.first?.subject == "bars[1].items[0].frame.y")
        #expect(m.first?.message == "the device did not match the layout at seq 9: device 210, layout 206")
    }

    // MARK: ignore, JSON

    @Test func theIgnoreListLeavesOutAKindOrOneSubjectOfIt() throws {
        #expect(try GlitchIgnore.parse("flash") == GlitchIgnore(kind: .flash))
        #expect(try GlitchIgnore.parse("occluded:map:scale") == GlitchIgnore(kind: .occluded, subject: "map:scale"))
        #expect(throws: InputError.self) { try GlitchIgnore.parse("flicker") }
        #expect(throws: InputError.self) { try GlitchIgnore.parse("flash:") }

        func run(_ ignore: [GlitchIgnore]) -> [Glitch] {
            var options = GlitchOptions()
            options.ignore = ignore
            var f = Feed(options)
            var hidden = Self.plain
            for b in hidden.bars.indices { hidden.bars[b].items.removeAll { $0.id == "share" } }
            f.show(Self.plain, atMs: 0)
            f.show(Self.keyboard, atMs: 100)
            f.show(Self.plain, atMs: 110)
            f.show(hidden, atMs: 500)
            f.show(Self.plain, atMs: 510)
            return f.found
        }
        #expect(run([]).map { "\($0.kind.rawValue):\($0.subject)" } == ["flash:keyboard", "lostItem:share", "flash:share"])
        #expect(run([try GlitchIgnore.parse("flash:keyboard")]).map(\.subject) == ["share", "share"])
        #expect(run([GlitchIgnore(kind: .flash)]).map(\.kind) == [.lostItem])
    }

    @Test func aGlitchIsOneStableJSONLineThatReadsBack() throws {
        let g = Glitch(kind: .flash, subject: "key\"board", firstSeq: 1, lastSeq: 2, firstT: 100, lastT: 120, message: "m")
        let line = String(decoding: g.json(), as: UTF8.self)
        #expect(line == #"{"kind":"flash","subject":"key\"board","seq":[1,2],"t":[100,120],"message":"m"}"#)
        #expect(try Glitch.decode(try JSON.parse(g.json())) == g)
        #expect(throws: InputError.self) { try Glitch.decode(try JSON.parse(Array(#"{"kind":"flash","subject":"x","seq":[1],"t":[1,2],"message":"m"}"#.utf8))) }
    }

    @Test func theSameLayoutsGiveTheSameGlitches() {
        func run() -> [Glitch] {
            var f = Feed()
            for i in 0..<40 { f.show([Self.plain, Self.keyboard, Self.flipped(Self.plain)][i * 7 % 3], atMs: Double(i) * 3) }
            return f.found
        }
        let a = run()
        #expect(!a.isEmpty)
        #expect(a == run())
    }
}
