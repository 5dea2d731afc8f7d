/// The rules as docs/rules.md names them, each with the passage of the seeds (or of Apple's
/// documentation) it applies and the layout inputs it reads. `crease trace why` answers with
/// one of these; a test holds every name to docs/rules.md.
public enum LayoutRule: String, Sendable, CaseIterable {
    case barAxis, barSide, customBars, itemAxis, verticalOrder, space, overflow, containers, sheets, insets
    case hingePose, interfaceOrientation

    /// The name in docs/rules.md's table (in bold there).
    public var name: String {
        switch self {
        case .barAxis: "Bar axis"
        case .barSide: "Bar side"
        case .customBars: "Custom bars stay put"
        case .itemAxis: "Item axis"
        case .verticalOrder: "Vertical order"
        case .space: "Space"
        case .overflow: "Overflow and compression"
        case .containers: "Containers"
        case .sheets: "Sheets"
        case .insets: "Insets and margins"
        case .hingePose: "Hinge pose"
        case .interfaceOrientation: "Interface orientation"
        }
    }

    /// What the rule applies, quoted, and where it is quoted from.
    public var passage: String {
        switch self {
        case .barAxis:
            "seed 002: \"On the outer display, and on the inner display in landscape, navigation bar items, toolbar items and tab bar items rotate into a single vertical bar along the side, under the status bar. … In portrait on the inner display, bars go back to the top and bottom.\""
        case .barSide:
            "seed 002: \"The vertical bar stays on the same side of the hardware in right-to-left languages; your content mirrors around it.\""
        case .customBars:
            "seed 002: \"Content in a UIToolbar, UINavigationBar or UITabBar you created yourself is not considered, and neither is a standalone SwiftUI toolbar outside a navigation container.\""
        case .itemAxis:
            "seed 002: \"Items with an icon, like back or share, go vertical. Text-only items, like Edit, stay horizontal.\""
        case .verticalOrder:
            "seed 002: \"A vertical bar reads top to bottom: 1. Primary navigation: back or close. 2. Prominent actions, such as Done. 3. Everything else, in its original groups, with a spacer between top and bottom placements.\""
        case .space:
            "seed 003: \"On the side, they share the height with the status bar and with the Dynamic Island, which grows when Live Activities arrive.\""
        case .overflow:
            "seed 003: \"Space runs short more often on the outer display in landscape, simply because there's less height, and also when other interface elements appear, like the keyboard, or Picture in Picture when the device is open in portrait. The system then moves controls into the overflow menu on its own.\""
        case .containers:
            "seed 002: \"In a split view, only the detail column gets a vertical bar. An expanded inspector doesn't get its own bar.\""
        case .sheets:
            "seed 002: \"On the inner display, sheets are centered and keep horizontal bars. A sheet placed on the trailing side gets a vertical bar; one placed on the leading side doesn't.\""
        case .insets:
            "seed 002: \"Vertical bars have no scroll-edge effect and only get a background when Reduce Transparency is on.\""
        case .hingePose:
            "Apple, DeviceHinge.status: the pose is decided from the angle (closed shows the outer display, open at any angle the inner one); the thresholds and their hysteresis are the device profile's."
        case .interfaceOrientation:
            "Apple, supportedInterfaceOrientations: the interface turns to the device's orientation when the app supports it there; the portrait lock holds portrait; a flat device keeps the last."
        }
    }

    /// The layout inputs the rule reads, by the names of the state encoding (and `app`).
    public var inputs: [String] {
        switch self {
        case .barAxis: ["pose", "display", "orientation", "splitView", "ui", "app"]
        case .barSide: ["display", "orientation", "splitView", "layoutDirection"]
        case .customBars: ["pose", "display", "orientation", "splitView", "ui", "app"]
        case .itemAxis: ["pose", "display", "orientation", "splitView", "keyboard", "ui", "app"]
        case .verticalOrder: ["ui", "app"]
        case .space: ["pose", "display", "orientation", "keyboard", "pip", "liveActivities", "splitView"]
        case .overflow: ["pose", "display", "orientation", "keyboard", "pip", "liveActivities", "splitView", "ui", "app"]
        case .containers: ["pose", "display", "orientation", "splitView", "ui", "app"]
        case .sheets: ["pose", "display", "orientation", "layoutDirection", "ui", "app"]
        case .insets: ["pose", "display", "orientation", "keyboard", "splitView", "reduceTransparency", "ui"]
        case .hingePose: ["hingeAngle", "pose"]
        case .interfaceOrientation: ["deviceOrientation", "rotationLock", "pendingOrientation", "display", "app"]
        }
    }
}
