/// The names layouts print for their enums, as static bytes: the encoder copies them
/// without going through `String`. Each equals the case's `rawValue` (tested).
protocol JSONName: CaseIterable, RawRepresentable where RawValue == String {
    var jsonName: StaticString { get }
}

extension Axis: JSONName {
    var jsonName: StaticString {
        switch self {
        case .vertical: "vertical"
        case .horizontal: "horizontal"
        }
    }
}

extension Side: JSONName {
    var jsonName: StaticString {
        switch self {
        case .left: "left"
        case .right: "right"
        }
    }
}

extension HorizontalEdge: JSONName {
    var jsonName: StaticString {
        switch self {
        case .leading: "leading"
        case .trailing: "trailing"
        }
    }
}

extension BarEdge: JSONName {
    var jsonName: StaticString {
        switch self {
        case .top: "top"
        case .bottom: "bottom"
        case .leading: "leading"
        case .trailing: "trailing"
        }
    }
}

extension SizeClass: JSONName {
    var jsonName: StaticString {
        switch self {
        case .compact: "compact"
        case .regular: "regular"
        }
    }
}

extension RegionKind: JSONName {
    var jsonName: StaticString {
        switch self {
        case .statusBar: "statusBar"
        case .dynamicIsland: "dynamicIsland"
        case .division: "division"
        case .keyboard: "keyboard"
        case .pip: "pip"
        }
    }
}

extension BarRole: JSONName {
    var jsonName: StaticString {
        switch self {
        case .vertical: "vertical"
        case .navigation: "navigation"
        case .toolbar: "toolbar"
        case .tabBar: "tabBar"
        case .sheet: "sheet"
        case .inspector: "inspector"
        case .keyboardAccessory: "keyboardAccessory"
        case .sidebar: "sidebar"
        }
    }
}

extension Shows: JSONName {
    var jsonName: StaticString {
        switch self {
        case .symbol: "symbol"
        case .title: "title"
        case .symbolAndTitle: "symbolAndTitle"
        }
    }
}

extension TabBarState: JSONName {
    var jsonName: StaticString {
        switch self {
        case .expanded: "expanded"
        case .compressed: "compressed"
        }
    }
}

extension InspectorPresentation: JSONName {
    var jsonName: StaticString {
        switch self {
        case .column: "column"
        case .sheet: "sheet"
        }
    }
}

extension Pose: JSONName {
    var jsonName: StaticString {
        switch self {
        case .closed: "closed"
        case .partiallyOpen: "partiallyOpen"
        case .fullyOpen: "fullyOpen"
        }
    }
}

extension Display: JSONName {
    var jsonName: StaticString {
        switch self {
        case .outer: "outer"
        case .inner: "inner"
        }
    }
}

extension Orientation: JSONName {
    var jsonName: StaticString {
        switch self {
        case .portrait: "portrait"
        case .portraitUpsideDown: "portraitUpsideDown"
        case .landscapeLeft: "landscapeLeft"
        case .landscapeRight: "landscapeRight"
        }
    }
}

extension LayoutDirection: JSONName {
    var jsonName: StaticString {
        switch self {
        case .ltr: "ltr"
        case .rtl: "rtl"
        }
    }
}

extension SheetPlacement: JSONName {
    var jsonName: StaticString {
        switch self {
        case .automatic: "automatic"
        case .center: "center"
        case .leading: "leading"
        case .trailing: "trailing"
        }
    }
}
