import Testing
@testable import CreaseCore

/// A screen with ten plain toolbar items and a tab view of four tabs.
func busyTabsApp(compression: String = "automatic", priorities: [String: String] = [:], groups: [String: String] = [:]) throws -> App {
    let items = (1...10).map { i -> String in
        var extra = ""
        if let p = priorities["i\(i)"] { extra += ", \"priority\": \(p)" }
        if let g = groups["i\(i)"] { extra += ", \"group\": \"\(g)\"" }
        return #"{"id": "i\#(i)", "title": "Item \#(i)", "symbol": "s\#(i)"\#(extra)}"#
    }.joined(separator: ", ")
    let tabs = (1...4).map { t in
        #"{"id": "t\#(t)", "title": "Tab \#(t)", "symbol": "t\#(t)", "content": {"kind": "navigationStack", "id": "st\#(t)", "screens": [{"id": "s\#(t)", "title": "S\#(t)", "compression": "\#(compression)", "toolbar": [\#(t == 1 ? items : "")]}]}}"#
    }.joined(separator: ", ")
    return try app(#"{"name": "Busy", "root": {"kind": "tabView", "id": "tv", "tabs": [\#(tabs)]}}"#)
}

/// Rule 6: the column shares its length with the status bar, the island, the keyboard, PiP.
@Suite struct ColumnSpaceRuleTests {
    /// Seed 003: "On the side, they share the height with the status bar and with the Dynamic
    /// Island, which grows when Live Activities arrive."
    @Test("each Live Activity grows the island down the column and pushes items into the overflow menu")
    func liveActivities() throws {
        var visible: [Int] = []
        var islandHeights: [Double] = []
        for count in 0...3 {
            let l = try engine(try busyTabsApp(), Pose_.innerLandscape + [.liveActivities(count: count)]).layout
            visible.append(try #require(l.verticalBar).items.count)
            islandHeights.append(l.regions.first { $0.kind == .dynamicIsland }?.frame.h ?? 0)
            let status = try #require(l.regions.first { $0.kind == .statusBar })
            for item in try #require(l.verticalBar).items { #expect(item.frame.y >= status.frame.maxY) }
        }
        #expect(islandHeights == [0, 36, 72, 108])
        #expect(visible[0] > visible[3])
        #expect(zip(visible, visible.dropFirst()).allSatisfy { $0 >= $1 })
    }

    /// Seed 003: "Space runs short more often on the outer display in landscape … and also when
    /// other interface elements appear, like the keyboard, or Picture in Picture."
    @Test("the keyboard and Picture in Picture take room from the column; no item overlaps them")
    func keyboardAndPip() throws {
        let base = try engine(try busyTabsApp(), Pose_.innerLandscape).layout
        let keyboard = try engine(try busyTabsApp(), Pose_.innerLandscape + [.keyboard(visible: true, height: 300)]).layout
        let pip = try engine(try busyTabsApp(), Pose_.innerLandscape + [.pip(active: true)]).layout
        #expect(try #require(keyboard.verticalBar).items.count < (try #require(base.verticalBar)).items.count)
        #expect(try #require(pip.verticalBar).items.count < (try #require(base.verticalBar)).items.count)
        for l in [keyboard, pip] {
            for item in try #require(l.verticalBar).items {
                for r in l.regions { #expect(!item.frame.intersects(r.frame)) }
            }
        }
    }

    /// Seed 003: "Space runs short more often on the outer display in landscape, simply because
    /// there's less height." duo-facts §6: 44 pt minimum touch target.
    @Test("outer landscape holds fewer items than outer portrait; every target is at least 44 pt")
    func outerLandscape() throws {
        let portrait = try engine(try busyTabsApp(), []).layout
        let landscape = try engine(try busyTabsApp(), Pose_.outerLandscapeRight).layout
        #expect(try #require(landscape.verticalBar).items.count < (try #require(portrait.verticalBar)).items.count)
        for item in try #require(landscape.verticalBar).items { #expect(item.frame.w >= 44 && item.frame.h >= 44) }
    }

    /// duo-facts §4: the fold division is active only while partly folded, 40 pt wide.
    @Test("partly folded, the fold is a 40 pt division across the inner display; flat or closed, none")
    func division() throws {
        let partly = try engine(builtin("tabs"), Pose_.partlyOpenLandscape).layout
        let fold = try #require(partly.regions.first { $0.kind == .division })
        #expect(fold.frame.w == 40 && fold.frame.x == 951 / 2 - 20 && fold.frame.h == 669)
        let portrait = try engine(builtin("tabs"), [.hinge(angle: 90)]).layout
        #expect(try #require(portrait.regions.first { $0.kind == .division }).frame.h == 40)
        #expect(try engine(builtin("tabs"), Pose_.innerLandscape).layout.regions.allSatisfy { $0.kind != .division })
        #expect(try engine(builtin("tabs"), []).layout.regions.allSatisfy { $0.kind != .division })
    }
}

/// Rule 7: overflow and compression.
@Suite struct OverflowRuleTests {
    /// Seed 002: "Items overflow from the bottom up."
    @Test("without priorities, items leave the bar bottom-up into the one system overflow menu")
    func bottomUp() throws {
        let l = try engine(try busyTabsApp(), Pose_.innerLandscape).layout
        let column = try #require(l.verticalBar)
        let shown = column.items.map(\.id).filter { $0.hasPrefix("i") }
        #expect(!shown.isEmpty)
        let overflowed = column.overflow.filter { $0.hasPrefix("i") }
        #expect(!overflowed.isEmpty)
        #expect(shown + overflowed == (1...10).map { "i\($0)" })   // a prefix stays, the rest leaves in order
        #expect(column.items.contains { $0.id == "system.overflow" })
        #expect(l.bars.filter { !$0.overflow.isEmpty }.count == 1)
    }

    /// Seed 003: "the app gives items a visibility priority, high, low, or custom, first to whole
    /// groups, then, if needed, to single items within a group."
    @Test("visibility priority: low leaves first, high stays longest, custom ranks in between; groups first, then items")
    func priorities() throws {
        let l = try engine(try busyTabsApp(priorities: ["i1": "\"low\"", "i10": "\"high\"", "i9": "500"]), Pose_.innerLandscape).layout
        let column = try #require(l.verticalBar)
        #expect(column.overflow.first == "i1")
        #expect(column.items.contains { $0.id == "i10" } && column.items.contains { $0.id == "i9" })
        // A group holding a high item outlives ungrouped automatic items; inside it, its own order applies.
        let grouped = try engine(try busyTabsApp(priorities: ["i2": "\"high\""], groups: ["i1": "g", "i2": "g", "i3": "g"]), Pose_.innerLandscape).layout
        let gcol = try #require(grouped.verticalBar)
        #expect(gcol.items.contains { $0.id == "i2" })
        let lastShownUngrouped = (4...10).map { "i\($0)" }.filter { id in gcol.items.contains { $0.id == id } }
        #expect(lastShownUngrouped.count < 7)
    }

    /// Seed 003: "On a screen people browse … the toolbar compresses first … the tab bar stays
    /// whole … That's the default behavior."
    @Test("by default the toolbar compresses first and the tab bar stays whole, even when no toolbar item is left")
    func defaultCompression() throws {
        let l = try engine(try busyTabsApp(), Pose_.outerLandscapeRight).layout
        #expect(try #require(l.verticalBar).items.filter { $0.id.hasPrefix("i") }.isEmpty)
        let column = try #require(l.verticalBar)
        #expect(column.tabBar == .expanded)
        #expect(["t1", "t2", "t3", "t4"].allSatisfy { id in column.items.contains { $0.id == id } })
        #expect(column.overflow.contains("i10"))
    }

    /// Seed 003: "have the tab bar compress first. It shrinks to a single control … the toolbar
    /// actions people need to finish the task stay visible."
    @Test("prefersToolbarItems shrinks the tab bar to one control, system.tabs, that lists its tabs")
    func tabBarCompressesFirst() throws {
        let browse = try engine(try busyTabsApp(), Pose_.outerLandscapeRight).layout
        let task = try engine(try busyTabsApp(compression: "prefersToolbarItems"), Pose_.outerLandscapeRight).layout
        let column = try #require(task.verticalBar)
        #expect(column.tabBar == .compressed)
        let tabs = try #require(task.item("system.tabs"))
        #expect(tabs.tabs == ["t1", "t2", "t3", "t4"])
        let toolbarShown = { (l: Layout) in l.verticalBar!.items.filter { $0.id.hasPrefix("i") }.count }
        #expect(toolbarShown(task) > toolbarShown(browse))
    }

    /// Issue 2 / seed 003: "when room is still short, the other gives way too."
    @Test("when room is still short, the other bar gives way too")
    func otherGivesWay() throws {
        let l = try engine(try busyTabsApp(compression: "prefersToolbarItems"), Pose_.outerLandscapeRight + [.keyboard(visible: true, height: 150)]).layout
        let column = try #require(l.verticalBar)
        #expect(column.tabBar == .compressed)
        #expect(!column.overflow.filter { $0.hasPrefix("i") }.isEmpty)
    }

    /// duo-facts §2: topBarPinnedTrailing "overflows only when search is active and room runs
    /// out"; `.secondaryAction` items start in overflow; ToolbarOverflowMenu content "always
    /// lives in the overflow menu".
    @Test("pinned items never overflow; secondaryAction and overflowMenu items are always in the menu")
    func pinnedSecondaryDeclared() throws {
        for pose in [Pose_.outerLandscapeRight, Pose_.innerLandscape, Pose_.innerPortrait] {
            let l = try engine(builtin("split"), pose).layout
            #expect(l.item("compose") != nil)
            #expect(l.allOverflow.contains("pin"))
        }
        let tabs = try engine(builtin("tabs"), Pose_.innerLandscape).layout
        #expect(tabs.allOverflow.contains("settings"))
    }

    /// Seed 003: "Compressing isn't removing. An action that leaves the bar stays within reach in
    /// the overflow menu." (The property tests check this over random sequences.)
    @Test("compressing isn't removing: every item of the busy screen is in the bar or the menu, once")
    func compressingIsNotRemoving() throws {
        let l = try engine(try busyTabsApp(compression: "prefersToolbarItems"), Pose_.outerLandscapeRight + [.keyboard(visible: true, height: 200), .liveActivities(count: 3)]).layout
        var places = l.allItemIds + l.allOverflow
        for item in l.bars.flatMap(\.items) { places += item.tabs ?? [] }
        for id in (1...10).map({ "i\($0)" }) + ["t1", "t2", "t3", "t4"] {
            #expect(places.filter { $0 == id }.count == 1, "\(id)")
        }
    }
}

@Suite struct PictureInPictureRuleTests {
    /// Seed 003: space runs short "when other interface elements appear, like the keyboard, or
    /// Picture in Picture when the device is open in portrait."
    @Test("open in portrait, pinned Picture in Picture takes width from the bottom bars and nothing overlaps it")
    func openPortrait() throws {
        let without = try engine(builtin("tabs"), Pose_.innerPortrait).layout
        let with = try engine(builtin("tabs"), Pose_.innerPortrait + [.pip(active: true)]).layout
        let pip = try #require(with.regions.first { $0.kind == .pip })
        let tabBar = try #require(with.bar(.tabBar)), before = try #require(without.bar(.tabBar))
        #expect(tabBar.items.allSatisfy { !$0.frame.intersects(pip.frame) })
        #expect(tabBar.items.map(\.frame.w).max()! < before.items.map(\.frame.w).max()!)
    }
}
