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
    public static var numericFields: [(String, WritableKeyPath<DeviceProfile, Double>)] { [
        ("outerWidth", \.outerWidth), ("outerHeight", \.outerHeight), ("innerWidth", \.innerWidth), ("innerHeight", \.innerHeight),
        ("partialOpenThreshold", \.partialOpenThreshold), ("fullyOpenThreshold", \.fullyOpenThreshold), ("hingeHysteresis", \.hingeHysteresis),
        ("columnWidth", \.columnWidth), ("itemLength", \.itemLength), ("prominentLength", \.prominentLength), ("tabLength", \.tabLength),
        ("tabWidth", \.tabWidth), ("itemSpacing", \.itemSpacing), ("groupSpacing", \.groupSpacing), ("fixedSpacerLength", \.fixedSpacerLength),
        ("bottomGap", \.bottomGap), ("statusBarLength", \.statusBarLength), ("islandStart", \.islandStart),
        ("outerIslandLength", \.outerIslandLength), ("innerIslandLength", \.innerIslandLength),
        ("islandGrowthPerActivity", \.islandGrowthPerActivity), ("maxActivitiesShown", \.maxActivitiesShown),
        ("statusBarHeight", \.statusBarHeight), ("navigationBarHeight", \.navigationBarHeight), ("toolbarHeight", \.toolbarHeight),
        ("tabBarHeight", \.tabBarHeight), ("homeIndicatorHeight", \.homeIndicatorHeight), ("barItemWidth", \.barItemWidth),
        ("textCharWidth", \.textCharWidth), ("textItemPadding", \.textItemPadding), ("titleCharWidth", \.titleCharWidth),
        ("minTabWidth", \.minTabWidth), ("barInset", \.barInset),
        ("foldWidth", \.foldWidth), ("outerKeyboardPortrait", \.outerKeyboardPortrait), ("outerKeyboardLandscape", \.outerKeyboardLandscape),
        ("innerKeyboardPortrait", \.innerKeyboardPortrait), ("innerKeyboardLandscape", \.innerKeyboardLandscape),
        ("accessoryBarHeight", \.accessoryBarHeight), ("pipWidth", \.pipWidth), ("pipHeight", \.pipHeight), ("pipMargin", \.pipMargin),
        ("splitDivider", \.splitDivider), ("columnRegularMinWidth", \.columnRegularMinWidth), ("regularWidthMin", \.regularWidthMin), ("sidebarWidth", \.sidebarWidth),
        ("inspectorWidth", \.inspectorWidth), ("sheetInset", \.sheetInset), ("centeredSheetWidth", \.centeredSheetWidth),
        ("sheetCameraClearance", \.sheetCameraClearance), ("layoutMarginOtherSide", \.layoutMarginOtherSide),
        ("floatingInset", \.floatingInset),
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
        try r.rejectUnknown(allowed: ["name"] + numericFields.map(\.0))
        var p = DeviceProfile()
        if let name = try r.optionalString("name") { p.name = name }
        for (name, path) in numericFields {
            guard let v = try r.optionalNumber(name) else { continue }
            guard v >= 0, v <= 10_000 else { throw InputError.outOfRange(name, "must be between 0 and 10000", got: v) }
            p[keyPath: path] = v
        }
        guard p.partialOpenThreshold + p.hingeHysteresis < p.fullyOpenThreshold - p.hingeHysteresis,
              p.partialOpenThreshold - p.hingeHysteresis >= 0, p.fullyOpenThreshold + p.hingeHysteresis <= 180 else {
            throw InputError.outOfRange("hingeHysteresis", "the hysteresis bands must not overlap and must stay within 0…180",
                                        got: "\(InputError.shown(p.hingeHysteresis)) around thresholds \(InputError.shown(p.partialOpenThreshold)) and \(InputError.shown(p.fullyOpenThreshold))")
        }
        guard p.itemLength >= 44 else { throw InputError.outOfRange("itemLength", "must be at least the 44 pt tap target", got: p.itemLength) }
        return p
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
