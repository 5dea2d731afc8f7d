/// The pure engine: events in, state and layout out. Relayout is incremental: an
/// event that leaves every layout input unchanged (a hinge tick inside a pose, a
/// repeated value) does no layout work; inputs seen recently reuse their layout; the
/// scene (which screens are visible) is cached on the UI state and display, so
/// device-only events refit the bars without resolving containers again.
/// `Engine.fromScratch` is the reference all of this is tested against.
public struct Engine: Sendable {
    public let profile: DeviceProfile
    public private(set) var app: App
    public private(set) var state: DeviceState
    /// Events applied so far.
    public private(set) var seq: Int
    /// The layout, and its canonical bytes without `seq` and `digest` (see
    /// `Layout.encodeBody`): read from its entry in the recent layouts, where they live.
    public var layout: Layout { recentLayouts.withUnsafeBufferPointer { $0[current].layout } }
    public var body: [UInt8] { recentLayouts.withUnsafeBufferPointer { $0[current].body } }
    public private(set) var digest: UInt64
    /// crease64v, except when replaying an older trace (crease64x4, crease64 or FNV-1a: `DigestAlgorithm`).
    public let digestAlgorithm: DigestAlgorithm
    /// The profile's orientation filter, its bounds worked out once.
    private let filter: DeviceOrientationFilter

    /// Keeps the last encoded layout's bytes per member and bar, to copy what did not change.
    private var encoder = LayoutEncoder()
    /// Builds the layouts, keeping what the last build fitted and derived from the manifest
    /// (its `BuildMemo`), reused where its inputs did not change, and the current scene.
    private var builder: LayoutBuilder
    private var sceneKey: SceneKey
    /// Scenes of recently seen UI states (and display, orientation, width class): going
    /// back and forth (push and pop, a sheet presented and dismissed, tabs switched) revisits
    /// a few, and resolving one walks the containers. Searched linearly; once full, a new
    /// one replaces the oldest (`nextScene`). Emptied for a new app.
    private var recentScenes: [(key: SceneKey, scene: Scene)] = []
    private var nextScene = 0
    static let sceneCapacity = 4
    /// Layouts of recently seen inputs. A rig folding back and forth, a keyboard going up
    /// and down or a Live Activity toggling revisits the same few inputs; those relayouts
    /// are a lookup. Searched linearly: no hashing, no order questions. The inputs are kept
    /// apart from the layouts so that the search reads only inputs (a search over whole
    /// entries copied each one, layout and all). Each slot stays where it is: once full, a
    /// new entry takes the slot used least recently (`recentUse`), so nothing shifts.
    /// The current layout is always one of them (`current`): its inputs, layout and body are
    /// stored once, so a relayout neither copies them in nor releases the last ones.
    private var recentInputs: [LayoutInputs] = []
    private var recentLayouts: [RecentLayout] = []
    /// Per slot, when it was last stored or hit (`recentClock` then).
    private var recentUse: [Int] = []
    private var recentClock = 0
    static let recentCapacity = 8
    /// The slot of the layout shown.
    private var current = 0
    /// Layouts evicted from the recent cache and not yet freed. Freeing one (its bars, items
    /// and body) costs about a tenth of a relayout and nothing waits for it, so the shell
    /// frees them once it has replied (`releaseRetired`); a caller that never does has the
    /// oldest freed at the next eviction past `retiredCapacity`, as if there were no list.
    private var retired: [RecentLayout] = []
    static let retiredCapacity = 8

    /// Whether `layout` depends on `reduceTransparency` (see `BuildMemo.readReduceTransparency`).
    private var layoutReadsReduceTransparency: Bool

    private struct RecentLayout: Sendable {
        var layout: Layout
        var body: [UInt8]
        var digest: UInt64
        var readsReduceTransparency: Bool
    }

    public init(profile: DeviceProfile = .builtin, app: App, digestAlgorithm: DigestAlgorithm = .crease64v) {
        self.init(profile: profile, app: app, state: DeviceState(app: app), seq: 0, digestAlgorithm: digestAlgorithm)
    }

    /// Resumes from a recorded state (trace slices, replays from the middle).
    public init(profile: DeviceProfile, app: App, state: DeviceState, seq: Int, digestAlgorithm: DigestAlgorithm = .crease64v) {
        self.digestAlgorithm = digestAlgorithm
        self.profile = profile
        filter = DeviceOrientationFilter(profile: profile)
        self.app = app
        self.state = state
        self.seq = seq
        let g = ScreenGeometryRule.geometry(profile: profile, state: state)
        sceneKey = SceneKey(ui: state.ui, geometry: g)
        builder = LayoutBuilder(p: profile, app: app, state: state, g: g, scene: Scene(app: app, key: sceneKey), remembers: true)
        let layout = builder.rebuild()
        layoutReadsReduceTransparency = builder.memo.readReduceTransparency
        let body = encoder.encode(layout)
        digest = digestAlgorithm.digest(body)
        retired.reserveCapacity(Engine.retiredCapacity)
        remember(LayoutInputs(state, profile: profile), layout, body)
    }

    /// Applies one event at `time`, the engine's clock (the daemon's read time, recorded;
    /// only `motion` reads it, and refuses to go without). Returns whether the layout changed
    /// (a new digest). A rejected event throws and changes nothing, not even `seq`.
    @discardableResult
    public mutating func apply(_ event: Event, at time: Int64? = nil) throws(InputError) -> Bool {
        // In place, without copying the state and the app first: the state machine checks
        // everything before it changes anything, so a rejected event leaves both as they were.
        let change = try StateMachine.apply(event, at: time, to: &state, app: &app, profile: profile, filter: filter)
        seq += 1
        switch change {
        case .bookkeeping: return false
        case .inputs: return relayout(force: false)
        case .app: return relayout(force: true)
        }
    }

    private mutating func relayout(force: Bool) -> Bool {
        let inputs = LayoutInputs(state, profile: profile)
        // Against the inputs the current layout was stored with. (A `reduceTransparency`
        // toggle the layout does not read leaves that entry's inputs as they were: the layout
        // is the same for both values.)
        if !force, recentInputs.withUnsafeBufferPointer({ inputs.keepsLayout(of: $0[current], readsReduceTransparency: layoutReadsReduceTransparency) }) {
            return false
        }
        if force {
            // A new app: nothing seen before applies. What the entries hold is freed with the
            // evicted layouts, after the reply.
            while let entry = recentLayouts.popLast() { retire(entry) }
            recentInputs.removeAll(keepingCapacity: true)
            recentUse.removeAll(keepingCapacity: true)
        } else if let hit = recentIndex(of: inputs) {
            recentClock += 1
            recentUse[hit] = recentClock
            current = hit
            let old = digest
            recentLayouts.withUnsafeBufferPointer { entries in
                digest = entries[hit].digest
                layoutReadsReduceTransparency = entries[hit].readsReduceTransparency
            }
            return digest != old
        }
        let g = ScreenGeometryRule.geometry(profile: profile, state: state)
        if force {
            builder.app = app
            recentScenes.removeAll(keepingCapacity: true)
            nextScene = 0
        }
        if force || !sceneKey.matches(ui: state.ui, geometry: g) {
            sceneKey = SceneKey(ui: state.ui, geometry: g)
            builder.scene = scene(of: sceneKey)
        }
        builder.state.assign(state)
        builder.g = g
        // Changed inputs almost always change the layout, so it is encoded without first
        // comparing it with the old one; the digest tells whether anything changed.
        let layout = builder.rebuild()
        layoutReadsReduceTransparency = builder.memo.readReduceTransparency
        let body = encoder.encode(layout)
        let old = digest
        digest = digestAlgorithm.digest(body)
        remember(consume inputs, consume layout, consume body)
        return digest != old
    }

    /// The scene of `key`: a recent one, or resolved and kept.
    mutating func scene(of key: SceneKey) -> Scene {
        if let i = recentScenes.firstIndex(where: { $0.key == key }) { return recentScenes[i].scene }
        let scene = Scene(app: app, key: key)
        if recentScenes.count < Engine.sceneCapacity {
            recentScenes.append((key, scene))
        } else {
            recentScenes[nextScene] = (key, scene)
            nextScene = (nextScene + 1) % Engine.sceneCapacity
        }
        return scene
    }

    private func recentIndex(of wanted: LayoutInputs) -> Int? {
        // In place: the loop over the array's elements copied each one (retaining its UI state).
        recentInputs.withUnsafeBufferPointer { entries in
            for i in entries.indices where entries[i].device == wanted.device && entries[i].ui == wanted.ui { return i }
            return nil
        }
    }

    /// Stores a new layout (with `digest` and `layoutReadsReduceTransparency`) as the current
    /// one, in a free slot or the one used least recently.
    private mutating func remember(_ inputs: consuming LayoutInputs, _ layout: consuming Layout, _ body: consuming [UInt8]) {
        recentClock += 1
        var entry = RecentLayout(layout: layout, body: body, digest: digest, readsReduceTransparency: layoutReadsReduceTransparency)
        guard recentInputs.count == Engine.recentCapacity else {
            current = recentInputs.count
            recentInputs.append(inputs)
            recentLayouts.append(consume entry)
            recentUse.append(recentClock)
            return
        }
        var slot = 0
        for i in recentUse.indices where recentUse[i] < recentUse[slot] { slot = i }
        current = slot
        recentInputs[slot] = consume inputs
        // The evicted entry is swapped out into `retired`, unreleased: assigning into the
        // slot freed the evicted layout here, on the way to the reply.
        swap(&entry, &recentLayouts[slot])
        retire(consume entry)
        recentUse[slot] = recentClock
    }

    /// Puts an entry that left the recent layouts in `retired`, freeing the newest waiting
    /// one first when the list is full.
    private mutating func retire(_ entry: consuming RecentLayout) {
        if retired.count == Engine.retiredCapacity { retired.removeLast() }
        retired.append(entry)
    }

    /// Frees the layouts evicted from the recent cache since the last call. For the shell,
    /// once the replies to the events that evicted them are out (the daemon calls it at the
    /// end of each loop iteration); the engine's results do not depend on when it is called.
    public mutating func releaseRetired() {
        // Most loop iterations evicted nothing: `removeAll` of an empty array still cost ~100
        // instructions per round trip (it goes through `replaceSubrange`).
        if !retired.isEmpty { retired.removeAll(keepingCapacity: true) }
    }

    /// How many evicted layouts wait for `releaseRetired`.
    public var retiredCount: Int { retired.count }

    /// The layout line: canonical JSON with `seq` and `digest`, no newline.
    public func layoutJSON() -> [UInt8] {
        recentLayouts.withUnsafeBufferPointer { Layout.assemble(seq: seq, digest: digest, body: $0[current].body) }
    }

    /// Appends the layout line to `out` without building it separately first.
    public func appendLayoutJSON(to out: inout [UInt8]) {
        recentLayouts.withUnsafeBufferPointer { Layout.appendAssembled(seq: seq, digest: digest, body: $0[current].body, to: &out) }
    }

    public func diagnosticsJSON() -> [UInt8] { layout.diagnosticsJSON() }

    public var appName: String { app.name }
    public var profileName: String { profile.name }

    /// The layout computed with no caches at all: the reference for incremental relayout.
    public static func fromScratch(profile: DeviceProfile, app: App, state: DeviceState, seq: Int,
                                   digestAlgorithm: DigestAlgorithm = .crease64v) -> [UInt8] {
        let body = LayoutBuilder.build(profile: profile, app: app, state: state).encodeBody()
        return Layout.assemble(seq: seq, digest: digestAlgorithm.digest(body), body: body)
    }
}

extension DeviceState {
    /// `self = other`, keeping the UI state when it is `other`'s storage already (device
    /// events leave it as it is): assigning the whole state retained and released its three
    /// arrays every relayout.
    mutating func assign(_ other: DeviceState) {
        inputs = other.inputs
        bookkeeping = other.bookkeeping
        if ui.sheet != other.ui.sheet || !BuildMemo.identical(ui.selectedTab, other.ui.selectedTab)
            || !BuildMemo.identical(ui.pushed, other.ui.pushed) || !BuildMemo.identical(ui.inspector, other.ui.inspector) {
            ui = other.ui
        }
    }
}

/// Everything in the state that the layout reads: the device's inputs as the state keeps
/// them, but Live Activities counted only up to what the island shows, and the UI state.
/// The device's plain values are compared before the UI state's arrays (the recent-layouts
/// search rejects most entries on these alone).
struct LayoutInputs: Hashable {
    var device: DeviceInputs
    var ui: UIState

    /// Whether the layout of `old` is the layout of these inputs: they are equal, or differ
    /// only in `reduceTransparency` and that layout never read it (no vertical bar shows a
    /// background). A method of the inputs: the engine's own method, called inside `||`,
    /// was handed a memcpy of the engine (about 300 instructions) per relayout.
    func keepsLayout(of old: LayoutInputs, readsReduceTransparency: Bool) -> Bool {
        if device == old.device { return ui == old.ui }
        guard !readsReduceTransparency, device.reduceTransparency != old.device.reduceTransparency else { return false }
        var same = device
        same.reduceTransparency = old.device.reduceTransparency
        return same == old.device && ui == old.ui
    }

    /// Inlined: called on its own it was handed copies of the state and the profile (about
    /// 300 instructions per relayout).
    @inline(__always)
    init(_ s: DeviceState, profile: DeviceProfile) {
        device = s.inputs
        let shown = Int(profile.maxActivitiesShown)
        if device.liveActivities > shown { device.liveActivities = shown }
        ui = s.ui
    }
}

/// What the scene is derived from: the UI state and, of the geometry, the display, the
/// orientation and the width class. The one place geometry becomes the scene's inputs.
struct SceneKey: Equatable {
    var ui: UIState
    var display: Display
    var portrait: Bool
    var compactWidth: Bool

    init(ui: UIState, geometry g: ScreenGeometry) {
        self.ui = ui
        display = g.display
        portrait = !g.orientation.isLandscape
        compactWidth = g.sizeClass.horizontal == .compact
    }

    /// `self == SceneKey(ui: ui, geometry: g)`, without making (and copying the UI state into) a key.
    func matches(ui other: UIState, geometry g: ScreenGeometry) -> Bool {
        display == g.display && portrait == !g.orientation.isLandscape && compactWidth == (g.sizeClass.horizontal == .compact)
            && ui == other
    }
}

extension Scene {
    init(app: App, key: SceneKey) {
        self.init(app: app, ui: key.ui, display: key.display, portrait: key.portrait, compactWidth: key.compactWidth)
    }

    /// The scene of `ui` in this geometry.
    init(app: App, ui: UIState, geometry: ScreenGeometry) { self.init(app: app, key: SceneKey(ui: ui, geometry: geometry)) }
}
