/// The input vocabulary (contract section 2).
public enum Orientation: String, Sendable, CaseIterable {
    case portrait, portraitUpsideDown, landscapeLeft, landscapeRight

    public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }
}

/// How the hardware is turned, as `UIDeviceOrientation` names it: the four upright
/// orientations, and lying flat screen up or screen down. An IMU gives one of these (see
/// `DeviceOrientationFilter`); the interface orientation follows it through
/// `InterfaceOrientationRule`.
public enum DeviceOrientation: String, Sendable, CaseIterable {
    case portrait, portraitUpsideDown, landscapeLeft, landscapeRight, faceUp, faceDown

    /// The interface orientation this device orientation asks for; nil lying flat. The two
    /// landscape names swap: device `landscapeLeft` (home side on the right) is interface
    /// `landscapeRight`.
    public var interface: Orientation? {
        switch self {
        case .portrait: .portrait
        case .portraitUpsideDown: .portraitUpsideDown
        case .landscapeLeft: .landscapeRight
        case .landscapeRight: .landscapeLeft
        case .faceUp, .faceDown: nil
        }
    }

    /// The device orientation that shows `interface` upright.
    public init(interface: Orientation) {
        switch interface {
        case .portrait: self = .portrait
        case .portraitUpsideDown: self = .portraitUpsideDown
        case .landscapeLeft: self = .landscapeRight
        case .landscapeRight: self = .landscapeLeft
        }
    }

    public var isFlat: Bool { self == .faceUp || self == .faceDown }
}

/// A gravity vector in g, in the frame of the display in use, as CoreMotion gives it:
/// x to the right, y up, z out of the screen, all in portrait.
public struct Gravity: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var z: Double

    public init(x: Double, y: Double, z: Double) {
        self.x = x; self.y = y; self.z = z
    }
}

/// How an orientation event names the landscape rotations. Events and layouts use
/// interface orientations (`interface`, the default): `landscapeRight` has the device's
/// top turned to the left, so on the outer display the camera, and the bar, are on the
/// left. Device orientations (`device`, what an accelerometer reports) name the same
/// rotations the other way round: device `landscapeLeft` (home side on the right) is
/// interface `landscapeRight`. The portrait values are the same in both.
/// The unit of a hinge event's `angle`: degrees unless the event says `"unit":"rad"`.
public enum AngleUnit: String, Sendable, CaseIterable {
    case deg, rad
}

public enum OrientationConvention: String, Sendable, CaseIterable {
    case interface, device
}

public enum SplitSide: String, Sendable, CaseIterable { case none, left, right }

public enum LayoutDirection: String, Sendable, CaseIterable { case ltr, rtl }

public enum Event: Sendable, Equatable {
    case hinge(angle: Double)
    /// An interface orientation, set directly (`"convention":"interface"`, the default).
    case orientation(Orientation)
    /// A device orientation (`"convention":"device"`): through the rotation lock and the
    /// app's supported orientations, as the phone does.
    case deviceOrientation(DeviceOrientation)
    /// A gravity sample from the rig's IMU, through the device-orientation filter.
    case motion(Gravity)
    case rotationLock(enabled: Bool)
    case keyboard(visible: Bool, height: Double?)
    case pip(active: Bool)
    case liveActivities(count: Int)
    case splitView(SplitSide)
    case layoutDirection(LayoutDirection)
    case reduceTransparency(enabled: Bool)
    case select(tab: String)
    case push(screen: String)
    case pop
    case present(sheet: String)
    case dismiss
    case inspector(presented: Bool)
    case app(App)

    /// The event's wire name, as in the `"event"` key.
    public var name: String { kind.rawValue }

    public static var names: [String] { EventKind.names }
}

/// An event as it arrived: the event plus the sender's clock and request id.
public struct EventEnvelope: Sendable, Equatable {
    public var event: Event
    public var ts: Int64?
    public var id: JSONValue?

    public init(event: Event, ts: Int64? = nil, id: JSONValue? = nil) {
        self.event = event
        self.ts = ts
        self.id = id
    }
}

/// Limits on event values; outside them an event is rejected with `outOfRange`.
public enum EventLimits {
    public static let maxAngle = 180.0
    /// The most a profile's `hingeTolerance` may be.
    public static let maxAngleTolerance = 45.0
    public static let maxKeyboardHeight = 2000.0
    public static let maxLiveActivities = 1000
    /// The most a gravity component may be, in g: an IMU's full scale (±16 g) and no more.
    public static let maxGravity = 16.0
}
