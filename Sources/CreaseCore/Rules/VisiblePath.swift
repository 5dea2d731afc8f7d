/// Which containers are on screen: an optional root tab view, then the navigation
/// stack or split view the user is looking at. Manifests cannot nest tab views, so
/// this path is at most two containers deep.
public struct VisiblePath: Sendable, Equatable {
    /// The root tab view and its selected tab, if the root is a tab view.
    public var tabView: Int?
    public var selectedTab: Int
    /// The stack or split view inside it (or the root itself).
    public var inner: Int

    public init(app: App, ui: UIState) {
        if case .tabView(let t) = app.containers[app.root] {
            tabView = app.root
            selectedTab = ui.selectedTab[app.root]
            inner = t.tabs[selectedTab].content
        } else {
            tabView = nil
            selectedTab = 0
            inner = app.root
        }
    }

    /// The screen whose toolbar and inspector are in play: the top of the stack, or the
    /// detail column of a split view (the trailing-most column decides, seed 000).
    public func primaryScreen(app: App, ui: UIState) -> Int {
        switch app.containers[inner] {
        case .navigationStack(let s): ui.pushed[inner].last ?? s.screens[0]
        case .splitView(let s): s.detail
        case .tabView: preconditionFailure("manifest validation forbids nested tab views")
        }
    }

    /// Screens currently visible in some column, in leading-to-trailing order.
    public func visibleScreens(app: App, ui: UIState) -> [Int] {
        switch app.containers[inner] {
        case .navigationStack: [primaryScreen(app: app, ui: ui)]
        case .splitView(let s): [s.sidebar] + (s.content.map { [$0] } ?? []) + [s.detail]
        case .tabView: []
        }
    }
}
