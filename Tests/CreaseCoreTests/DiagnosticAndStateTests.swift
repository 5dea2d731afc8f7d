import Testing
@testable import CreaseCore

/// Rule 11: diagnostics with stable codes.
@Suite struct DiagnosticRuleTests {
    /// Seed 003: "Keep the ellipsis (three dots) for that menu, and give any other menu a symbol of its own."
    @Test("the ellipsis symbol on an app's own item")
    func ellipsis() throws {
        let l = try engine(try stackApp(toolbar: #"{"id": "more", "title": "More", "symbol": "ellipsis.circle"}"#), []).layout
        #expect(l.hasDiagnostic("reservedEllipsis", "more"))
    }

    /// Seed 002: "Overflow menus show the title and the icon. So always provide both."
    @Test("an item with no title")
    func missingTitle() throws {
        let l = try engine(try stackApp(toolbar: #"{"id": "x", "symbol": "x"}"#), []).layout
        #expect(l.hasDiagnostic("missingTitle", "x"))
    }

    /// Seed 001: "Keep it off the fold. Buttons in the crease are hard to tap." "place it from
    /// the safe area. Offset it from the inset on each side, not from a fixed padding or the screen edge."
    @Test("a floating button on the fold, or placed from the screen edge")
    func floating() throws {
        let l = try engine(builtin("tabs"), Pose_.partlyOpenLandscape).layout
        #expect(l.hasDiagnostic("floatingButtonOnFold", "recenter"))
        #expect(!(try engine(builtin("tabs"), Pose_.innerLandscape).layout.hasDiagnostic("floatingButtonOnFold")))
        let edge = try stackApp(toolbar: "", extra: #", "floatingButtons": [{"id": "fab", "anchor": "screenEdge"}]"#)
        let e = try engine(edge, []).layout
        #expect(e.hasDiagnostic("floatingButtonFromScreenEdge", "fab"))
        let fab = try #require(e.floating.first).frame
        #expect(fab.maxX > e.device.width - 84)   // under the bar: what the diagnostic warns of
        let safe = try engine(try stackApp(toolbar: "", extra: #", "floatingButtons": [{"id": "fab"}]"#), []).layout
        #expect(try #require(safe.floating.first).frame.maxX <= safe.device.width - 84)
    }

    /// Seed 003: "Keep items that show a status visible longer too, like an item with a badge."
    @Test("a badged item pushed into the overflow menu")
    func badgeInOverflow() throws {
        let l = try engine(builtin("tabs"), Pose_.outerLandscapeRight + [.keyboard(visible: true, height: 200)]).layout
        #expect(l.allOverflow.contains("downloads"))
        #expect(l.hasDiagnostic("badgedItemInOverflow", "downloads"))
    }
}

/// Hinge → pose with hysteresis, and the display that follows.
@Suite struct HingePoseRuleTests {
    @Test("the pose follows the angle with a band of at least 5° around each threshold")
    func hysteresis() {
        let p = DeviceProfile.builtin
        #expect(2 * p.hingeHysteresis >= 5)
        var pose = Pose.closed
        for angle in [0.0, 19, 22.9] { pose = HingePoseRule.nextPose(from: pose, angle: angle, profile: p) }
        #expect(pose == .closed)
        pose = HingePoseRule.nextPose(from: pose, angle: 23, profile: p)
        #expect(pose == .partiallyOpen)
        for angle in [20.0, 17.5, 22, 18] { pose = HingePoseRule.nextPose(from: pose, angle: angle, profile: p) }
        #expect(pose == .partiallyOpen)   // jitter inside the band never flips it back
        pose = HingePoseRule.nextPose(from: pose, angle: 17, profile: p)
        #expect(pose == .closed)
        pose = HingePoseRule.nextPose(from: pose, angle: 170, profile: p)
        #expect(pose == .fullyOpen)
        for angle in [159.0, 161, 157.5] { pose = HingePoseRule.nextPose(from: pose, angle: angle, profile: p) }
        #expect(pose == .fullyOpen)
        pose = HingePoseRule.nextPose(from: pose, angle: 157, profile: p)
        #expect(pose == .partiallyOpen)
    }

    @Test("a noisy encoder around a threshold changes the pose once")
    func noisyEncoder() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        var changes = 0
        var lastPose = e.state.pose
        for i in 0..<2000 {
            let angle = 20 + [0.0, 2.4, -2.4, 1.1, -2.9, 2.9][i % 6] + (i > 1000 ? 6 : 0)
            try e.apply(.hinge(angle: angle))
            if e.state.pose != lastPose { changes += 1; lastPose = e.state.pose }
        }
        #expect(changes == 1)
    }

    @Test("display is outer when closed, inner otherwise", arguments: [(0.0, Display.outer), (90, .inner), (180, .inner)])
    func display(angle: Double, display: Display) throws {
        #expect(try engine(builtin("tabs"), [.hinge(angle: angle)]).layout.device.display == display)
    }
}

/// The UI state machine and its errors.
@Suite struct StateMachineTests {
    @Test("select, push, pop, present, dismiss and inspector change the visible UI")
    func uiEvents() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        try e.apply(.push(screen: "trailDetail"))
        #expect(e.layout.item("system.back") != nil && e.layout.item("favorite") != nil)
        try e.apply(.select(tab: "plan"))
        #expect(e.layout.item("planSave") != nil && e.layout.item("system.back") == nil)
        try e.apply(.select(tab: "browse"))
        #expect(e.layout.item("favorite") != nil)   // each tab keeps its own stack
        try e.apply(.pop)
        try e.apply(.present(sheet: "filters"))
        #expect(e.layout.sheet?.id == "filters")
        try e.apply(.dismiss)
        #expect(e.layout.sheet == nil)
    }

    @Test("bad UI events are rejected with an error naming the field, and change nothing",
          arguments: [
            (Event.select(tab: "nope"), "unknownId", "tab"), (.push(screen: "planForm"), "unknownId", "screen"),
            (.pop, "invalidState", "event"), (.dismiss, "invalidState", "event"),
            (.present(sheet: "nope"), "unknownId", "sheet"), (.inspector(presented: true), "unknownId", "presented"),
          ])
    func rejected(event: Event, code: String, field: String) {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        let before = e.layoutJSON()
        #expect(throws: InputError.self) { try e.apply(event) }
        do { try e.apply(event) } catch {
            #expect(error.code.rawValue == code && error.field == field)
        }
        #expect(e.layoutJSON() == before && e.seq == 0)
    }

    @Test("an app event replaces the manifest and resets the UI state")
    func appReplacement() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        try e.apply(.select(tab: "plan"))
        try e.apply(.app(builtin("split")))
        #expect(e.appName == "Field Notes")
        #expect(e.layout.item("compose") != nil)
        #expect(e.seq == 2)
    }

    @Test("state JSON round-trips through decode")
    func stateRoundTrip() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        for ev: Event in [.hinge(angle: 91), .orientation(.landscapeRight), .keyboard(visible: true, height: 250), .select(tab: "browse"),
                          .push(screen: "trailDetail"), .liveActivities(count: 2)] { try e.apply(ev) }
        let json = try JSON.parse(e.state.jsonBytes(app: e.app))
        let restored = try DeviceState.decode(json, app: e.app)
        #expect(restored == e.state)
        let resumed = Engine(profile: .builtin, app: e.app, state: restored, seq: e.seq)
        #expect(resumed.layoutJSON() == e.layoutJSON())
    }
}
