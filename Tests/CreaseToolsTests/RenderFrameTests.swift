import CreaseCore
import Foundation
import Testing
@testable import CreaseTools

/// `crease render`'s frame: every output parsed as XML and checked against the layout it
/// was drawn from.
@Suite struct RenderFrameTests {
    static func engine(_ app: String = "tabs", _ events: [Event]) throws -> Engine {
        var e = Engine(profile: .builtin, app: try #require(BuiltinApps.app(named: app)))
        for event in events { try e.apply(event) }
        return e
    }

    static func draw(_ e: Engine, event: String? = nil) throws -> (svg: String, root: XMLTree) {
        let svg = FrameSVG.render(e.layout, app: e.app, caption: FrameCaption(seq: e.seq, digest: e.digest, event: event))
        return (svg, try XMLTree.parse(svg))
    }

    /// States that between them show every kind of thing a layout holds.
    static let scenes: [(String, String, [Event])] = [
        ("closed portrait", "tabs", []),
        ("half open landscape, keyboard, PiP, Live Activities", "tabs",
         [.hinge(angle: 90), .orientation(.landscapeLeft), .liveActivities(count: 2), .keyboard(visible: true, height: nil), .pip(active: true)]),
        ("open, task tab, compressed tabs, keyboard accessory", "tabs",
         [.hinge(angle: 180), .orientation(.landscapeLeft), .select(tab: "plan"), .keyboard(visible: true, height: nil)]),
        ("trailing sheet, partly folded", "tabs", [.hinge(angle: 90), .present(sheet: "trailInfo")]),
        ("split view, inspector", "split", [.hinge(angle: 180), .orientation(.landscapeLeft), .inspector(presented: true)]),
        ("sidebar, Split View right, rtl", "sidebar", [.hinge(angle: 180), .orientation(.landscapeLeft), .splitView(.right), .layoutDirection(.rtl)]),
    ]

    @Test(arguments: 0..<scenes.count)
    func everyLayoutValueHasItsElement(scene: Int) throws {
        let (name, app, events) = Self.scenes[scene]
        let e = try Self.engine(app, events)
        let layout = e.layout
        let root = try Self.draw(e).root
        #expect(root.name == "svg", "\(name)")
        #expect(root["data-digest"] == Digest.hex(e.digest))

        // True scale: the screen is the device's size in points.
        let screen = try #require(root.first(id: "screen"))
        let face = try #require(screen.all("rect").first { $0["x"] == "0" && $0["y"] == "0" })
        #expect(face["width"] == num(layout.device.width) && face["height"] == num(layout.device.height), "\(name)")

        // One element per bar and per item, in layout order, carrying their ids.
        let bars = root.all("g", class: "bar")
        #expect(bars.map { $0["data-id"] } == layout.bars.map(\.id), "\(name)")
        for (drawn, bar) in zip(bars, layout.bars) {
            #expect(drawn["data-role"] == bar.role.rawValue && drawn["data-axis"] == bar.axis.rawValue, "\(name): \(bar.id)")
            let items = drawn.all("g", class: "item")
            #expect(items.map { $0["data-id"] } == bar.items.map(\.id), "\(name): \(bar.id)")
            #expect(items.map { $0["data-badge"] } == bar.items.map { $0.badge.map(String.init) }, "\(name): \(bar.id)")
        }
        // Regions are drawn in stacking order (the keyboard under the accessory bar, the rest on top).
        #expect(root.all("g", class: "region").compactMap { $0["data-kind"] }.sorted() == layout.regions.map(\.kind.rawValue).sorted(), "\(name)")
        #expect(root.all("g", class: "column").map { $0["data-id"] } == layout.columns.map(\.id), "\(name)")
        #expect(root.all("g", class: "custom").map { $0["data-id"] } == layout.custom.map(\.id), "\(name)")
        #expect(root.all("g", class: "floating").map { $0["data-id"] } == layout.floating.map(\.id), "\(name)")
        #expect(root.all("g", class: "sheet").map { $0["data-id"] } == (layout.sheet.map { [$0.id] } ?? []), "\(name)")
        #expect(root.all("g", class: "inspector").count == (layout.inspector == nil ? 0 : 1), "\(name)")

        // Each overflow menu is listed beside the screen, in menu order.
        let menus = root.all("g", class: "menu")
        let withOverflow = layout.bars.filter { !$0.overflow.isEmpty }
        #expect(menus.map { $0["data-bar"] } == withOverflow.map(\.id), "\(name)")
        for (menu, bar) in zip(menus, withOverflow) {
            #expect(menu.all("g", class: "entry").map { $0["data-id"] } == bar.overflow, "\(name): \(bar.id)")
        }

        // Diagnostics: all listed, numbered, and a callout for each whose subject is drawn.
        let listed = root.all("g", class: "diagnostic")
        #expect(listed.map { $0["data-code"] } == layout.diagnostics.map(\.code.rawValue), "\(name)")
        #expect(listed.map { $0["data-n"] } == layout.diagnostics.indices.map { String($0 + 1) }, "\(name)")
        let catalog = ItemCatalog(app: e.app)
        let anchored = layout.diagnostics.enumerated().filter { DiagnosticAnchor.frame(of: $0.element.subject, in: layout, catalog: catalog) != nil }
        #expect(root.all("g", class: "callout").map { $0["data-n"] } == anchored.map { String($0.offset + 1) }, "\(name)")

        // The legend names every role, both axes and every region kind.
        let legend = try #require(root.first(id: "legend"))
        let kinds = legend.all("g", class: "legend-entry").map { ($0["data-kind"] ?? "", $0.allText) }
        #expect(kinds.filter { $0.0 == "role" }.map(\.1) == Palette.allRoles.map(\.rawValue))
        #expect(kinds.filter { $0.0 == "axis" }.map(\.1) == ["vertical", "horizontal"])
        #expect(kinds.filter { $0.0 == "region" }.map(\.1) == RegionKind.allCases.map(\.rawValue))
    }

    @Test func theScenesCoverWhatTheyClaim() throws {
        let layouts = try Self.scenes.map { try Self.engine($0.1, $0.2).layout }
        let regionKinds = Set(layouts.flatMap { $0.regions.map(\.kind) })
        #expect(regionKinds == Set(RegionKind.allCases))
        #expect(layouts.contains { $0.sheet != nil } && layouts.contains { $0.inspector != nil })
        #expect(layouts.contains { !$0.columns.isEmpty } && layouts.contains { !$0.custom.isEmpty } && layouts.contains { !$0.floating.isEmpty })
        #expect(layouts.contains { $0.bars.contains { $0.items.contains { $0.tabs != nil } } })
        #expect(layouts.contains { $0.device.window.w < $0.device.width })
        #expect(layouts.contains { $0.barAxis == .vertical } && layouts.contains { $0.barAxis == .horizontal })
    }

    @Test func compressedTabsAreListedWithTheirTitles() throws {
        let e = try Self.engine("tabs", [.hinge(angle: 180), .orientation(.landscapeLeft), .select(tab: "plan")])
        let control = try #require(e.layout.bars.flatMap(\.items).first { $0.id == "system.tabs" })
        let root = try Self.draw(e).root
        let cell = try #require(root.all("g", class: "item").first { $0["data-id"] == "system.tabs" })
        #expect(cell["data-tabs"] == control.tabs?.joined(separator: " "))
        let group = try #require(root.all("g", class: "tabs").first)
        let entries = group.all("g", class: "entry")
        #expect(entries.map { $0["data-id"] ?? "" } == control.tabs)
        // Titles come from the manifest, not the layout: tab "plan" is titled "Plan" and has badge 2.
        let plan = try #require(entries.first { $0["data-id"] == "plan" })
        #expect(plan.allText.contains("Plan") && plan.allText.contains("checklist") && plan["data-badge"] == "2")
    }

    @Test func cellsShowWhatTheDeviceShows() throws {
        // Horizontal, fully open: "Edit" shows its title; tabs show symbol and title.
        let e = try Self.engine("tabs", [.hinge(angle: 180)])
        let cells = try Self.draw(e).root.all("g", class: "item")
        let edit = try #require(cells.first { $0["data-id"] == "edit" })
        #expect(edit["data-shows"] == "title" && edit.all("text").map(\.text) == ["Edit"])
        let browse = try #require(cells.first { $0["data-id"] == "browse" })
        #expect(browse["data-shows"] == "symbolAndTitle" && browse.all("text").map(\.text) == ["map", "Browse"])
        let search = try #require(cells.first { $0["data-id"] == "search" })
        #expect(search["data-shows"] == "symbol")
        #expect(search.all("text").map(\.text).joined() == "magnifyingglass")   // broken over lines, never lost
        #expect(search.all("title").first?.text.contains("\"Search\"") == true)
    }

    @Test func titlesAreEscapedAndTheOutputStaysWellFormed() throws {
        let hostile = "Q&A <b>\"quoted\" 'single' \u{01}bell ]]> done"
        let manifest = #"""
        {"name": "Esc & <Apps>", "root": {"kind": "navigationStack", "id": "stack", "screens": [
          {"id": "home", "title": "Home", "toolbar": [
            {"id": "odd&id<1>", "title": "\#(hostile.replacingOccurrences(of: "\u{01}", with: "\\u0001").replacingOccurrences(of: "\"", with: "\\\""))", "symbol": "star", "placement": "topBarTrailing"}]}]}}
        """#
        let app = try App.decode(json: Array(manifest.utf8))
        var e = Engine(profile: .builtin, app: app)
        try e.apply(.hinge(angle: 180))
        let (svg, root) = try Self.draw(e, event: "a <caption> & more")
        #expect(!svg.contains("\u{01}"))
        let cell = try #require(root.all("g", class: "item").first { $0["data-id"] == "odd&id<1>" })
        let tip = try #require(cell.all("title").first?.text)
        #expect(tip.contains(hostile.replacingOccurrences(of: "\u{01}", with: "\u{FFFD}")))
        #expect(root.first(id: "heading")?.allText.contains("a <caption> & more") == true)
    }

    @Test func identicalInputDrawsIdenticalBytes() throws {
        let events: [Event] = [.hinge(angle: 90), .orientation(.landscapeLeft), .present(sheet: "photos"), .keyboard(visible: true, height: nil)]
        let a = try Self.draw(Self.engine("tabs", events)).svg
        // A second engine, built from the manifest text again, reaches the same layout.
        var e = Engine(profile: .builtin, app: try App.decode(json: Array(try #require(BuiltinApps.source(named: "tabs")).utf8)))
        for event in events { try e.apply(event) }
        #expect(try Self.draw(e).svg == a)
        let other = try Self.draw(Self.engine("tabs", events.dropLast())).svg
        #expect(other != a)
    }

    @Test func anItemOutsideItsBarIsMarked() throws {
        var layout = try Self.engine("tabs", [.hinge(angle: 180)]).layout
        let bar = try #require(layout.bars.firstIndex { !$0.items.isEmpty })
        layout.bars[bar].items[0].frame.x = layout.bars[bar].frame.maxX + 10
        let app = try #require(BuiltinApps.app(named: "tabs"))
        let root = try XMLTree.parse(FrameSVG.render(layout, app: app, caption: FrameCaption(seq: 0, digest: 0)))
        let marked = root.all("g", class: "item").filter { $0["data-outside-bar"] == "true" }
        #expect(marked.map { $0["data-id"] } == [layout.bars[bar].items[0].id])
    }
}
