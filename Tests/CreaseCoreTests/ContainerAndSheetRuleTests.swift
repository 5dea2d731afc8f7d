import Testing
@testable import CreaseCore

/// Rule 8: containers.
@Suite struct ContainerRuleTests {
    /// Seed 000: "Only the detail column. … in split views only the detail column participates
    /// and items from other columns stay horizontal."
    @Test("in a split view only the detail column gets the vertical bar; the others keep horizontal bars")
    func onlyDetail() throws {
        let l = try engine(builtin("split"), Pose_.innerLandscape).layout
        let vertical = l.bars.filter { $0.axis == .vertical }
        #expect(vertical.map(\.container) == ["note"])
        #expect(l.bars.contains { $0.container == "folders" && $0.axis == .horizontal })
        #expect(l.bars.contains { $0.container == "noteList" && $0.axis == .horizontal })
        #expect(l.columns.map(\.id) == ["folders", "noteList", "note"])
        #expect(l.columns.map(\.verticalBarEdge) == [nil, nil, .trailing])
    }

    /// Seed 002: "The vertical bar stays on the same side of the hardware in right-to-left
    /// languages; your content mirrors around it." Mirrored, the detail column sits away
    /// from the bar's side and keeps horizontal bars, so no column reports an edge.
    @Test("right-to-left, the mirrored detail column stays horizontal and reports no vertical bar edge")
    func rightToLeftDetailReportsNoEdge() throws {
        let l = try engine(builtin("split"), Pose_.innerLandscape + [.layoutDirection(.rtl)]).layout
        #expect(l.columns.map(\.id) == ["folders", "noteList", "note"])
        #expect(l.bars.allSatisfy { $0.axis == .horizontal })
        #expect(l.hasDiagnostic("detailAwayFromBarEdge", "note"))
        #expect(l.columns.map(\.verticalBarEdge) == [nil, nil, nil])
        // Whenever a column reports an edge, one of its bars is vertical.
        for events in [Pose_.innerLandscape, Pose_.innerLandscape + [.layoutDirection(.rtl)], Pose_.partlyOpenLandscape,
                       Pose_.innerLandscape + [.splitView(.left)], Pose_.innerLandscape + [.layoutDirection(.rtl), .splitView(.right)]] {
            let layout = try engine(builtin("split"), events).layout
            for c in layout.columns where c.verticalBarEdge != nil {
                #expect(layout.bars.contains { $0.container == c.id && $0.axis == .vertical }, "\(events): \(c.id)")
            }
        }
    }

    /// Seed 000: "When iPhone Duo is closed, NavigationSplitView and UISplitViewController
    /// collapse to single-stack navigation"; Strike a pose: "an even 50/50 split".
    @Test("closed, the split view collapses to one stack; open with two columns, it splits 50/50")
    func collapseAndSplit() throws {
        let closed = try engine(builtin("split"), []).layout
        #expect(closed.columns.map(\.id) == ["note"])
        #expect(closed.item("system.back") != nil)
        let two = try app(#"{"name": "T", "root": {"kind": "splitView", "id": "sv", "sidebar": {"id": "side", "title": "Side", "toolbar": []}, "detail": {"id": "det", "title": "Detail", "toolbar": [{"id": "x", "title": "X", "symbol": "x"}]}}}"#)
        let open = try engine(two, Pose_.innerLandscape).layout
        #expect(open.columns.map(\.frame.w) == [475.5, 475.5])
        #expect(open.columns.allSatisfy { $0.sizeClass.horizontal == .regular })
    }

    /// Seed 000: "a column doesn't have to report the window's values."
    @Test("each column reports its own size classes")
    func columnSizeClasses() throws {
        let l = try engine(builtin("split"), Pose_.innerLandscape).layout
        #expect(l.device.sizeClass.horizontal == .regular)
        #expect(l.columns.allSatisfy { $0.sizeClass.horizontal == .compact })   // thirds of 951 pt
    }

    /// Seed 000: "the trailing-most column also decides toolbarVerticalBehavior for a split view";
    /// duo-facts §2: "TabView the selected tab".
    @Test("opting out is decided by the detail column of a split view and by the selected tab of a tab view")
    func optOutResolution() throws {
        let detailOut = try app(#"{"name": "T", "root": {"kind": "splitView", "id": "sv", "sidebar": {"id": "side", "toolbar": []}, "detail": {"id": "det", "verticalBehavior": "disabled", "toolbar": [{"id": "x", "title": "X", "symbol": "x"}]}}}"#)
        #expect(try engine(detailOut, Pose_.innerLandscape).layout.barAxis == .horizontal)
        let sidebarOut = try app(#"{"name": "T", "root": {"kind": "splitView", "id": "sv", "sidebar": {"id": "side", "verticalBehavior": "disabled", "toolbar": []}, "detail": {"id": "det", "toolbar": [{"id": "x", "title": "X", "symbol": "x"}]}}}"#)
        #expect(try engine(sidebarOut, Pose_.innerLandscape).layout.barAxis == .vertical)
        let tabs = builtin("tabs")
        #expect(try engine(tabs, [.select(tab: "profile")]).layout.barAxis == .horizontal)
        let back = try engine(tabs, [.select(tab: "profile"), .select(tab: "browse")]).layout
        #expect(back.barAxis == .vertical)
        #expect(back.hasDiagnostic("inconsistentOptOut", "tabs"))
    }

    /// Seed 000: the inspector "presents as a trailing column in a horizontally regular size class
    /// and adapts to a sheet in a compact one … on the outer display, or when the split view is
    /// collapsed, it appears as a sheet." "inspectors don't receive their own [bar] when expanded".
    @Test("the inspector is a trailing column on the inner display and a sheet on the outer; its bar is always horizontal")
    func inspector() throws {
        let inner = try engine(builtin("split"), Pose_.innerLandscape + [.inspector(presented: true)]).layout
        #expect(inner.inspector?.presentation == .column)
        let innerBar = try #require(inner.bar(.inspector))
        #expect(innerBar.axis == .horizontal)
        #expect(inner.bars.filter { $0.axis == .vertical }.count == 1)
        let column = try #require(inner.inspector).frame
        #expect(column.maxX == 951 - 84)   // beside the detail's vertical bar, trailing
        let outer = try engine(builtin("split"), [.inspector(presented: true)]).layout
        #expect(outer.inspector?.presentation == .sheet)
        #expect(try #require(outer.bar(.inspector)).axis == .horizontal)
    }

    /// Seed 000: "On the iPhone Duo inner display, Apple lets you opt into a sidebar … with the
    /// sidebarAdaptable style."
    @Test("sidebarAdaptable with sidebar placement shows a sidebar on the inner display and tabs in the bar on the outer")
    func sidebar() throws {
        let inner = try engine(builtin("sidebar"), Pose_.innerLandscape).layout
        let side = try #require(inner.bar(.sidebar))
        #expect(side.items.map(\.id) == ["home", "favorites", "places", "library"])
        #expect(try #require(inner.verticalBar).items.allSatisfy { !["home", "favorites"].contains($0.id) })
        let outer = try engine(builtin("sidebar"), []).layout
        #expect(outer.bar(.sidebar) == nil)
        #expect(try #require(outer.verticalBar).items.contains { $0.id == "home" })
    }
}

/// Rule 9: sheets.
@Suite struct SheetRuleTests {
    func sheet(_ id: String, _ pose: [Event]) throws -> Layout {
        try engine(builtin("tabs"), pose + [.present(sheet: id)]).layout
    }

    /// Seed 001: "Outer display: the sheet's toolbar moves into a vertical bar."
    @Test("on the outer display a sheet's bar is vertical", arguments: ["filters", "trailInfo", "photos"])
    func outer(id: String) throws {
        let l = try sheet(id, [])
        #expect(l.sheet?.axis == .vertical)
        #expect(try #require(l.bars.first { $0.role == .sheet }).axis == .vertical)
    }

    /// Seed 002: "On the inner display, sheets are centered and keep horizontal bars. A sheet
    /// placed on the trailing side gets a vertical bar; one placed on the leading side doesn't."
    @Test("on the inner display: centered and leading sheets horizontal, trailing vertical",
          arguments: [("filters", Axis.horizontal), ("photos", .horizontal), ("trailInfo", .vertical)])
    func inner(id: String, axis: Axis) throws {
        let l = try sheet(id, Pose_.innerLandscape)
        #expect(l.sheet?.axis == axis)
        if id == "filters" {
            let f = try #require(l.sheet).frame
            #expect(abs(f.x + f.w / 2 - 951 / 2) < 1)
        }
    }

    /// Seed 001: "Partly folded: the sheet slides off the fold."
    @Test("partly folded, a sheet slides off the fold", arguments: ["filters", "trailInfo", "photos"])
    func offTheFold(id: String) throws {
        for pose in [Pose_.partlyOpenLandscape, [Event.hinge(angle: 90)]] {
            let l = try sheet(id, pose)
            let fold = try #require(l.regions.first { $0.kind == .division })
            #expect(!(try #require(l.sheet)).frame.intersects(fold.frame))
        }
    }

    /// Seed 001: "Turn it off inside the sheet with .toolbarVerticalBehavior(.disabled) … The sheet
    /// then stops just short of the front camera, and the status bar moves."
    @Test("a sheet that opts out keeps horizontal bars and stops short of the camera")
    func disabledSheet() throws {
        let l = try sheet("about", [])
        #expect(l.sheet?.axis == .horizontal)
        let island = try #require(l.regions.first { $0.kind == .dynamicIsland })
        #expect(try #require(l.sheet).frame.y > island.frame.maxY)
        let status = try #require(l.regions.first { $0.kind == .statusBar })
        #expect(status.frame.w == l.device.width)   // the status bar moved out of the column
        #expect(l.hasDiagnostic("singleControlSheet") == false)
    }

    @Test("a one-control sheet with a vertical bar gets advice to opt out")
    func singleControl() throws {
        let l = try engine(builtin("split"), [.present(sheet: "shareSheet")]).layout
        #expect(l.hasDiagnostic("singleControlSheet", "shareSheet"))
    }
}

/// Rule 10: background, safe area, margins.
@Suite struct InsetRuleTests {
    /// Seed 002: "Vertical bars have no scroll-edge effect and only get a background when Reduce
    /// Transparency is on."
    @Test("Reduce Transparency gives the vertical bar an opaque background, otherwise none")
    func background() throws {
        #expect(try #require(try engine(builtin("tabs"), []).layout.verticalBar).background == false)
        #expect(try #require(try engine(builtin("tabs"), [.reduceTransparency(enabled: true)]).layout.verticalBar).background == true)
    }

    /// Seed 000: "vertical bars provide leading and trailing insets rather than top and bottom
    /// ones"; duo-facts §6: 84 pt side inset; margins 84 on the bar side, 20 on the other.
    @Test("vertical bars add an 84 pt side inset and asymmetric margins, never a top or bottom inset")
    func insets() throws {
        let noTitle = try stackApp(title: nil, toolbar: #"{"id": "a", "title": "A", "symbol": "a"}"#)
        let l = try engine(noTitle, []).layout
        #expect(l.safeArea == Insets(top: 0, leading: 0, bottom: 34, trailing: 84))
        #expect(l.layoutMargins.leading == 20 && l.layoutMargins.trailing == 84)
        let left = try engine(noTitle, Pose_.outerLandscapeRight).layout
        #expect(left.safeArea.leading == 84 && left.safeArea.trailing == 0)
        #expect(left.layoutMargins.leading == 84 && left.layoutMargins.trailing == 20)
        // duo-facts §6: outer portrait content 382×562 with the title row.
        let titled = try engine(try stackApp(toolbar: #"{"id": "a", "title": "A", "symbol": "a"}"#), []).layout
        #expect(titled.device.width - titled.safeArea.leading - titled.safeArea.trailing == 382)
        #expect(titled.device.height - titled.safeArea.top - titled.safeArea.bottom == 562)
    }
}
