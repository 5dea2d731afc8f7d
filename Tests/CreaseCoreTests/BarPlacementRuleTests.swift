import Testing
@testable import CreaseCore

/// Rules 1 and 2: where bars go vertical, and on which side.
@Suite struct BarAxisRuleTests {
    /// Seed 002: "On the outer display, and on the inner display in landscape, navigation bar
    /// items, toolbar items and tab bar items rotate into a single vertical bar along the side
    /// … In portrait on the inner display, bars go back to the top and bottom."
    @Test("vertical on the outer display in every orientation and on the inner display in landscape; horizontal in inner portrait",
          arguments: [
            (Pose_.outerPortrait, Axis.vertical), (Pose_.outerLandscapeLeft, .vertical), (Pose_.outerLandscapeRight, .vertical),
            ([Event.orientation(.portraitUpsideDown)], .vertical),
            (Pose_.innerLandscape, .vertical), ([.hinge(angle: 180), .orientation(.landscapeRight)], .vertical),
            (Pose_.innerPortrait, .horizontal), ([.hinge(angle: 90)], .horizontal),
          ])
    func axis(events: [Event], expected: Axis) throws {
        let l = try engine(builtin("split"), events).layout
        #expect(l.barAxis == expected)
        #expect((l.verticalBar != nil) == (expected == .vertical))
    }

    /// duo-facts §2 (toolbarVerticalEdge): "Reports the system's preferred edge even when no bar
    /// is visible … nil where a vertical bar is never used."
    @Test("verticalBarEdge is the preferred edge even when the screen opts out, and null in inner portrait")
    func preferredEdge() throws {
        let optedOut = try stackApp(toolbar: #"{"id": "a", "title": "A", "symbol": "a"}"#, extra: #", "verticalBehavior": "disabled""#)
        let outer = try engine(optedOut, []).layout
        #expect(outer.barAxis == .horizontal)
        #expect(outer.verticalBarEdge == .trailing && outer.verticalBarSide == .right)
        let innerPortrait = try engine(optedOut, Pose_.innerPortrait).layout
        #expect(innerPortrait.verticalBarEdge == nil && innerPortrait.verticalBarSide == nil)
    }
}

@Suite struct BarSideRuleTests {
    /// duo-facts §1: "Outer display → bar stays on the camera side, so one landscape rotation
    /// puts it on the left." Camera top-right in portrait.
    @Test("outer display: the camera side, moving with rotation",
          arguments: [(Orientation.portrait, Side.right), (.landscapeLeft, .right), (.landscapeRight, .left), (.portraitUpsideDown, .left)])
    func outerSide(orientation: Orientation, side: Side) throws {
        let l = try engine(builtin("tabs"), [.orientation(orientation)]).layout
        #expect(l.verticalBarSide == side)
        let bar = try #require(l.verticalBar)
        #expect(side == .right ? bar.frame.maxX == l.device.width : bar.frame.x == 0)
    }

    /// duo-facts §1: "inner display full-screen → always the right/trailing edge in both
    /// landscape rotations (180° does not mirror)."
    @Test("inner display full screen: always the right", arguments: [Orientation.landscapeLeft, .landscapeRight])
    func innerSide(orientation: Orientation) throws {
        let l = try engine(builtin("tabs"), [.hinge(angle: 180), .orientation(orientation)]).layout
        #expect(l.verticalBarSide == .right && l.verticalBarEdge == .trailing)
    }

    /// Seed 001: "in Split View, controls move to the outer edge of each app, which is the
    /// leading edge for the app on the left."
    @Test("Split View: the outer edge of the app, with 84 pt on that side only")
    func splitViewSide() throws {
        let left = try engine(builtin("tabs"), Pose_.innerLandscape + [.splitView(.left)]).layout
        #expect(left.verticalBarSide == .left && left.verticalBarEdge == .leading)
        #expect(left.safeArea.leading == 84 && left.safeArea.trailing == 0)
        #expect(left.device.window.x == 0 && left.device.window.w == 469)
        let right = try engine(builtin("tabs"), Pose_.innerLandscape + [.splitView(.right)]).layout
        #expect(right.verticalBarSide == .right && right.verticalBarEdge == .trailing)
        #expect(right.safeArea.trailing == 84 && right.safeArea.leading == 0)
        #expect(right.device.window.maxX == 951 && right.device.window.w == 469)
    }

    /// Seed 002: "The vertical bar stays on the same side of the hardware in right-to-left
    /// languages; your content mirrors around it."
    @Test("right-to-left keeps the hardware side and flips the edge")
    func rightToLeft() throws {
        let l = try engine(builtin("tabs"), Pose_.innerLandscape + [.layoutDirection(.rtl)]).layout
        #expect(l.verticalBarSide == .right && l.verticalBarEdge == .leading)
        #expect(l.safeArea.leading == 84 && l.safeArea.trailing == 0)
        #expect(try #require(l.verticalBar).frame.maxX == 951)
    }
}

/// Rule 3: only container-managed bars move.
@Suite struct CustomBarRuleTests {
    /// Seed 001: "A custom UITabBar, UIToolbar or UINavigationBar you add to your view, or any
    /// bar built from your own views, never moves into the vertical bar."
    @Test("a custom bar stays where it was put, reports the edge and its collisions, and gets a diagnostic")
    func customBarStays() throws {
        let a = try stackApp(toolbar: #"{"id": "a", "title": "A", "symbol": "a"}"#,
                             extra: #", "customBars": [{"id": "myTabs", "kind": "tabBar", "edge": "top"}]"#)
        let l = try engine(a, []).layout
        let custom = try #require(l.custom.first)
        #expect(custom.frame.y == 0 && custom.frame.w == l.device.width)
        #expect(custom.verticalBarEdge == .trailing)
        #expect(custom.collides == [.dynamicIsland])
        #expect(l.hasDiagnostic("customBarStaysPut", "myTabs") && l.hasDiagnostic("customBarCollides", "myTabs"))
        #expect(!l.allItemIds.contains("myTabs"))
    }

    /// Seed 001: "Read toolbarVerticalEdge … Use the safe-area inset on that edge as the column's
    /// width … Query reserved regions to find the space they take."
    @Test("a custom bar that follows toolbarVerticalEdge takes the column's free space and collides with nothing")
    func customBarFollowsEdge() throws {
        let a = try stackApp(toolbar: "", extra: #", "customBars": [{"id": "mine", "kind": "tabBar", "edge": "bottom", "followsVerticalEdge": true}]"#)
        let l = try engine(a, [.liveActivities(count: 2)]).layout
        let custom = try #require(l.custom.first)
        #expect(custom.frame.w == 84 && custom.frame.maxX == l.device.width)
        #expect(custom.collides.isEmpty)
        #expect(!l.hasDiagnostic("customBarStaysPut"))
    }
}
