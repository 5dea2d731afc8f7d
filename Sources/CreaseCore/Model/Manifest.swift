/// The app manifest (contract section 3), compiled into index-addressed arrays so the
/// engine never looks anything up by hashing and never depends on iteration order.
public struct App: Sendable, Equatable {
    public var name: String
    /// Index into `containers` of the root container.
    public var root: Int
    public var containers: [Container]
    public var screens: [Screen]
    /// The interface orientations the app supports, in the manifest's order: what the outer
    /// display grants (`InterfaceOrientationRule`). By default all but upside down, as on iPhone.
    public var supportedOrientations: [Orientation]
    public static let defaultSupportedOrientations: [Orientation] = [.portrait, .landscapeLeft, .landscapeRight]
    /// The manifest exactly as given, re-encoded canonically (traces embed it).
    public var source: JSONValue

    public static func == (a: App, b: App) -> Bool { a.source == b.source }
}

public enum TabViewStyle: String, Sendable, CaseIterable { case automatic, sidebarAdaptable }
public enum TabBarPlacement: String, Sendable, CaseIterable { case automatic, sidebar }
public enum CompressionBehavior: String, Sendable, CaseIterable { case automatic, prefersTabBar, prefersToolbarItems }
public enum VerticalBehavior: String, Sendable, CaseIterable { case automatic, disabled }
public enum AxisBehavior: String, Sendable, CaseIterable { case automatic, horizontalOnly, verticalPreferred }
public enum ItemKind: String, Sendable, CaseIterable { case button, spacer, flexibleSpacer }
public enum SheetPlacement: String, Sendable, CaseIterable { case automatic, center, leading, trailing }
public enum Detent: String, Sendable, CaseIterable { case medium, large }
public enum CustomBarKind: String, Sendable, CaseIterable { case tabBar, toolbar, navigationBar }
public enum VerticalEnd: String, Sendable, CaseIterable { case top, bottom }

public enum ItemPlacement: String, Sendable, CaseIterable {
    case automatic, primaryAction, secondaryAction, confirmationAction, cancellationAction, destructiveAction,
         navigation, principal, topBarLeading, topBarTrailing, topBarPinnedTrailing, bottomBar, status

    /// Bottom placements sit below the gap in a vertical bar and in the bottom toolbar otherwise.
    public var isBottom: Bool { self == .bottomBar || self == .status }
}

public enum Container: Sendable {
    case tabView(TabViewSpec)
    case navigationStack(StackSpec)
    case splitView(SplitSpec)

    public var id: String {
        switch self {
        case .tabView(let t): t.id
        case .navigationStack(let s): s.id
        case .splitView(let s): s.id
        }
    }
}

public struct TabViewSpec: Sendable {
    public var id: String { didSet { barIds = (tabBar: "\(id).tabBar", sidebar: "\(id).sidebar") } }
    public var style: TabViewStyle
    public var placement: TabBarPlacement
    public var tabs: [Tab]
    public var initialSelection: Int
    /// The ids of its bars, made once with the manifest (see `ScreenBarIds`).
    public private(set) var barIds: (tabBar: String, sidebar: String)

    public init(id: String, style: TabViewStyle, placement: TabBarPlacement, tabs: [Tab], initialSelection: Int) {
        self.id = id
        self.style = style
        self.placement = placement
        self.tabs = tabs
        self.initialSelection = initialSelection
        barIds = (tabBar: "\(id).tabBar", sidebar: "\(id).sidebar")
    }
}

public struct Tab: Sendable {
    public var id: String
    public var title: String
    public var symbol: String?
    public var badge: Int?
    /// Index into `App.containers`.
    public var content: Int
}

public struct StackSpec: Sendable {
    public var id: String
    /// Indices into `App.screens`; the first is the root.
    public var screens: [Int]
}

public struct SplitSpec: Sendable {
    public var id: String
    public var sidebar: Int
    public var content: Int?
    public var detail: Int
}

/// The ids of the bars a screen can have. Made once, when the manifest is decoded (and
/// again if `id` changes): a relayout reuses these strings rather than building them, and
/// comparing a layout with the last one finds them identical without reading them.
public struct ScreenBarIds: Sendable {
    public let navigation, toolbar, vertical, inspector, keyboardAccessory: String

    init(screen id: String) {
        navigation = "\(id).navigation"
        toolbar = "\(id).toolbar"
        vertical = "\(id).vertical"
        inspector = "\(id).inspector"
        keyboardAccessory = "\(id).keyboardAccessory"
    }
}

public struct Screen: Sendable {
    public var id: String { didSet { barIds = ScreenBarIds(screen: id) } }
    public private(set) var barIds: ScreenBarIds
    public var title: String? { didSet { titleLength = title?.count } }
    /// The title's length in characters, counted once (a count walks the string).
    public private(set) var titleLength: Int?
    public var toolbar: [Item]
    public var overflowMenu: [Item]
    public var compression: CompressionBehavior
    public var verticalBehavior: VerticalBehavior
    public var sheets: [Sheet]
    public var inspector: [Item]?
    public var keyboardAccessory: [Item]
    public var customBars: [CustomBar]
    public var floatingButtons: [FloatingButton]

    public init(id: String, title: String?, toolbar: [Item], overflowMenu: [Item], compression: CompressionBehavior,
                verticalBehavior: VerticalBehavior, sheets: [Sheet], inspector: [Item]?, keyboardAccessory: [Item],
                customBars: [CustomBar], floatingButtons: [FloatingButton]) {
        self.id = id
        barIds = ScreenBarIds(screen: id)
        self.title = title
        titleLength = title?.count
        self.toolbar = toolbar
        self.overflowMenu = overflowMenu
        self.compression = compression
        self.verticalBehavior = verticalBehavior
        self.sheets = sheets
        self.inspector = inspector
        self.keyboardAccessory = keyboardAccessory
        self.customBars = customBars
        self.floatingButtons = floatingButtons
    }
}

public struct Item: Sendable {
    public var id: String
    public var title: String?
    public var symbol: String?
    public var placement: ItemPlacement
    public var group: String?
    /// Visibility priority as a rank: low = -1000, automatic = 0, high = 1000, or a custom number.
    public var priority: Double
    public var badge: Int?
    public var customView: Bool
    public var axisBehavior: AxisBehavior
    public var kind: ItemKind

    public var isSpacer: Bool { kind != .button }
}

public struct Sheet: Sendable {
    public var id: String { didSet { barId = "\(id).sheet" } }
    public var placement: SheetPlacement
    public var detents: [Detent]
    public var verticalBehavior: VerticalBehavior
    public var toolbar: [Item]
    /// The id of its bar, made once with the manifest (see `ScreenBarIds`).
    public private(set) var barId: String

    public init(id: String, placement: SheetPlacement, detents: [Detent], verticalBehavior: VerticalBehavior, toolbar: [Item]) {
        self.id = id
        self.placement = placement
        self.detents = detents
        self.verticalBehavior = verticalBehavior
        self.toolbar = toolbar
        barId = "\(id).sheet"
    }
}

public struct CustomBar: Sendable {
    public var id: String
    public var kind: CustomBarKind
    public var edge: VerticalEnd
    public var followsVerticalEdge: Bool
}

/// Where the app anchored a floating button (an extension of the contract: the
/// seeds ask for buttons placed from the safe area, not the screen edge).
public enum FloatingAnchor: String, Sendable, CaseIterable { case safeArea, screenEdge }
public enum FloatingCorner: String, Sendable, CaseIterable { case bottomTrailing, bottomLeading, bottomCenter }

public struct FloatingButton: Sendable {
    public var id: String
    public var size: Double
    public var anchor: FloatingAnchor
    public var corner: FloatingCorner
}

public enum VisibilityPriority {
    public static let low = -1000.0
    public static let automatic = 0.0
    public static let high = 1000.0
}
