/// Every number the layout uses, in points unless noted. The built-in values come
/// from ../shared/reference/duo-facts.md; where the sources are silent the value is
/// our assumption, marked [assumed] and documented in docs/profile.md.
public struct DeviceProfile: Sendable, Equatable {
    public var name = "iPhone Duo (iOS 27.1)"

    // Displays, in their portrait orientation.
    public var outerWidth = 466.0                 // measured screenBounds
    public var outerHeight = 678.0
    public var innerWidth = 669.0                 // 951×669 measured in landscape
    public var innerHeight = 951.0

    // Hinge → pose. Thresholds with hysteresis: a pose changes only once the angle
    // passes threshold ± hysteresis, so the band around each threshold is 2×hysteresis.
    public var partialOpenThreshold = 20.0        // [assumed] closed below, partly open above
    public var fullyOpenThreshold = 160.0         // [assumed] fully open above
    public var hingeHysteresis = 3.0              // [assumed] 6° band around each threshold
    public var hingeTolerance = 5.0               // [assumed] encoder overshoot past 0 or 180 that is clamped, not refused

    // IMU → device orientation (DeviceOrientationFilter); docs/sensors.md says why each default.
    public var orientationHysteresis = 22.5       // [assumed] degrees past a 45° boundary before the adjacent orientation is taken
    public var flatTilt = 75.0                    // [assumed] tilt from upright past which the device lies face up or down
    public var flatHysteresis = 5.0               // [assumed] upright again only below flatTilt − flatHysteresis
    public var orientationSettleMs = 100.0        // [assumed] a new device orientation must hold this long
    public var gravityTolerance = 0.4             // [assumed] samples whose magnitude is off 1 g by more are ignored

    // The vertical column.
    public var columnWidth = 84.0                 // side safe-area inset, measured
    public var itemLength = 44.0                  // tap target, the minimum
    public var prominentLength = 48.0             // prominent (pinned/confirmation) items
    public var tabLength = 50.0                   // [assumed] pitch of a vertical tab
    public var tabWidth = 69.0                    // tab bar view width, measured
    public var itemSpacing = 4.0                  // [assumed]
    public var groupSpacing = 8.0                 // [assumed] extra space between groups
    public var fixedSpacerLength = 8.0            // [assumed] fixed spacers keep their minimum
    public var bottomGap = 16.0                   // [assumed] minimum gap between top and bottom placements
    public var statusBarLength = 86.0             // [assumed] vertical status bar; island + status = 170 measured
    public var islandStart = 12.0                 // [assumed] distance of the island from the column end
    public var outerIslandLength = 72.0           // [assumed] island around the 37 pt camera (measured at y 29–66)
    public var innerIslandLength = 0.0            // [assumed] no cutout inside; the island appears with Live Activities
    public var islandGrowthPerActivity = 36.0     // [assumed]
    public var maxActivitiesShown = 3.0           // [assumed] the island stops growing after this many

    // Horizontal bars.
    public var statusBarHeight = 24.0             // nav bar measured at y = 24
    public var navigationBarHeight = 58.0         // measured; top inset 82
    public var toolbarHeight = 49.0               // tab bar 83 = 49 + 34 measured
    public var tabBarHeight = 49.0
    public var homeIndicatorHeight = 34.0         // bottom inset with bars hidden, measured
    public var barItemWidth = 44.0
    public var textCharWidth = 8.0                // [assumed] width per character of a text item
    public var textItemPadding = 16.0             // [assumed]
    public var titleCharWidth = 9.0               // [assumed] room the title takes in a horizontal row
    public var minTabWidth = 64.0                 // [assumed] narrowest horizontal tab
    public var barInset = 8.0                     // [assumed] inset of items from a bar's ends

    // Things that take room.
    public var foldWidth = 40.0                   // measured in the simulator
    public var outerKeyboardPortrait = 291.0      // [assumed] used when the event gives no height
    public var outerKeyboardLandscape = 209.0     // [assumed]
    public var innerKeyboardPortrait = 320.0      // [assumed]
    public var innerKeyboardLandscape = 360.0     // [assumed]
    public var accessoryBarHeight = 44.0          // [assumed]
    public var pipWidth = 192.0                   // [assumed] 16:9 window
    public var pipHeight = 108.0
    public var pipMargin = 8.0                    // [assumed]

    // Containers.
    public var splitDivider = 13.0                // measured windows 469 + 469 of 951
    public var columnRegularMinWidth = 400.0      // [assumed] narrower columns report compact width
    public var regularWidthMin = 500.0            // [assumed] narrower windows (Split View halves) are compact
    public var sidebarWidth = 280.0               // [assumed]
    public var inspectorWidth = 320.0             // [assumed]
    public var sheetInset = 10.0                  // [assumed] large sheet top offset
    public var centeredSheetWidth = 560.0         // [assumed] inner display
    public var sheetCameraClearance = 8.0         // [assumed] a disabled sheet stops this far below the camera
    public var layoutMarginOtherSide = 20.0       // measured 84 / 20
    public var floatingInset = 16.0               // [assumed]

    public init() {}

    public static let builtin = DeviceProfile()

    /// Every numeric field, by its JSON name, in a fixed order (used to load, save and document profiles).
    public static var numericFields: [(String, WritableKeyPath<DeviceProfile, Double>)] { fieldRanges.map { ($0.name, $0.path) } }

    /// What a field may hold. A layout divides by some lengths and counts others, so a
    /// value outside its range could stop the process or lay out nonsense; every field
    /// is checked against its range where a profile is decoded (docs/profile.md).
    public struct FieldRange {
        public let name: String
        public let path: WritableKeyPath<DeviceProfile, Double>
        public let min: Double
        public let max: Double
        /// A count (of Live Activities): a whole number.
        public let whole: Bool

        init(_ name: String, _ path: WritableKeyPath<DeviceProfile, Double>, _ min: Double, _ max: Double, whole: Bool = false) {
            self.name = name; self.path = path; self.min = min; self.max = max; self.whole = whole
        }
    }

    /// Screens are at least 200 pt on a side (the column and a bar must fit); lengths a
    /// layout divides by or steps with are at least 1 pt; every other length is 0 to 1,000
    /// pt (10,000 for what can span a screen); angles stay within the hinge's 0…180°, and
    /// the orientation filter's within what keeps its bands apart.
    public static var fieldRanges: [FieldRange] { [
        FieldRange("outerWidth", \.outerWidth, 200, 10_000), FieldRange("outerHeight", \.outerHeight, 200, 10_000),
        FieldRange("innerWidth", \.innerWidth, 200, 10_000), FieldRange("innerHeight", \.innerHeight, 200, 10_000),
        FieldRange("partialOpenThreshold", \.partialOpenThreshold, 0, 180), FieldRange("fullyOpenThreshold", \.fullyOpenThreshold, 0, 180),
        FieldRange("hingeHysteresis", \.hingeHysteresis, 0, 45), FieldRange("hingeTolerance", \.hingeTolerance, 0, 45),
        FieldRange("orientationHysteresis", \.orientationHysteresis, 0, 44), FieldRange("flatTilt", \.flatTilt, 10, 89),
        FieldRange("flatHysteresis", \.flatHysteresis, 0, 30), FieldRange("orientationSettleMs", \.orientationSettleMs, 0, 10_000),
        FieldRange("gravityTolerance", \.gravityTolerance, 0, 0.9),
        FieldRange("columnWidth", \.columnWidth, 1, 1_000), FieldRange("itemLength", \.itemLength, 44, 1_000),
        FieldRange("prominentLength", \.prominentLength, 1, 1_000), FieldRange("tabLength", \.tabLength, 1, 1_000),
        FieldRange("tabWidth", \.tabWidth, 1, 1_000), FieldRange("itemSpacing", \.itemSpacing, 0, 1_000),
        FieldRange("groupSpacing", \.groupSpacing, 0, 1_000), FieldRange("fixedSpacerLength", \.fixedSpacerLength, 0, 1_000),
        FieldRange("bottomGap", \.bottomGap, 0, 1_000), FieldRange("statusBarLength", \.statusBarLength, 0, 1_000),
        FieldRange("islandStart", \.islandStart, 0, 1_000),
        FieldRange("outerIslandLength", \.outerIslandLength, 0, 1_000), FieldRange("innerIslandLength", \.innerIslandLength, 0, 1_000),
        FieldRange("islandGrowthPerActivity", \.islandGrowthPerActivity, 0, 1_000),
        FieldRange("maxActivitiesShown", \.maxActivitiesShown, 0, 100, whole: true),
        FieldRange("statusBarHeight", \.statusBarHeight, 0, 1_000), FieldRange("navigationBarHeight", \.navigationBarHeight, 1, 1_000),
        FieldRange("toolbarHeight", \.toolbarHeight, 1, 1_000), FieldRange("tabBarHeight", \.tabBarHeight, 1, 1_000),
        FieldRange("homeIndicatorHeight", \.homeIndicatorHeight, 0, 1_000), FieldRange("barItemWidth", \.barItemWidth, 1, 1_000),
        FieldRange("textCharWidth", \.textCharWidth, 1, 100), FieldRange("textItemPadding", \.textItemPadding, 0, 1_000),
        FieldRange("titleCharWidth", \.titleCharWidth, 1, 100),
        FieldRange("minTabWidth", \.minTabWidth, 1, 1_000), FieldRange("barInset", \.barInset, 0, 1_000),
        FieldRange("foldWidth", \.foldWidth, 0, 1_000),
        FieldRange("outerKeyboardPortrait", \.outerKeyboardPortrait, 0, 10_000), FieldRange("outerKeyboardLandscape", \.outerKeyboardLandscape, 0, 10_000),
        FieldRange("innerKeyboardPortrait", \.innerKeyboardPortrait, 0, 10_000), FieldRange("innerKeyboardLandscape", \.innerKeyboardLandscape, 0, 10_000),
        FieldRange("accessoryBarHeight", \.accessoryBarHeight, 0, 1_000), FieldRange("pipWidth", \.pipWidth, 1, 10_000),
        FieldRange("pipHeight", \.pipHeight, 1, 10_000), FieldRange("pipMargin", \.pipMargin, 0, 1_000),
        FieldRange("splitDivider", \.splitDivider, 0, 1_000), FieldRange("columnRegularMinWidth", \.columnRegularMinWidth, 0, 10_000),
        FieldRange("regularWidthMin", \.regularWidthMin, 0, 10_000), FieldRange("sidebarWidth", \.sidebarWidth, 1, 10_000),
        FieldRange("inspectorWidth", \.inspectorWidth, 1, 10_000), FieldRange("sheetInset", \.sheetInset, 0, 1_000),
        FieldRange("centeredSheetWidth", \.centeredSheetWidth, 1, 10_000),
        FieldRange("sheetCameraClearance", \.sheetCameraClearance, 0, 1_000), FieldRange("layoutMarginOtherSide", \.layoutMarginOtherSide, 0, 1_000),
        FieldRange("floatingInset", \.floatingInset, 0, 1_000),
    ] }

    /// Loads a profile: any field left out keeps its built-in value; unknown fields are errors.
    public static func decode(json bytes: [UInt8]) throws(InputError) -> DeviceProfile {
        let value: JSONValue
        do { value = try JSON.parse(bytes) } catch {
            throw InputError(.badJSON, "profile is not valid JSON: \(error.message) at byte \(error.offset)")
        }
        return try decode(value)
    }

    public static func decode(_ value: JSONValue) throws(InputError) -> DeviceProfile {
        let r = try FieldReader(value, path: "", what: "profile")
        // "calibration": where `crease calibrate` got the values it wrote (informational, not read).
        try r.rejectUnknown(allowed: ["name", "calibration"] + numericFields.map(\.0))
        var p = DeviceProfile()
        if let name = try r.optionalString("name") { p.name = name }
        for f in fieldRanges {
            guard let v = try r.optionalNumber(f.name) else { continue }
            guard v >= f.min, v <= f.max else {
                throw InputError.outOfRange(f.name, "must be between \(InputError.shown(f.min)) and \(InputError.shown(f.max))", got: v)
            }
            guard !f.whole || v == v.rounded() else { throw InputError.outOfRange(f.name, "must be a whole number", got: v) }
            p[keyPath: f.path] = v
        }
        if let error = p.crossFieldError { throw error }
        return p
    }

    /// What breaks the rules between fields (each field in its range aside), or nil: the
    /// hinge's hysteresis bands apart and within 0…180, the flat tilt's band above upright.
    public var crossFieldError: InputError? {
        guard partialOpenThreshold + hingeHysteresis < fullyOpenThreshold - hingeHysteresis,
              partialOpenThreshold - hingeHysteresis >= 0, fullyOpenThreshold + hingeHysteresis <= 180 else {
            return InputError.outOfRange("hingeHysteresis", "the hysteresis bands must not overlap and must stay within 0…180",
                                         got: "\(InputError.shown(hingeHysteresis)) around thresholds \(InputError.shown(partialOpenThreshold)) and \(InputError.shown(fullyOpenThreshold))")
        }
        guard flatTilt - flatHysteresis >= 5 else {
            return InputError.outOfRange("flatHysteresis", "flatTilt − flatHysteresis must be at least 5°, or an upright device would count as lying flat",
                                         got: flatHysteresis)
        }
        return nil
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("name"); w.string(name)
        for (name, path) in DeviceProfile.numericFields { w.key(name); w.number(self[keyPath: path]) }
        w.endObject()
    }

    public static func == (a: DeviceProfile, b: DeviceProfile) -> Bool {
        guard a.name == b.name else { return false }
        for (_, path) in numericFields where a[keyPath: path] != b[keyPath: path] { return false }
        return true
    }
}
