/// The layout (contract section 4) as values. `LayoutEncoding` prints it canonically.
public struct Rect: Sendable, Equatable, Hashable {
    public var x, y, w, h: Double
    public init(x: Double, y: Double, w: Double, h: Double) { self.x = x; self.y = y; self.w = w; self.h = h }
    public static let zero = Rect(x: 0, y: 0, w: 0, h: 0)
    public var maxX: Double { x + w }
    public var maxY: Double { y + h }
    public var isEmpty: Bool { w <= 0 || h <= 0 }
    /// True when the interiors overlap. Touching edges do not count, nor do overlaps
    /// thinner than floating-point error (layouts print to 1/100 pt).
    public func intersects(_ o: Rect) -> Bool {
        let e = 1e-6
        return !isEmpty && !o.isEmpty && x < o.maxX - e && o.x < maxX - e && y < o.maxY - e && o.y < maxY - e
    }
    public func contains(_ o: Rect) -> Bool { o.x >= x && o.y >= y && o.maxX <= maxX && o.maxY <= maxY }
}

public struct Insets: Sendable, Equatable, Hashable {
    public var top = 0.0, leading = 0.0, bottom = 0.0, trailing = 0.0
    public init(top: Double = 0, leading: Double = 0, bottom: Double = 0, trailing: Double = 0) {
        self.top = top; self.leading = leading; self.bottom = bottom; self.trailing = trailing
    }
}

public enum Axis: String, Sendable, CaseIterable { case vertical, horizontal }
public enum Side: String, Sendable, CaseIterable { case left, right }
public enum HorizontalEdge: String, Sendable, CaseIterable { case leading, trailing }
public enum BarEdge: String, Sendable, CaseIterable { case top, bottom, leading, trailing }
public enum SizeClass: String, Sendable, CaseIterable { case compact, regular }
public enum RegionKind: String, Sendable, CaseIterable { case statusBar, dynamicIsland, division, keyboard, pip }
public enum BarRole: String, Sendable, CaseIterable { case vertical, navigation, toolbar, tabBar, sheet, inspector, keyboardAccessory, sidebar }
public enum Shows: String, Sendable, CaseIterable { case symbol, title, symbolAndTitle }
public enum TabBarState: String, Sendable, CaseIterable { case expanded, compressed }
public enum InspectorPresentation: String, Sendable, CaseIterable { case column, sheet }

public struct SizeClassPair: Sendable, Equatable {
    public var horizontal: SizeClass
    public var vertical: SizeClass
}

public struct DeviceInfo: Sendable, Equatable {
    public var pose: Pose
    public var display: Display
    public var orientation: Orientation
    public var layoutDirection: LayoutDirection
    public var width: Double
    public var height: Double
    public var sizeClass: SizeClassPair
    /// Extension: the app's window (differs from the screen in Split View).
    public var window: Rect
}

public struct Region: Sendable, Equatable {
    public var kind: RegionKind
    public var frame: Rect
}

public struct PlacedItem: Sendable, Equatable {
    public var id: String
    public var frame: Rect
    public var shows: Shows
    public var badge: Int?
    /// Extension: for `system.tabs`, the tabs the compressed control holds.
    public var tabs: [String]?
}

public struct Bar: Sendable, Equatable {
    public var id: String
    public var container: String
    public var role: BarRole
    public var axis: Axis
    public var edge: BarEdge
    public var frame: Rect
    public var background: Bool   // true: opaque
    public var items: [PlacedItem]
    public var overflow: [String]
    public var tabBar: TabBarState?
}

public struct ColumnInfo: Sendable, Equatable {
    public var id: String
    public var frame: Rect
    public var sizeClass: SizeClassPair
    public var verticalBarEdge: HorizontalEdge?
}

public struct SheetInfo: Sendable, Equatable {
    public var id: String
    public var placement: SheetPlacement
    public var frame: Rect
    public var axis: Axis
}

public struct InspectorInfo: Sendable, Equatable {
    public var presentation: InspectorPresentation
    public var frame: Rect
}

public struct CustomInfo: Sendable, Equatable {
    public var id: String
    public var frame: Rect
    public var verticalBarEdge: HorizontalEdge?
    public var collides: [RegionKind]
}

public struct FloatingInfo: Sendable, Equatable {
    public var id: String
    public var frame: Rect
}

public struct Diagnostic: Sendable, Equatable {
    /// What the diagnostic is about; on the wire it is the case's name (docs/rules.md).
    public enum Code: String, Sendable, CaseIterable {
        case customBarStaysPut, customBarCollides, titleOnlyItem, titleOnlyTab, itemHidden, reservedEllipsis, missingTitle
        case inconsistentOptOut, floatingButtonOnFold, floatingButtonFromScreenEdge, badgedItemInOverflow, singleControlSheet
        case trailingSheetDetents, columnTooShort, detailAwayFromBarEdge, keyboardClamped
    }

    public var code: Code
    public var subject: String
    public var message: String
}

public struct Layout: Sendable, Equatable {
    public var device: DeviceInfo
    public var barAxis: Axis
    public var verticalBarEdge: HorizontalEdge?
    public var verticalBarSide: Side?
    public var safeArea: Insets
    public var layoutMargins: Insets
    public var regions: [Region]
    public var bars: [Bar]
    public var columns: [ColumnInfo]
    public var sheet: SheetInfo?
    public var inspector: InspectorInfo?
    public var custom: [CustomInfo]
    public var floating: [FloatingInfo]
    public var diagnostics: [Diagnostic]
}

extension Bar {
    /// `==`, field by field, reading the other bar in place (the synthesized `==`, inlined,
    /// copied both bars and retained their strings and arrays): the builder's test for
    /// taking the last build's bar instead of the one it just made.
    /// Both bars read in place: a method on one copied it first.
    static func sameContent(_ a: UnsafePointer<Bar>, _ o: UnsafePointer<Bar>) -> Bool {
        a.pointee.id == o.pointee.id && a.pointee.frame == o.pointee.frame && a.pointee.items == o.pointee.items
            && a.pointee.overflow == o.pointee.overflow && a.pointee.background == o.pointee.background
            && a.pointee.container == o.pointee.container && a.pointee.role == o.pointee.role
            && a.pointee.axis == o.pointee.axis && a.pointee.edge == o.pointee.edge && a.pointee.tabBar == o.pointee.tabBar
    }
}

extension Diagnostic {
    /// `==`, reading both notes in place (the synthesized `==` copied both and retained their
    /// strings): the builder's test for taking the last build's note, and the encoder's for
    /// keeping the last body's diagnostics.
    static func same(_ a: UnsafePointer<Diagnostic>, _ b: UnsafePointer<Diagnostic>) -> Bool {
        a.pointee.code == b.pointee.code && a.pointee.subject == b.pointee.subject && a.pointee.message == b.pointee.message
    }
}

/// Whether two arrays have the same count and `same` holds for each pair, read in place
/// (copying an element out to compare it retains its strings and arrays); true at once
/// for the same storage. The builder and the encoder compare the last layout's arrays so.
@inline(__always)
func eachPair<T>(_ a: [T], _ b: [T], _ same: (UnsafePointer<T>, UnsafePointer<T>) -> Bool) -> Bool {
    a.withUnsafeBufferPointer { x in
        b.withUnsafeBufferPointer { y in
            guard x.count == y.count else { return false }
            guard x.baseAddress != y.baseAddress, let xs = x.baseAddress, let ys = y.baseAddress else { return true }
            for i in 0..<x.count where !same(xs + i, ys + i) { return false }
            return true
        }
    }
}
