import CreaseCore

/// The colours of every drawing, in one place so that the legend and the shapes agree.
/// A bar's fill tells its role; its outline tells its axis.
enum Palette {
    static func role(_ r: BarRole) -> String {
        switch r {
        case .vertical: "#6d28d9"
        case .navigation: "#2563eb"
        case .toolbar: "#059669"
        case .tabBar: "#ea580c"
        case .sidebar: "#0891b2"
        case .sheet: "#c026d3"
        case .inspector: "#0d9488"
        case .keyboardAccessory: "#57534e"
        }
    }

    static let allRoles: [BarRole] = [.vertical, .navigation, .toolbar, .tabBar, .sidebar, .sheet, .inspector, .keyboardAccessory]

    static func axis(_ a: Axis) -> String {
        switch a {
        case .vertical: "#e11d48"
        case .horizontal: "#1e293b"
        }
    }

    static func axisWidth(_ a: Axis) -> Double { a == .vertical ? 3 : 1.5 }

    static func region(_ k: RegionKind) -> String {
        switch k {
        case .statusBar: "#94a3b8"
        case .dynamicIsland: "#000000"
        case .division: "#78716c"
        case .keyboard: "#64748b"
        case .pip: "#1e3a8a"
        }
    }

    static let screen = "#ffffff"
    static let bezel = "#111827"
    static let page = "#f1f5f9"
    static let ink = "#0f172a"
    static let muted = "#64748b"
    static let safeArea = "#16a34a"
    static let column = "#475569"
    static let custom = "#ca8a04"
    static let collision = "#dc2626"
    static let floating = "#0284c7"
    static let badge = "#ef4444"
    static let callout = "#b45309"
    static let otherApp = "#cbd5e1"

    static func pose(_ p: Pose) -> String {
        switch p {
        case .closed: "#e2e8f0"
        case .partiallyOpen: "#fde68a"
        case .fullyOpen: "#bbf7d0"
        }
    }
    static let angle = "#1d4ed8"
    static let layoutChange = "#7c3aed"
    static let mark = "#b45309"
    static let latency = "#0f766e"
    static let overBudget = "#dc2626"
    static let glitch = "#be123c"

    static let sans = "DejaVu Sans, Helvetica, Arial, sans-serif"
    static let mono = "DejaVu Sans Mono, Menlo, Consolas, monospace"
}
