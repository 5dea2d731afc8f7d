/// Builds a layout from scratch: profile + app + state → Layout. Pure and
/// deterministic. `Engine` keeps one builder and builds again with it (`rebuild`),
/// reusing what earlier builds computed; `LayoutBuilder.build` builds with nothing
/// remembered and is the reference the incremental path is tested against.
struct LayoutBuilder: Sendable {
    let p: DeviceProfile
    /// Set by the engine between builds (a new manifest, the state, the geometry and scene).
    var app: App
    var state: DeviceState
    var g: ScreenGeometry
    var scene: Scene

    var regions: [Region] = []
    var bars: [Bar] = []
    /// This build's notes, compared one by one with the last build's as they are made: while
    /// they are the same nothing is copied, and the layout takes the last build's array.
    var diagnostics = Reused<Diagnostic>([], capacity: 8)
    /// What the last build made, read by this one and then replaced in place. A build from
    /// scratch has an empty memo (every lookup misses) and remembers nothing (`remembers`
    /// false). Not optional, so lookups read it in place: binding an optional copied it at
    /// every use.
    var remembers = false
    var memo = BuildMemo()
    /// The horizontal fits of the last build in the order it fitted its bars, then this
    /// build's as far as it got (`horizontalFitted`): each position holds the last build's
    /// fit until this build's replaces it, so the next build looks at the same position first.
    var horizontalFits: [BuildMemo.Horizontal] = []
    var horizontalFitted = 0
    /// How many of `memo.columns` are this build's (as `horizontalFitted`).
    var columnsFitted = 0
    /// What earlier builds computed (see `BuildMemo.Pools`), and the tab view's opt-out note,
    /// which reads the manifest alone.
    var pools = BuildMemo.Pools()
    var tabViewNotes: BuildMemo.TabViewNotes?
    /// The last build's primary screen, at `primaryIndex` in `primaryIn` (the app's screens,
    /// held so no other array can have their address while it is kept), moved into the next
    /// build that shows it: a copy out of the app retained (and later released) each of its
    /// strings and arrays. One slot, beside the memo.
    var lastPrimary: Screen?
    var primaryIndex = -1
    var primaryIn: [Screen] = []

    static func build(profile: DeviceProfile, app: App, state: DeviceState) -> Layout {
        let g = ScreenGeometryRule.geometry(profile: profile, state: state)
        var b = LayoutBuilder(p: profile, app: app, state: state, g: g, scene: Scene(app: app, ui: state.ui, geometry: g))
        return b.run()
    }

    /// Builds for the current `state`, `g` and `scene`, reusing what the last build fitted
    /// and derived where its inputs are unchanged, and leaves this build's in `memo` for the
    /// next. The builder stays: nothing of it is copied in or destroyed per build.
    mutating func rebuild() -> Layout {
        memo.readReduceTransparency = false
        horizontalFitted = 0
        columnsFitted = 0
        // Moved, never copied: storage emptied for filling.
        swap(&bars, &memo.spare.bars)
        return run()
    }

    /// The layout's bars and diagnostics: the last build's arrays when they came out equal
    /// (see `BuildMemo.settled`, `Reused`), and what this build's layout shows, for the next build.
    mutating func settle(custom: [CustomInfo], floating: [FloatingInfo]) -> BuildMemo.Built {
        guard remembers else { return .init(bars: bars, custom: custom, floating: floating, diagnostics: diagnostics.array) }
        let last = memo.built.bars
        let built = BuildMemo.Built(
            bars: BuildMemo.settled(&bars, last, spare: &memo.spare.bars, same: Bar.sameContent),
            custom: custom, floating: floating,
            diagnostics: diagnostics.array)
        memo.built = built
        return built
    }

    /// Fits a horizontal bar, or takes an earlier fit with the same inputs: the last build's
    /// at this position first (`horizontalFits`), then one in the memo's pool (a tab switched
    /// back, a fold undone). A fit whose bar only moved up or down is taken moved to the new
    /// band. The last build's fit is checked and moved where it lies, and this build's fit
    /// takes its place: a hit copies no entry and retains nothing but the output it returns.
    mutating func fitHorizontal(_ input: consuming HorizontalBarFitter.Input) -> HorizontalBarFitter.Output {
        // The fitter (which holds a copy of the profile) is made only when a fit runs.
        let free = HorizontalBarFitter.freeInterval(input)
        guard remembers else { return HorizontalBarFitter(profile: p, input: consume input).fit(free: free) }
        let k = horizontalFitted
        horizontalFitted += 1
        let bandY = input.band.y, itemY = HorizontalBarFitter.itemY(band: input.band, profile: p)
        if k < horizontalFits.count, let output = horizontalFits.withUnsafeMutableBufferPointer({ fits -> HorizontalBarFitter.Output? in
            let fit = fits.baseAddress! + k
            guard BuildMemo.Horizontal.matches(fit, input, free: free) else { return nil }
            fit.pointee.move(toBandY: bandY, itemY: itemY)
            return fit.pointee.output
        }) {
            return output
        }
        var fit: BuildMemo.Horizontal
        if let i = pools.horizontal.firstIndex(where: { BuildMemo.Horizontal.matches($0, input, free: free) }) {
            fit = pools.horizontal.entries[i]
            fit.move(toBandY: bandY, itemY: itemY)
        } else {
            fit = .init(input, free: free, output: HorizontalBarFitter(profile: p, input: copy input).fit(free: free))
            pools.horizontal.add(fit)
        }
        let output = fit.output
        if k < horizontalFits.count { horizontalFits[k] = consume fit } else { horizontalFits.append(consume fit) }
        return output
    }

    /// Fits a vertical column, or takes an earlier fit with the same inputs (as `fitHorizontal`).
    mutating func fitColumn(_ input: consuming ColumnFitter.Input) -> ColumnFitter.Output {
        var fitter = ColumnFitter(profile: p, input: copy input)
        let free = fitter.freeInterval()
        guard remembers else { return fitter.fit(free: free) }
        let k = columnsFitted
        columnsFitted += 1
        // The last build's fit at this position stays where it is when it matches.
        if k < memo.columns.count, memo.columns[k].matches(input, free: free) { return memo.columns[k].output }
        let output: ColumnFitter.Output
        if let i = pools.columns.firstIndex(where: { $0.pointee.matches(input, free: free) }) {
            output = pools.columns.entries[i].output
        } else {
            output = fitter.fit(free: free)
            pools.columns.add(.init(input: copy input, free: free, output: output))
        }
        let fit = BuildMemo.Column(input: consume input, free: free, output: output)
        if k < memo.columns.count { memo.columns[k] = fit } else { memo.columns.append(fit) }
        return output
    }

    // MARK: - The pass

    mutating func run() -> Layout {
        // One allocation each rather than one per doubling as they fill.
        if bars.capacity < 8 { bars.reserveCapacity(8) }
        diagnostics = Reused(remembers ? memo.built.diagnostics : [], capacity: 8)
        // The primary screen, moved out of `lastPrimary` when that is this one.
        let primary: Screen
        if remembers, primaryIndex == scene.primary, BuildMemo.identical(primaryIn, app.screens), let kept = lastPrimary.take() {
            primary = kept
        } else {
            primary = app.screens[scene.primary]
        }
        let preferredEdge: HorizontalEdge? = g.verticalPossible ? BarSideRule.edge(for: g.appSide, direction: g.direction) : nil

        // Areas: the window, less a tab sidebar, split into columns.
        var contentArea = g.window
        var sidebarFrame: Rect?
        if scene.sidebarTabs {
            let w = min(p.sidebarWidth, g.window.w / 2)
            let onLeft = g.direction == .ltr
            sidebarFrame = Rect(x: onLeft ? g.window.x : g.window.maxX - w, y: 0, w: w, h: g.height)
            contentArea = Rect(x: onLeft ? g.window.x + w : g.window.x, y: 0, w: g.window.w - w, h: g.height)
        }
        var columnFrames: [Rect] = []
        if !scene.columns.isEmpty {
            let n = Double(scene.columns.count)
            let w = contentArea.w / n
            for i in 0..<scene.columns.count {
                let slot = g.direction == .ltr ? Double(i) : n - 1 - Double(i)
                columnFrames.append(Rect(x: contentArea.x + slot * w, y: 0, w: w, h: g.height))
            }
        }
        let primaryArea = columnFrames.last ?? contentArea
        let vertical = OptOutRule.barsVertical(geometry: g, behavior: primary.verticalBehavior, area: primaryArea)
        if g.verticalPossible, primary.verticalBehavior != .disabled, !vertical {
            note(.detailAwayFromBarEdge, primary.id,
                 "the detail column does not sit along the \(g.appSide.rawValue) edge that holds the vertical bar, so its items stay horizontal")
        }

        // Reserved regions that do not depend on the bars.
        let sheetDisabledOnOuter: Bool = {
            guard let ref = scene.sheet, g.display == .outer else { return false }
            return app.screens[ref.screen].sheets[ref.sheet].verticalBehavior == .disabled
        }()
        regions = ReservedRegionRule.statusRegions(g, verticalStatus: vertical && !sheetDisabledOnOuter,
                                                   liveActivities: state.liveActivities, profile: p)
        if let d = ReservedRegionRule.division(g, pose: state.pose, profile: p) { regions.append(d) }
        if let k = ReservedRegionRule.keyboard(g) { regions.append(k) }
        if g.keyboardClamped {
            note(.keyboardClamped, "keyboard", "the reported keyboard height was clamped to \(Int(ScreenGeometryRule.maxKeyboardShare * 100))% of the screen height")
        }
        // Tabs that go with the primary screen's bars.
        var tabs: [Tab] = []
        var tabBarOwner = (container: "", bar: "")
        if let tv = scene.tabView, case .tabView(let spec) = app.containers[tv], !scene.sidebarTabs {
            tabs = spec.tabs
            tabBarOwner = (spec.id, spec.barIds.tabBar)
        }

        // The bottom stack (keyboard accessory, then horizontal toolbar and tab bar) rests on
        // the keyboard or the home indicator, and never on the fold: when it would cross a
        // horizontal fold it sits above it instead.
        let accessoryShown = state.keyboardVisible && !primary.keyboardAccessory.isEmpty
        let accessoryHeight = accessoryShown ? p.accessoryBarHeight : 0
        // The screens on show are the columns, or the primary screen alone.
        let horizontalToolbar = scene.columns.isEmpty
            ? !vertical && primary.toolbar.hasBottomItem
            : scene.columns.contains { s in (s != scene.primary || !vertical) && app.screens[s].toolbar.hasBottomItem }
        let bottomBarsHeight = (horizontalToolbar ? p.toolbarHeight : 0) + (!vertical && !tabs.isEmpty ? p.tabBarHeight : 0)
        var floor = state.keyboardVisible ? g.height - g.keyboardHeight : g.height - p.homeIndicatorHeight
        if let fold = regions.first(where: { $0.kind == .division }), fold.frame.w >= g.width,
           floor - accessoryHeight - bottomBarsHeight < fold.frame.maxY, floor > fold.frame.y {
            floor = fold.frame.y
        }
        let bottomLimit = floor - accessoryHeight

        // Pinned PiP docks in the bottom corner on the bar side, over the bars' band: it takes
        // length from a vertical bar and width from horizontal bottom bars (seed 003: space runs
        // short "when other interface elements appear, like the keyboard, or Picture in Picture").
        let pipBottom = max(g.height - bottomLimit, p.homeIndicatorHeight)
        if let pip = ReservedRegionRule.pip(g, active: state.pipActive, bottomInset: pipBottom, profile: p) { regions.append(pip) }

        // Bars: sidebar, the non-primary split columns, then the primary screen.
        if let sidebarFrame, let tv = scene.tabView, case .tabView(let spec) = app.containers[tv] {
            layoutSidebar(spec, frame: sidebarFrame, bottomLimit: bottomLimit)
        }
        for (i, screen) in scene.columns.enumerated() where screen != scene.primary {
            _ = layoutHorizontal(app.screens[screen], area: columnFrames[i], back: false, tabs: [], tabBarOwner: ("", ""), bottomLimit: bottomLimit)
        }
        // The inspector is placed first: as a column it narrows the detail's horizontal bars.
        var inspectorInfo: InspectorInfo?
        if scene.inspector, primary.inspector != nil {
            inspectorInfo = InspectorInfo(presentation: InspectorRule.presentation(window: g.sizeClass, collapsed: scene.collapsed),
                                          frame: .zero)
            inspectorInfo!.frame = inspectorFrame(inspectorInfo!.presentation, area: primaryArea, vertical: vertical)
        }
        let inspectorColumn = inspectorInfo?.presentation == .column ? inspectorInfo?.frame : nil
        var titleRow = false
        if vertical {
            titleRow = layoutVertical(primary, area: primaryArea, back: scene.back, tabs: tabs,
                                      edge: preferredEdge ?? .trailing, beside: inspectorColumn)
        } else {
            titleRow = layoutHorizontal(primary, area: primaryArea, back: scene.back, tabs: tabs, tabBarOwner: tabBarOwner,
                                        bottomLimit: bottomLimit, beside: inspectorColumn)
        }

        // Inspector bar, sheet, keyboard accessory.
        if let info = inspectorInfo, let items = primary.inspector {
            let band = Rect(x: info.frame.x, y: info.presentation == .column ? p.statusBarHeight : info.frame.y, w: info.frame.w, h: p.navigationBarHeight)
            addHorizontalPanelBar(id: primary.barIds.inspector, container: primary.id, role: .inspector, band: band, items: items)
        }
        var sheetInfo: SheetInfo?
        if let ref = scene.sheet {
            sheetInfo = layoutSheet(app.screens[ref.screen].sheets[ref.sheet])
        }
        if accessoryShown {
            // Beside a vertical bar the accessory spans the content, so the column keeps its length.
            var band = Rect(x: g.window.x, y: bottomLimit, w: g.window.w, h: p.accessoryBarHeight)
            if vertical {
                band = Rect(x: g.appSide == .right ? primaryArea.x : primaryArea.x + p.columnWidth, y: bottomLimit,
                            w: primaryArea.w - p.columnWidth, h: p.accessoryBarHeight)
            }
            layoutAccessory(primary, band: band)
        }

        // Safe area and margins (rule 10): a vertical bar adds a side inset, never top or bottom.
        let keyboardBottom = state.keyboardVisible ? g.height - bottomLimit : 0
        var safe = Insets()
        var margins = Insets()
        let barEdge = BarSideRule.edge(for: g.appSide, direction: g.direction)
        if vertical {
            safe.top = titleRow ? p.statusBarHeight + p.navigationBarHeight : 0
            safe.bottom = max(p.homeIndicatorHeight, keyboardBottom)
            if barEdge == .leading { safe.leading = p.columnWidth } else { safe.trailing = p.columnWidth }
            margins = Insets(top: safe.top, leading: barEdge == .leading ? p.columnWidth : p.layoutMarginOtherSide,
                             bottom: safe.bottom, trailing: barEdge == .trailing ? p.columnWidth : p.layoutMarginOtherSide)
        } else {
            safe.top = p.statusBarHeight + (titleRow ? p.navigationBarHeight : 0)
            safe.bottom = max(p.homeIndicatorHeight + bottomBarsHeight, keyboardBottom + bottomBarsHeight)
            margins = Insets(top: safe.top, leading: p.layoutMarginOtherSide, bottom: safe.bottom, trailing: p.layoutMarginOtherSide)
        }

        // Columns. A column reports an edge only when it holds the vertical bar: in
        // right-to-left the detail column mirrors away from the bar's side and stays horizontal.
        let columnEdge = vertical ? preferredEdge : nil
        var columns: [ColumnInfo] = []
        for (i, screen) in scene.columns.enumerated() {
            let frame = scene.collapsed ? g.window : columnFrames[i]
            let sizeClass = scene.collapsed ? g.sizeClass : SizeClassRule.column(width: frame.w, window: g.sizeClass, profile: p)
            columns.append(ColumnInfo(id: app.screens[screen].id, frame: frame, sizeClass: sizeClass,
                                      verticalBarEdge: screen == scene.primary ? columnEdge : nil))
        }
        if let sidebarFrame, let tv = scene.tabView {
            columns.insert(ColumnInfo(id: app.containers[tv].id, frame: sidebarFrame,
                                      sizeClass: SizeClassRule.column(width: sidebarFrame.w, window: g.sizeClass, profile: p),
                                      verticalBarEdge: nil), at: 0)
            if scene.columns.isEmpty {
                columns.append(ColumnInfo(id: primary.id, frame: contentArea,
                                          sizeClass: SizeClassRule.column(width: contentArea.w, window: g.sizeClass, profile: p),
                                          verticalBarEdge: columnEdge))
            }
        }

        let custom = layoutCustomBars(primary, vertical: vertical, preferredEdge: preferredEdge, area: primaryArea)
        let floating = layoutFloating(primary, area: primaryArea, safe: safe)
        manifestDiagnostics()
        let built = settle(custom: custom, floating: floating)
        if remembers {
            // Fits past this build's last are the last build's: gone.
            if horizontalFits.count > horizontalFitted { horizontalFits.removeLast(horizontalFits.count - horizontalFitted) }
            if memo.columns.count > columnsFitted { memo.columns.removeLast(memo.columns.count - columnsFitted) }
            primaryIndex = scene.primary
            primaryIn = app.screens
            lastPrimary = consume primary
        }

        return Layout(
            device: DeviceInfo(pose: state.pose, display: g.display, orientation: g.orientation, layoutDirection: g.direction,
                               width: g.width, height: g.height, sizeClass: g.sizeClass, window: g.window),
            barAxis: vertical ? .vertical : .horizontal,
            verticalBarEdge: preferredEdge,
            verticalBarSide: g.verticalPossible ? g.appSide : nil,
            safeArea: safe, layoutMargins: margins, regions: regions, bars: built.bars, columns: columns,
            sheet: sheetInfo, inspector: inspectorInfo, custom: built.custom, floating: built.floating, diagnostics: built.diagnostics)
    }

    /// The menu's ids for the bar appended next: the last build's array for its bar at this
    /// position when that lists the same ids, else a new one.
    func overflowIds(_ menu: OverflowMenu) -> [String] {
        let position = bars.count
        if remembers, let earlier = memo.built.bars.withUnsafeBufferPointer({ position < $0.count ? $0[position].overflow : nil }),
           menu.lists(earlier) {
            return earlier
        }
        return menu.ids
    }

    /// The one place the build reads `reduceTransparency` (only vertical bars show it), so
    /// the memo can tell the engine whether a toggle of it can change this layout.
    mutating func readReduceTransparency() -> Bool {
        memo.readReduceTransparency = true
        return state.reduceTransparency
    }

    mutating func note(_ code: Diagnostic.Code, _ subject: String, _ message: String) {
        diagnostics.append(Diagnostic(code: code, subject: subject, message: message))
    }

    /// Notes an earlier build made for the same inputs, again: one by one (`+=` cost more for
    /// the few a piece has, and as much for none).
    mutating func noteAgain(_ notes: [Diagnostic]) {
        notes.withUnsafeBufferPointer { all in
            for i in all.indices { diagnostics.append(all.baseAddress! + i) }
        }
    }
}

extension Array where Element == Item {
    // Each item read in place: `contains(where:)` copied each one (retaining its strings) to look at one field.

    var hasBottomItem: Bool {
        withUnsafeBufferPointer { items in
            for i in items.indices where items[i].placement.isBottom { return true }
            return false
        }
    }

    var hasBadgedItem: Bool {
        withUnsafeBufferPointer { items in
            for i in items.indices where items[i].badge != nil { return true }
            return false
        }
    }
}
