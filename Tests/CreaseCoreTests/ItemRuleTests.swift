import Testing
@testable import CreaseCore

/// Rule 4: which items go vertical.
@Suite struct ItemAxisRuleTests {
    static let toolbar = #"""
    {"id": "share", "title": "Share", "symbol": "square.and.arrow.up"},
    {"id": "edit", "title": "Edit"},
    {"id": "profile", "title": "Profile", "customView": true},
    {"id": "segments", "title": "Segments", "customView": true, "axisBehavior": "verticalPreferred"},
    {"id": "total", "title": "Total", "symbol": "cart", "axisBehavior": "horizontalOnly"}
    """#

    /// Seed 000: "items with an icon, like the back and share buttons, change their axis to
    /// vertical, while text-only items, like the edit button, stay on the horizontal axis."
    /// Seed 002: "Custom views stay horizontal by default. Use axisBehavior to change that."
    @Test("icons go vertical; text-only items and custom views stay in the horizontal row unless verticalPreferred")
    func axes() throws {
        let l = try engine(try stackApp(toolbar: Self.toolbar), []).layout
        let column = try #require(l.verticalBar)
        let row = try #require(l.bar(.navigation))
        #expect(column.items.map(\.id).contains("share") && column.items.map(\.id).contains("segments"))
        #expect(row.items.map(\.id).contains("edit") && row.items.map(\.id).contains("profile") && row.items.map(\.id).contains("total"))
        #expect(row.axis == .horizontal && row.edge == .top)
        #expect(l.hasDiagnostic("titleOnlyItem", "edit"))
    }

    /// Apple's documentation of ToolbarItemAxisBehavior.horizontalOnly: the item "is hidden if
    /// no horizontal bar exists". A screen without a title keeps no horizontal row.
    @Test("horizontalOnly items are hidden, with a diagnostic, where no horizontal bar exists")
    func hiddenWithoutRow() throws {
        let l = try engine(try stackApp(title: nil, toolbar: Self.toolbar), []).layout
        #expect(l.bar(.navigation) == nil)
        for id in ["edit", "profile", "total"] {
            #expect(!l.allItemIds.contains(id) && !l.allOverflow.contains(id))
            #expect(l.hasDiagnostic("itemHidden", id))
        }
        // In inner portrait the bars are horizontal, so nothing is hidden.
        let portrait = try engine(try stackApp(title: nil, toolbar: Self.toolbar), Pose_.innerPortrait).layout
        #expect(!portrait.hasDiagnostic("itemHidden"))
        #expect(portrait.item("total") != nil)
    }

    /// Seed 002: "a title-only tab item won't be shown vertically."
    @Test("a title-only tab is never vertical: it waits in the overflow menu with a diagnostic, and shows in a horizontal tab bar")
    func titleOnlyTab() throws {
        let vertical = try engine(builtin("tabs"), []).layout
        #expect(try #require(vertical.verticalBar).overflow.contains("recent"))
        #expect(vertical.hasDiagnostic("titleOnlyTab", "recent"))
        let horizontal = try engine(builtin("tabs"), Pose_.innerPortrait).layout
        #expect(try #require(horizontal.bar(.tabBar)).items.contains { $0.id == "recent" && $0.shows == .title })
    }

    /// Seed 002: "Keyboard accessory bars stay horizontal."
    @Test("keyboard accessory bars are horizontal on every display", arguments: [Pose_.outerPortrait, Pose_.innerLandscape, Pose_.outerLandscapeLeft])
    func accessory(pose: [Event]) throws {
        let l = try engine(builtin("tabs"), pose + [.select(tab: "plan"), .keyboard(visible: true, height: 200)]).layout
        let bar = try #require(l.bar(.keyboardAccessory))
        #expect(bar.axis == .horizontal && bar.edge == .bottom)
        #expect(bar.frame.maxY == l.device.height - 200)
        #expect(bar.items.map(\.id) == ["prevField", "nextField", "doneTyping"])
    }
}

/// Rule 5: order, top to bottom.
@Suite struct VerticalOrderRuleTests {
    /// Seed 002: "A vertical bar reads top to bottom: 1. Primary navigation: back or close.
    /// 2. Prominent actions, such as Done. 3. Everything else, in its original groups, with a
    /// spacer between top and bottom placements."
    @Test("back or close, then prominent actions, then the rest in declaration order by group, bottom placements after a gap")
    func order() throws {
        let a = try app(#"""
        {"name": "T", "root": {"kind": "navigationStack", "id": "stack", "screens": [
          {"id": "root", "title": "Root", "toolbar": []},
          {"id": "s", "title": "S", "toolbar": [
            {"id": "b1", "title": "B1", "symbol": "b", "placement": "bottomBar"},
            {"id": "x", "title": "X", "symbol": "x", "group": "g"},
            {"id": "done", "title": "Done", "symbol": "checkmark", "placement": "confirmationAction"},
            {"id": "y", "title": "Y", "symbol": "y"},
            {"id": "close", "title": "Close", "symbol": "xmark", "placement": "cancellationAction"},
            {"id": "z", "title": "Z", "symbol": "z", "group": "g"},
            {"id": "pin", "title": "Pin", "symbol": "pin", "placement": "topBarPinnedTrailing"}]}]}}
        """#)
        let l = try engine(a, [.hinge(angle: 180), .orientation(.landscapeLeft), .push(screen: "s")]).layout
        let column = try #require(l.verticalBar)
        #expect(column.items.map(\.id) == ["system.back", "close", "done", "pin", "x", "z", "y", "b1"])
        // The bottom placement sits at the bottom of the free space, after a gap.
        let y = try #require(l.item("y")), b1 = try #require(l.item("b1"))
        #expect(b1.frame.y - y.frame.maxY >= 16)
        #expect(b1.frame.maxY == l.device.height)
    }

    /// Seed 000: the tab row "becomes a vertical stack near the bottom of the bar."
    @Test("tabs form a stack at the bottom of the column, in tab order")
    func tabsAtBottom() throws {
        let l = try engine(builtin("sidebar"), [.orientation(.landscapeRight)]).layout
        let column = try #require(l.verticalBar)
        let tabIds = ["home", "favorites", "places", "library"]
        #expect(Array(column.items.map(\.id).suffix(4)) == tabIds)
        #expect(try #require(l.item("library")).frame.maxY <= l.device.height)
        #expect(column.tabBar == .expanded)
    }

    /// Seed 002: "Flexible spacers collapse to zero on the vertical axis."
    @Test("flexible spacers take no room in a vertical bar; fixed spacers keep their minimum")
    func spacers() throws {
        let withFlexible = try stackApp(toolbar: #"{"id": "a", "title": "A", "symbol": "a"}, {"id": "f", "kind": "flexibleSpacer"}, {"id": "b", "title": "B", "symbol": "b"}"#)
        let withFixed = try stackApp(toolbar: #"{"id": "a", "title": "A", "symbol": "a"}, {"id": "f", "kind": "spacer"}, {"id": "b", "title": "B", "symbol": "b"}"#)
        let none = try stackApp(toolbar: #"{"id": "a", "title": "A", "symbol": "a"}, {"id": "b", "title": "B", "symbol": "b"}"#)
        func gap(_ a: App) throws -> Double {
            let l = try engine(a, []).layout
            return try #require(l.item("b")).frame.y - (try #require(l.item("a"))).frame.maxY
        }
        let plain = try gap(none)
        #expect(try gap(withFlexible) == plain)
        #expect(try gap(withFixed) - plain == 8)
    }
}
