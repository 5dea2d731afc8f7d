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

/// What the layout reads of the device, and nothing else: the engine keeps its layouts by
/// these (with the UI state), so a member added here is a layout input with no other edit.
public struct DeviceInputs: Sendable, Hashable {
    public var pose = Pose.closed
    /// The interface orientation.
    public var orientation = Orientation.portrait
    public var keyboardVisible = false
    public var keyboardHeight: Double?
    public var pipActive = false
    public var liveActivities = 0
    public var splitSide = SplitSide.none
    public var layoutDirection = LayoutDirection.ltr
    public var reduceTransparency = false

    public init() {}
}

/// What the events' rules keep to decide the layout inputs, which no layout reads: the angle
/// as given (the layout sees only the pose), how the hardware is turned, the rotation lock
/// and an orientation waiting to settle. These show through `pose` and `orientation`.
public struct DeviceBookkeeping: Sendable, Hashable {
    public var hingeAngle = 0.0
    /// How the hardware is turned (from `motion` samples or device-convention `orientation`
    /// events); nil once an interface-convention `orientation` event set the interface
    /// orientation directly, until the next device signal (`InterfaceOrientationRule`).
    public var deviceOrientation: DeviceOrientation? = .portrait
    /// Portrait orientation lock: holds the interface in portrait.
    public var rotationLock = false
    /// A device orientation the IMU proposes and that has not yet held for the profile's
    /// settle time (`OrientationSettleRule`); `since` is on the engine's clock.
    public var pendingOrientation: PendingOrientation?

    public init() {}

    public struct PendingOrientation: Sendable, Hashable {
        public var orientation: DeviceOrientation
        public var since: Int64

        public init(orientation: DeviceOrientation, since: Int64) {
            self.orientation = orientation
            self.since = since
        }
    }
}

/// Everything the events set: the layout's device inputs, the rules' bookkeeping and the
/// app's UI state. Members of the first two read as members of the state
/// (`state.pose`, `state.hingeAngle`) through key paths, so nothing lists them twice.
@dynamicMemberLookup
public struct DeviceState: Sendable, Equatable {
    public var inputs = DeviceInputs()
    public var bookkeeping = DeviceBookkeeping()
    public var ui: UIState

    public init(app: App) { ui = UIState(app: app) }

    public subscript<T>(dynamicMember member: WritableKeyPath<DeviceInputs, T>) -> T {
        @inline(__always) get { inputs[keyPath: member] }
        @inline(__always) set { inputs[keyPath: member] = newValue }
    }

    public subscript<T>(dynamicMember member: WritableKeyPath<DeviceBookkeeping, T>) -> T {
        @inline(__always) get { bookkeeping[keyPath: member] }
        @inline(__always) set { bookkeeping[keyPath: member] = newValue }
    }

    public var display: Display { DisplayRule.display(for: inputs.pose) }

    public typealias PendingOrientation = DeviceBookkeeping.PendingOrientation
}
