@testable import CreaseCore

/// SplitMix64: a tiny seeded generator so random tests replay exactly.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func builtin(_ name: String) -> App { BuiltinApps.app(named: name)! }

func app(_ json: String) throws -> App { try App.decode(json: Array(json.utf8)) }

/// A minimal manifest around one navigation stack screen.
func stackApp(title: String? = "Screen", toolbar: String, extra: String = "") throws -> App {
    let titleField = title.map { "\"title\": \"\($0)\", " } ?? ""
    return try app(#"{"name": "T", "root": {"kind": "navigationStack", "id": "stack", "screens": [{"id": "s", "# + titleField + #""toolbar": ["# + toolbar + "]" + extra + "}]}}")
}

func engine(_ app: App, _ events: [Event]) throws -> Engine {
    var e = Engine(profile: .builtin, app: app)
    for ev in events { try e.apply(ev) }
    return e
}

extension Layout {
    var verticalBar: Bar? { bars.first { $0.role == .vertical } }
    func bar(_ role: BarRole) -> Bar? { bars.first { $0.role == role } }
    var allItemIds: [String] { bars.flatMap { $0.items.map(\.id) } }
    var allOverflow: [String] { bars.flatMap(\.overflow) }
    func item(_ id: String) -> PlacedItem? { bars.lazy.flatMap(\.items).first { $0.id == id } }
    func barHolding(_ id: String) -> Bar? { bars.first { $0.items.contains { $0.id == id } } }
    func hasDiagnostic(_ code: String, _ subject: String? = nil) -> Bool {
        diagnostics.contains { $0.code.rawValue == code && (subject == nil || $0.subject == subject) }
    }
}

/// Poses used across rule tests.
enum Pose_ {
    static let outerPortrait: [Event] = []
    static let outerLandscapeRight: [Event] = [.orientation(.landscapeRight)]
    static let outerLandscapeLeft: [Event] = [.orientation(.landscapeLeft)]
    static let innerPortrait: [Event] = [.hinge(angle: 180)]
    static let innerLandscape: [Event] = [.hinge(angle: 180), .orientation(.landscapeLeft)]
    static let partlyOpenLandscape: [Event] = [.hinge(angle: 90), .orientation(.landscapeLeft)]
}

/// Random valid-and-invalid events drawn from an app's own ids, for property tests.
/// Random events of every kind (`EventKind.random`), the hinge four times as often as each
/// other kind (it is the rigs' stream), on a clock 10 ms a step (`time`: what to apply the
/// last event at; motion samples need it).
struct RandomEvents {
    var rng: SplitMix64
    let app: App
    let profile: DeviceProfile
    /// The kinds drawn from, the hinge four times.
    let kinds: [EventKind]
    private(set) var time: Int64 = 0

    /// `without`: kinds left out (`.app` where a test holds the app fixed).
    init(seed: UInt64, app: App, profile: DeviceProfile = .builtin, without: [EventKind] = []) {
        rng = SplitMix64(seed: seed)
        self.app = app
        self.profile = profile
        kinds = ([EventKind](repeating: .hinge, count: 3) + EventKind.allCases).filter { !without.contains($0) }
    }

    mutating func next() -> Event {
        time += 10_000_000
        let kind = kinds[Int(rng.next() % UInt64(kinds.count))]
        return kind.random(using: &rng, app: app, profile: profile)
    }
}

/// The declared items a person could reach right now, by the rules: the visible
/// screens' toolbars and overflow menus, the tabs, a presented sheet or inspector,
/// and the keyboard accessory while the keyboard is up. Spacers are not controls.
func reachableDeclaredIds(_ e: Engine) -> [String] {
    let app = e.app, ui = e.state.ui
    let g = ScreenGeometryRule.geometry(profile: e.profile, state: e.state)
    let scene = Scene(app: app, ui: ui, geometry: g)
    var ids: [String] = []
    func add(_ items: [Item]) { ids += items.filter { $0.kind == .button }.map(\.id) }
    let screens = scene.columns.isEmpty ? [scene.primary] : scene.columns
    for s in screens { add(app.screens[s].toolbar); add(app.screens[s].overflowMenu) }
    if let tv = scene.tabView, case .tabView(let t) = app.containers[tv] { ids += t.tabs.map(\.id) }
    if let ref = ui.sheet { add(app.screens[ref.screen].sheets[ref.sheet].toolbar) }
    if scene.inspector, let items = app.screens[scene.primary].inspector { add(items) }
    if e.state.keyboardVisible { add(app.screens[scene.primary].keyboardAccessory) }
    return ids
}
