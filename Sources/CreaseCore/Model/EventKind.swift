/// Each kind of event, defined once: its wire name, its fields, how it decodes, what state it
/// changes, the values a plan explores and a fuzzer feeds, and a random generator for the
/// property tests. `Event.kind` maps every case to its kind and each member here switches over
/// every kind, so an event case without its spec does not compile. Event names, decoding, the
/// state machine's documentation, `crease plan`'s inputs, the fuzzers' vocabulary and the
/// property tests' generator all read this; `EventKindTests` walks it against docs/events.md.
public enum EventKind: String, CaseIterable, Sendable {
    case hinge, orientation, motion, rotationLock, keyboard, pip, liveActivities, splitView, layoutDirection,
         reduceTransparency, select, push, pop, present, dismiss, inspector, app

    /// The wire names, as in the `"event"` key.
    public static let names = allCases.map(\.rawValue)

    /// The fields its object may carry besides `event`, `ts` and `id`.
    public var fields: [StaticString] {
        switch self {
        case .hinge: ["angle", "unit"]
        case .orientation: ["value", "convention"]
        case .motion: ["gravity"]
        case .rotationLock, .reduceTransparency: ["enabled"]
        case .keyboard: ["visible", "height"]
        case .pip: ["active"]
        case .liveActivities: ["count"]
        case .splitView: ["side"]
        case .layoutDirection: ["value"]
        case .select: ["tab"]
        case .push: ["screen"]
        case .pop, .dismiss: []
        case .present: ["sheet"]
        case .inspector: ["presented"]
        case .app: ["manifest"]
        }
    }

    /// The members of the state it may change (the state machine sets no others). Every kind
    /// reaches a layout input (`StateMember.isLayoutInput`): the bookkeeping a hinge, motion
    /// or lock sets shows through the pose or the orientation.
    public var changes: [StateMember] {
        switch self {
        // The display a pose shows grants its own orientations (the outer only the app's).
        case .hinge: [.hingeAngle, .pose, .display, .orientation]
        case .orientation, .motion: [.orientation, .deviceOrientation, .pendingOrientation]
        case .rotationLock: [.rotationLock, .orientation, .deviceOrientation]
        case .keyboard: [.keyboard]
        case .pip: [.pip]
        case .liveActivities: [.liveActivities]
        case .splitView: [.splitView]
        case .layoutDirection: [.layoutDirection]
        case .reduceTransparency: [.reduceTransparency]
        case .select, .push, .pop, .present, .dismiss, .inspector: [.ui]
        case .app: [.ui, .orientation]
        }
    }

    /// Whether `crease plan` explores it. The plan sets the interface orientation directly, so
    /// the device signals that reach the same orientations through the filter and the lock
    /// (`motion`, the lock, device-convention orientations) add no layout to it and are left to
    /// the orientation tests; replacing the app is a plan of another app.
    public var explored: Bool {
        switch self {
        case .motion, .rotationLock, .app: false
        case .hinge, .orientation, .keyboard, .pip, .liveActivities, .splitView, .layoutDirection, .reduceTransparency,
             .select, .push, .pop, .present, .dismiss, .inspector: true
        }
    }

    /// Decodes the kind's fields (already checked against `fields`).
    func decode(_ r: FieldReader) throws(InputError) -> Event {
        switch self {
        case .hinge:
            var angle = try r.number("angle")
            // UIHinge.angle and XCUIHinge.angle are radians; WebDriverAgent's and Appium's
            // hinge readings are degrees (docs/events.md).
            if try r.optionalEnumeration("unit", AngleUnit.self) == .rad { angle = angle * (180 / Double.pi) }
            // The profile's encoder tolerance is the engine's to apply; here only what no
            // tolerance (at most 45°) could make an angle.
            guard angle >= -EventLimits.maxAngleTolerance, angle <= EventLimits.maxAngle + EventLimits.maxAngleTolerance else {
                throw InputError.outOfRange("angle", "must be between 0 (shut) and 180 (flat) degrees, and the profile's hingeTolerance past either end", got: angle)
            }
            return .hinge(angle: angle == 0 ? 0 : angle)  // folds -0 into 0
        case .orientation:
            let convention = try r.optionalEnumeration("convention", OrientationConvention.self) ?? .interface
            switch convention {
            case .device:
                return .deviceOrientation(try r.enumeration("value", DeviceOrientation.self))
            case .interface:
                // faceUp and faceDown are device orientations only: an interface is never flat.
                if case .string(let text) = r.optional("value"), let device = DeviceOrientation(rawValue: text), device.isFlat {
                    throw InputError(.badValue, "field \"value\": \"\(text)\" is a device orientation; send it with \"convention\":\"device\"", field: "value")
                }
                return .orientation(try r.enumeration("value", Orientation.self))
            }
        case .motion:
            return .motion(try EventKind.gravity(r))
        case .rotationLock:
            return .rotationLock(enabled: try r.bool("enabled"))
        case .keyboard:
            let visible = try r.bool("visible")
            let height = try r.optionalNumber("height")
            if let h = height, !(h >= 0 && h <= EventLimits.maxKeyboardHeight) {
                throw InputError.outOfRange("height", "must be between 0 and \(Int(EventLimits.maxKeyboardHeight)) points", got: h)
            }
            return .keyboard(visible: visible, height: height.map { $0 == 0 ? 0 : $0 })
        case .pip:
            return .pip(active: try r.bool("active"))
        case .liveActivities:
            return .liveActivities(count: try r.integer("count", min: 0, max: EventLimits.maxLiveActivities))
        case .splitView:
            return .splitView(try r.enumeration("side", SplitSide.self))
        case .layoutDirection:
            return .layoutDirection(try r.enumeration("value", LayoutDirection.self))
        case .reduceTransparency:
            return .reduceTransparency(enabled: try r.bool("enabled"))
        case .select:
            return .select(tab: try r.string("tab"))
        case .push:
            return .push(screen: try r.string("screen"))
        case .pop:
            return .pop
        case .present:
            return .present(sheet: try r.string("sheet"))
        case .dismiss:
            return .dismiss
        case .inspector:
            return .inspector(presented: try r.bool("presented"))
        case .app:
            return .app(try App.decode(try r.required("manifest"), path: "manifest"))
        }
    }

    /// `gravity`: three finite numbers in g, each within an IMU's full scale.
    private static func gravity(_ r: FieldReader) throws(InputError) -> Gravity {
        let items = try r.array("gravity")
        guard items.count == 3 else {
            throw InputError(.badValue, "field \"gravity\" must be [x, y, z] in g, three numbers; got \(items.count)", field: "gravity")
        }
        var v = [0.0, 0.0, 0.0]
        for (i, item) in items.enumerated() {
            guard case .number(let n) = item else { throw InputError.wrongType("gravity", expected: "[x, y, z], three numbers in g", got: item) }
            guard abs(n) <= EventLimits.maxGravity else {
                throw InputError.outOfRange("gravity", "each component must be within ±\(Int(EventLimits.maxGravity)) g (component \(i))", got: n)
            }
            v[i] = n == 0 ? 0 : n  // folds -0 into 0
        }
        return Gravity(x: v[0], y: v[1], z: v[2])
    }

    /// The kind's representative values for `app` on `profile`: one angle inside each pose,
    /// every enumerated value, each count the island tells apart, every id the app declares.
    /// What `crease plan` explores (for the `explored` kinds) and the fuzzers feed. A `motion`
    /// sample per upright orientation and face up; `app` re-sends the app itself.
    public func values(app: App, profile: DeviceProfile) -> [Event] {
        switch self {
        case .hinge: [.hinge(angle: 0), .hinge(angle: (profile.partialOpenThreshold + profile.fullyOpenThreshold) / 2), .hinge(angle: 180)]
        case .orientation: Orientation.allCases.map { .orientation($0) }
        case .motion:
            [Gravity(x: 0, y: -1, z: 0), Gravity(x: 0, y: 1, z: 0), Gravity(x: -1, y: 0, z: 0), Gravity(x: 1, y: 0, z: 0), Gravity(x: 0, y: 0, z: -1)]
                .map { .motion($0) }
        case .rotationLock: [.rotationLock(enabled: true), .rotationLock(enabled: false)]
        case .keyboard: [.keyboard(visible: true, height: nil), .keyboard(visible: false, height: nil)]
        case .pip: [.pip(active: true), .pip(active: false)]
        case .liveActivities: (0...Int(profile.maxActivitiesShown)).map { .liveActivities(count: $0) }
        case .splitView: SplitSide.allCases.map { .splitView($0) }
        case .layoutDirection: LayoutDirection.allCases.map { .layoutDirection($0) }
        case .reduceTransparency: [.reduceTransparency(enabled: true), .reduceTransparency(enabled: false)]
        case .select: app.tabIds.map { .select(tab: $0) }
        case .push:
            app.containers.flatMap { c -> [Event] in
                guard case .navigationStack(let s) = c else { return [] }
                return s.screens.dropFirst().map { .push(screen: app.screens[$0].id) }
            }
        case .pop: [.pop]
        case .present: app.sheetIds.map { .present(sheet: $0) }
        case .dismiss: [.dismiss]
        case .inspector: app.screens.contains(where: { $0.inspector != nil }) ? [.inspector(presented: true), .inspector(presented: false)] : []
        case .app: [.app(app)]
        }
    }

    /// A random event of this kind, for property tests: angles clustered about the profile's
    /// pose thresholds (so the hysteresis is exercised), keyboard heights with and without,
    /// both orientation conventions, noisy gravity, ids of the app and one it lacks, and for
    /// `app` the app again or another built-in one.
    public func random<G: RandomNumberGenerator>(using rng: inout G, app: App, profile: DeviceProfile) -> Event {
        func pick<T>(_ a: [T]) -> T { a[Int(rng.next() % UInt64(a.count))] }
        func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }
        switch self {
        case .hinge:
            let p = profile.partialOpenThreshold, f = profile.fullyOpenThreshold, band = profile.hingeHysteresis
            let near = pick([0.0, p - band, p, p + band, 90, f - band, f, f + band, 180])
            return .hinge(angle: min(180, max(0, near + Double(Int(rng.next() % 13)) - 6)))
        case .orientation:
            return chance(70) ? .orientation(pick(Orientation.allCases)) : .deviceOrientation(pick(DeviceOrientation.allCases))
        case .motion:
            let axis = pick(values(app: app, profile: profile))
            guard case .motion(let g) = axis else { return axis }
            func noise() -> Double { Double(Int(rng.next() % 41) - 20) / 100 }
            return .motion(Gravity(x: g.x + noise(), y: g.y + noise(), z: g.z + noise()))
        case .rotationLock: return .rotationLock(enabled: chance(40))
        case .keyboard: return .keyboard(visible: chance(50), height: chance(30) ? Double(rng.next() % 900) : nil)
        case .pip: return .pip(active: chance(50))
        case .liveActivities: return .liveActivities(count: Int(rng.next() % 6))
        case .splitView: return .splitView(pick(SplitSide.allCases))
        case .layoutDirection: return .layoutDirection(pick(LayoutDirection.allCases))
        case .reduceTransparency: return .reduceTransparency(enabled: chance(50))
        case .select: return .select(tab: pick(app.tabIds + ["noSuchTab"]))
        case .push: return .push(screen: pick(app.screens.map(\.id) + ["noSuchScreen"]))
        case .pop: return .pop
        case .present: return .present(sheet: pick(app.sheetIds + ["noSuchSheet"]))
        case .dismiss: return .dismiss
        case .inspector: return .inspector(presented: chance(50))
        case .app: return .app(chance(75) ? app : BuiltinApps.app(named: pick(BuiltinApps.names)) ?? app)
        }
    }
}

extension Event {
    /// The event's kind: exhaustive, so a new case needs its spec.
    public var kind: EventKind {
        switch self {
        case .hinge: .hinge
        case .orientation, .deviceOrientation: .orientation
        case .motion: .motion
        case .rotationLock: .rotationLock
        case .keyboard: .keyboard
        case .pip: .pip
        case .liveActivities: .liveActivities
        case .splitView: .splitView
        case .layoutDirection: .layoutDirection
        case .reduceTransparency: .reduceTransparency
        case .select: .select
        case .push: .push
        case .pop: .pop
        case .present: .present
        case .dismiss: .dismiss
        case .inspector: .inspector
        case .app: .app
        }
    }
}

extension App {
    /// Every tab id of every tab view, in manifest order.
    var tabIds: [String] {
        containers.flatMap { c -> [String] in if case .tabView(let t) = c { t.tabs.map(\.id) } else { [] } }
    }

    /// Every sheet id of every screen, in manifest order.
    var sheetIds: [String] { screens.flatMap { $0.sheets.map(\.id) } }
}
