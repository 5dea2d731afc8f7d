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
    /// The interface orientation: what the layout reads.
    public var orientation = Orientation.portrait
    /// How the hardware is turned (from `motion` samples or device-convention `orientation`
    /// events); nil once an interface-convention `orientation` event set `orientation`
    /// directly, until the next device signal (`InterfaceOrientationRule`).
    public var deviceOrientation: DeviceOrientation? = .portrait
    /// Portrait orientation lock: holds the interface in portrait.
    public var rotationLock = false
    /// A device orientation the IMU proposes and that has not yet held for the profile's
    /// settle time (`OrientationSettleRule`); `since` is on the engine's clock.
    public var pendingOrientation: PendingOrientation?
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

    public struct PendingOrientation: Sendable, Equatable {
        public var orientation: DeviceOrientation
        public var since: Int64

        public init(orientation: DeviceOrientation, since: Int64) {
            self.orientation = orientation
            self.since = since
        }
    }
}
