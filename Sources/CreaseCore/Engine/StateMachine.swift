/// What an applied event did, so the engine knows what to recompute.
public enum StateChange: Sendable, Equatable {
    /// Only bookkeeping moved (a hinge reading inside its pose, a motion sample that turned
    /// nothing): no layout input did.
    case bookkeeping
    /// Layout inputs may have moved; the engine compares them with the layout's.
    case inputs
    /// A different app: nothing laid out before applies.
    case app
}

/// The device-state reducer: applies one event to the state, or rejects it with an
/// error naming the field and leaves the state untouched.
/// `time` is the engine's clock (the daemon's read time, recorded): only `motion` reads it.
/// Every check comes before any change, so a rejected event leaves state and app as they were.
public enum StateMachine {
    @discardableResult
    public static func apply(_ event: Event, at time: Int64?, to state: inout DeviceState, app: inout App,
                             profile: DeviceProfile) throws(InputError) -> StateChange {
        try apply(event, at: time, to: &state, app: &app, profile: profile, filter: DeviceOrientationFilter(profile: profile))
    }

    /// With the profile's orientation filter worked out once (the engine keeps it). Inlined
    /// into the engine, where a hinge reading inside its pose costs a few dozen instructions in all.
    @discardableResult @inline(__always)
    public static func apply(_ event: Event, at time: Int64?, to state: inout DeviceState, app: inout App,
                             profile: DeviceProfile, filter: DeviceOrientationFilter) throws(InputError) -> StateChange {
        // The two high-rate events first, each matched alone: the switch below binds payloads
        // of every kind and cost a reading about 35 instructions more (BENCHMARKS.md). A hinge
        // reading inside its pose and a motion sample that turns nothing change no layout input.
        if case .hinge(let reading) = event {
            return try HingeRule.apply(reading, profile: profile, supported: app.supportedOrientations, to: &state) ? .inputs : .bookkeeping
        }
        if case .motion(let gravity) = event {
            let turned = MotionRule.apply(gravity, at: try MotionRule.time(time), filter: filter,
                                          supported: app.supportedOrientations, to: &state)
            return turned ? .inputs : .bookkeeping
        }
        switch event {
        case .hinge, .motion:
            break  // above
        case .orientation(let o):
            state.orientation = o
            state.deviceOrientation = nil
            state.pendingOrientation = nil
        case .deviceOrientation(let o):
            state.deviceOrientation = o
            state.pendingOrientation = nil
            state.orientation = InterfaceOrientationRule.resolve(state, supported: app.supportedOrientations)
        case .rotationLock(let enabled):
            // The lock hands the orientation back to the device: an interface set directly
            // stands for the device orientation that shows it.
            state.rotationLock = enabled
            if state.deviceOrientation == nil { state.deviceOrientation = DeviceOrientation(interface: state.orientation) }
            state.orientation = InterfaceOrientationRule.resolve(state, supported: app.supportedOrientations)
        case .keyboard(let visible, let height):
            state.keyboardVisible = visible
            // A hide keeps no height; a show without one uses the profile's keyboard.
            state.keyboardHeight = visible ? height : nil
        case .pip(let active): state.pipActive = active
        case .liveActivities(let count): state.liveActivities = count
        case .splitView(let side): state.splitSide = side
        case .layoutDirection(let d): state.layoutDirection = d
        case .reduceTransparency(let enabled): state.reduceTransparency = enabled
        case .select(let tabId): try select(tabId, state: &state, app: app)
        case .push(let screenId): try push(screenId, state: &state, app: app)
        case .pop: try pop(state: &state, app: app)
        case .present(let sheetId): try present(sheetId, state: &state, app: app)
        case .dismiss:
            guard state.ui.sheet != nil else { throw InputError(.invalidState, "dismiss: no sheet is presented", field: "event") }
            state.ui.sheet = nil
        case .inspector(let presented): try inspector(presented, state: &state, app: app)
        case .app(let newApp):
            // The same manifest again (a rig reloading its app) keeps the app the engine's
            // caches were computed from; only the UI state it resets can change the layout.
            let different = newApp != app
            if different { app = newApp }
            state.ui = UIState(app: newApp)
            state.orientation = InterfaceOrientationRule.resolve(state, supported: newApp.supportedOrientations)
            return different ? .app : .inputs
        }
        return .inputs
    }

    static func requireNoSheet(_ state: DeviceState, _ what: String, field: String) throws(InputError) {
        if state.ui.sheet != nil {
            throw InputError(.invalidState, "\(what): a sheet is presented; dismiss it first", field: field)
        }
    }

    static func select(_ tabId: String, state: inout DeviceState, app: App) throws(InputError) {
        let path = VisiblePath(app: app, ui: state.ui)
        guard let tv = path.tabView, case .tabView(let spec) = app.containers[tv] else {
            throw InputError(.unknownId, "select: the app has no tab view", field: "tab")
        }
        guard let index = spec.tabs.firstIndex(where: { $0.id.sameBytes(tabId) }) else {
            throw InputError(.unknownId, "select: no tab \"\(tabId)\" in tab view \"\(spec.id)\"", field: "tab")
        }
        try requireNoSheet(state, "select", field: "tab")
        state.ui.selectedTab[tv] = index
    }

    static func push(_ screenId: String, state: inout DeviceState, app: App) throws(InputError) {
        let path = VisiblePath(app: app, ui: state.ui)
        guard case .navigationStack(let stack) = app.containers[path.inner] else {
            throw InputError(.invalidState, "push: the visible container \"\(app.containers[path.inner].id)\" is not a navigation stack", field: "screen")
        }
        guard let screen = stack.screens.first(where: { app.screens[$0].id.sameBytes(screenId) }) else {
            throw InputError(.unknownId, "push: no screen \"\(screenId)\" in navigation stack \"\(stack.id)\"", field: "screen")
        }
        try requireNoSheet(state, "push", field: "screen")
        // A navigation controller holds a screen once (UIKit refuses to push a view
        // controller already on its stack); the root is on it from the start.
        guard screen != stack.screens[0], !state.ui.pushed[path.inner].contains(screen) else {
            throw InputError(.invalidState, "push: screen \"\(screenId)\" is already on navigation stack \"\(stack.id)\"", field: "screen")
        }
        guard state.ui.pushed[path.inner].count < App.maxStackDepth else {
            throw InputError(.outOfRange, "push: navigation stack \"\(stack.id)\" is already \(App.maxStackDepth) screens deep", field: "screen")
        }
        state.ui.pushed[path.inner].append(screen)
    }

    static func pop(state: inout DeviceState, app: App) throws(InputError) {
        let path = VisiblePath(app: app, ui: state.ui)
        guard case .navigationStack(let stack) = app.containers[path.inner] else {
            throw InputError(.invalidState, "pop: the visible container \"\(app.containers[path.inner].id)\" is not a navigation stack", field: "event")
        }
        guard !state.ui.pushed[path.inner].isEmpty else {
            throw InputError(.invalidState, "pop: navigation stack \"\(stack.id)\" is at its root", field: "event")
        }
        try requireNoSheet(state, "pop", field: "event")
        state.ui.pushed[path.inner].removeLast()
    }

    static func present(_ sheetId: String, state: inout DeviceState, app: App) throws(InputError) {
        let path = VisiblePath(app: app, ui: state.ui)
        // A sheet belongs to one of the visible screens (any column of a split view).
        for screen in path.visibleScreens(app: app, ui: state.ui) {
            if let index = app.screens[screen].sheets.firstIndex(where: { $0.id.sameBytes(sheetId) }) {
                if let current = state.ui.sheet {
                    let presented = app.screens[current.screen].sheets[current.sheet].id
                    throw InputError(.invalidState, "present: sheet \"\(presented)\" is already presented", field: "sheet")
                }
                state.ui.sheet = UIState.SheetRef(screen: screen, sheet: index)
                return
            }
        }
        throw InputError(.unknownId, "present: no sheet \"\(sheetId)\" on the visible screen", field: "sheet")
    }

    static func inspector(_ presented: Bool, state: inout DeviceState, app: App) throws(InputError) {
        let path = VisiblePath(app: app, ui: state.ui)
        let screen = path.primaryScreen(app: app, ui: state.ui)
        guard app.screens[screen].inspector != nil else {
            throw InputError(.unknownId, "inspector: screen \"\(app.screens[screen].id)\" declares no inspector", field: "presented")
        }
        state.ui.inspector[screen] = presented
    }
}
