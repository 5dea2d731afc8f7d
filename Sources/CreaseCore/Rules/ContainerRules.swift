/// Rule 8, seeds 000 and 002: containers. What the visible containers show, given the display.
public struct Scene: Sendable, Equatable {
    /// The screen whose bars may go vertical and whose inspector is in play.
    public var primary: Int
    /// Whether a back button leads out of the primary screen.
    public var back: Bool
    /// Split-view columns on screen, leading to trailing, with the primary last; empty when not a split view.
    public var columns: [Int]
    /// The split view is collapsed to one stack (device closed).
    public var collapsed: Bool
    /// The tab view on screen and its selected tab.
    public var tabView: Int?
    public var selectedTab: Int
    /// Tabs shown as a sidebar instead of a tab bar.
    public var sidebarTabs: Bool
    public var sheet: UIState.SheetRef?
    public var inspector: Bool

    public init(app: App, ui: UIState, display: Display, portrait: Bool, compactWidth: Bool) {
        let path = VisiblePath(app: app, ui: ui)
        tabView = path.tabView
        selectedTab = path.selectedTab
        sidebarTabs = false
        if let tv = path.tabView, case .tabView(let spec) = app.containers[tv] {
            sidebarTabs = SidebarRule.showsSidebar(spec, display: display)
        }
        collapsed = false
        columns = []
        switch app.containers[path.inner] {
        case .navigationStack(let s):
            primary = ui.pushed[path.inner].last ?? s.screens[0]
            back = !ui.pushed[path.inner].isEmpty
        case .splitView(let s):
            primary = s.detail
            collapsed = SplitColumnRule.collapses(display: display, compactWidth: compactWidth)
            back = collapsed
            columns = collapsed ? [s.detail] : SplitColumnRule.tiledColumns(s, portrait: portrait)
        case .tabView:
            preconditionFailure("manifest validation forbids nested tab views")
        }
        sheet = ui.sheet
        inspector = ui.inspector[primary]
    }
}

/// Seed 000: "When iPhone Duo is closed, NavigationSplitView and UISplitViewController
/// collapse to single-stack navigation, and when open they tile or overlay their
/// columns." Two columns split 50/50 ("the system keeps both columns visible by
/// adjusting their width into an even 50/50 split"); three columns tile in landscape,
/// and in portrait the sidebar overlays (it is not on screen) while content and detail split.
public enum SplitColumnRule {
    /// Closed, or in a compact-width window (a Split View half), the columns collapse.
    public static func collapses(display: Display, compactWidth: Bool) -> Bool { display == .outer || compactWidth }

    public static func tiledColumns(_ s: SplitSpec, portrait: Bool) -> [Int] {
        guard let content = s.content else { return [s.sidebar, s.detail] }
        return portrait ? [content, s.detail] : [s.sidebar, content, s.detail]
    }

    /// Seed 000: "only the detail column participates": it gets the vertical bar only
    /// when it sits along the display edge that holds the bar.
    public static func detailTouchesBarSide(_ frame: Rect, window: Rect, side: Side) -> Bool {
        side == .right ? frame.maxX >= window.maxX - 0.5 : frame.x <= window.x + 0.5
    }
}

/// Seed 000: "On the iPhone Duo inner display, Apple lets you opt into a sidebar …
/// use defaultTabBarPlacement(_:) with the sidebarAdaptable style."
public enum SidebarRule {
    public static func showsSidebar(_ spec: TabViewSpec, display: Display) -> Bool {
        display == .inner && spec.style == .sidebarAdaptable && spec.placement == .sidebar
    }
}

/// Seed 000: the inspector "presents as a trailing column in a horizontally regular
/// size class and adapts to a sheet in a compact one … on the outer display, or when
/// the split view is collapsed, it appears as a sheet." It never gets its own vertical bar.
public enum InspectorRule {
    public static func presentation(window: SizeClassPair, collapsed: Bool) -> InspectorPresentation {
        window.horizontal == .regular && !collapsed ? .column : .sheet
    }
}

/// Opting out: a navigation stack takes it from its top view, a tab view from the
/// selected tab, a split view from its trailing-most column (seed 000, duo-facts §2):
/// all three resolve to the scene's primary screen.
public enum OptOutRule {
    public static func barsVertical(geometry g: ScreenGeometry, behavior: VerticalBehavior, area: Rect) -> Bool {
        g.verticalPossible && behavior != .disabled && SplitColumnRule.detailTouchesBarSide(area, window: g.window, side: g.appSide)
    }
}

extension OptOutRule {
    /// The opt-out a container's root resolves to: a stack's root screen, a split view's detail.
    static func rootBehavior(_ c: Container, app: App) -> VerticalBehavior {
        switch c {
        case .navigationStack(let s): app.screens[s.screens[0]].verticalBehavior
        case .splitView(let s): app.screens[s.detail].verticalBehavior
        case .tabView: .automatic
        }
    }
}
