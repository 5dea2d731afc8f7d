/// The screen the app is on, where its window sits, and which side the bar takes.
public struct ScreenGeometry: Sendable, Equatable {
    public var display: Display
    public var orientation: Orientation
    public var width: Double
    public var height: Double
    public var window: Rect
    public var sizeClass: SizeClassPair
    /// Rule 1: whether this display and orientation ever put bars vertically.
    public var verticalPossible: Bool
    /// Rule 2: the physical side that holds the status bar and Dynamic Island column.
    public var hardwareSide: Side
    /// Rule 2: the side this app's vertical bar takes (differs from hardwareSide in Split View).
    public var appSide: Side
    /// Whether the camera end of the column (island, status bar) is at the top.
    public var cameraEndAtTop: Bool
    public var direction: LayoutDirection
    /// Keyboard height in effect (0 when hidden), and whether it was clamped.
    public var keyboardHeight: Double
    public var keyboardClamped: Bool
}

public enum ScreenGeometryRule {
    /// The keyboard never covers more than this share of the screen; a larger reported
    /// height is clamped (with a diagnostic) so the bar always keeps some room.
    public static let maxKeyboardShare = 0.6

    public static func geometry(profile p: DeviceProfile, state s: DeviceState) -> ScreenGeometry {
        let display = s.display
        let portrait = !s.orientation.isLandscape
        let (pw, ph) = display == .outer ? (p.outerWidth, p.outerHeight) : (p.innerWidth, p.innerHeight)
        let width = portrait ? pw : ph
        let height = portrait ? ph : pw
        let hardware = BarSideRule.hardwareSide(display: display, orientation: s.orientation)
        var window = Rect(x: 0, y: 0, w: width, h: height)
        var appSide = hardware
        if display == .inner, s.splitSide != .none {
            // Split View 50/50: each app's bar sits on its window edge that is also a screen edge.
            let half = (width - p.splitDivider) / 2
            window = Rect(x: s.splitSide == .left ? 0 : width - half, y: 0, w: half, h: height)
            appSide = s.splitSide == .left ? .left : .right
        }
        var keyboard = 0.0
        var clamped = false
        if s.keyboardVisible {
            keyboard = s.keyboardHeight ?? KeyboardRule.defaultHeight(profile: p, display: display, portrait: portrait)
            let limit = (height * maxKeyboardShare).rounded(.down)
            if keyboard > limit { keyboard = limit; clamped = true }
        }
        return ScreenGeometry(
            display: display, orientation: s.orientation, width: width, height: height, window: window,
            sizeClass: SizeClassRule.window(display: display, portrait: portrait, width: window.w, profile: p),
            verticalPossible: BarAxisRule.verticalPossible(display: display, orientation: s.orientation),
            hardwareSide: hardware, appSide: appSide,
            cameraEndAtTop: BarSideRule.cameraEndAtTop(display: display, orientation: s.orientation),
            direction: s.layoutDirection, keyboardHeight: keyboard, keyboardClamped: clamped)
    }
}

/// Rule 1, seed 002: "On the outer display, and on the inner display in landscape,
/// navigation bar items, toolbar items and tab bar items rotate into a single vertical
/// bar along the side … In portrait on the inner display, bars go back to the top and bottom."
public enum BarAxisRule {
    public static func verticalPossible(display: Display, orientation: Orientation) -> Bool {
        display == .outer || orientation.isLandscape
    }
}

/// Rule 2: which side. Outer display: the camera side, so it moves with rotation
/// (camera top-right in portrait). Inner display full screen: always the right, in
/// both landscape rotations. Right-to-left keeps the hardware side (seed 002: "The
/// vertical bar stays on the same side of the hardware in right-to-left languages").
public enum BarSideRule {
    public static func hardwareSide(display: Display, orientation: Orientation) -> Side {
        guard display == .outer else { return .right }
        switch orientation {
        case .portrait, .landscapeLeft: return .right
        case .portraitUpsideDown, .landscapeRight: return .left
        }
    }

    /// The outer camera sits at the top of the column in portrait and landscapeRight
    /// (device top turned to the left) and at the bottom in the other two.
    public static func cameraEndAtTop(display: Display, orientation: Orientation) -> Bool {
        guard display == .outer else { return true }
        return orientation == .portrait || orientation == .landscapeRight
    }

    /// The edge in layout-direction terms: the same hardware side reads as the other
    /// edge in right-to-left.
    public static func edge(for side: Side, direction: LayoutDirection) -> HorizontalEdge {
        switch (side, direction) {
        case (.right, .ltr), (.left, .rtl): .trailing
        case (.left, .ltr), (.right, .rtl): .leading
        }
    }
}

/// duo-facts §5: outer portrait compact×regular, outer landscape compact×compact,
/// inner regular×regular in every orientation. A Split View window narrower than the
/// profile's `regularWidthMin` (the 469 pt halves) reports compact width, as on iPad.
public enum SizeClassRule {
    public static func window(display: Display, portrait: Bool, width: Double, profile p: DeviceProfile) -> SizeClassPair {
        switch display {
        case .outer: SizeClassPair(horizontal: .compact, vertical: portrait ? .regular : .compact)
        case .inner: SizeClassPair(horizontal: width >= p.regularWidthMin ? .regular : .compact, vertical: .regular)
        }
    }

    /// Seed 000: "a column doesn't have to report the window's values": a column
    /// narrower than the profile's threshold reports compact width.
    public static func column(width: Double, window: SizeClassPair, profile: DeviceProfile) -> SizeClassPair {
        SizeClassPair(horizontal: window.horizontal == .regular && width >= profile.columnRegularMinWidth ? .regular : .compact,
                      vertical: window.vertical)
    }
}

public enum KeyboardRule {
    public static func defaultHeight(profile p: DeviceProfile, display: Display, portrait: Bool) -> Double {
        switch (display, portrait) {
        case (.outer, true): p.outerKeyboardPortrait
        case (.outer, false): p.outerKeyboardLandscape
        case (.inner, true): p.innerKeyboardPortrait
        case (.inner, false): p.innerKeyboardLandscape
        }
    }
}
