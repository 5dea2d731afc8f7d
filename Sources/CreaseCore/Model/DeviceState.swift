/// UIHinge.Status names.
public enum Pose: String, Sendable, CaseIterable { case closed, partiallyOpen, fullyOpen }
public enum Display: String, Sendable, CaseIterable { case outer, inner }

/// The app's UI state, index-addressed by the compiled manifest.
public struct UIState: Sendable, Equatable, Hashable {
    /// Per container: the selected tab of a tabView (unused, 0, for other kinds).
    public var selectedTab: [Int]
    /// Per container: screens pushed above a navigationStack's root (indices into App.screens).
    public var pushed: [[Int]]
    /// The presented sheet: (screen index, sheet index).
    public var sheet: SheetRef?
    /// Per screen: whether its inspector is presented.
    public var inspector: [Bool]

    public struct SheetRef: Sendable, Equatable, Hashable {
        public var screen: Int
        public var sheet: Int
    }

    /// The default UI state of an app: each tab view on its `selected` (else first) tab,
    /// each stack at its root, no sheet, inspectors hidden.
    public init(app: App) {
        selectedTab = app.containers.map { if case .tabView(let t) = $0 { t.initialSelection } else { 0 } }
        pushed = Array(repeating: [], count: app.containers.count)
        sheet = nil
        inspector = Array(repeating: false, count: app.screens.count)
    }
}

/// Everything the events set. `hingeAngle` is kept as given; the layout only sees `pose`.
public struct DeviceState: Sendable, Equatable {
    public var hingeAngle = 0.0
    public var pose = Pose.closed
    public var orientation = Orientation.portrait
    public var keyboardVisible = false
    public var keyboardHeight: Double?
    public var pipActive = false
    public var liveActivities = 0
    public var splitSide = SplitSide.none
    public var layoutDirection = LayoutDirection.ltr
    public var reduceTransparency = false
    public var ui: UIState

    public init(app: App) { ui = UIState(app: app) }

    public var display: Display { DisplayRule.display(for: pose) }
}
