import Testing
@testable import CreaseCore

/// A loaded state must be one the events could have produced: `load` once accepted a
/// navigation stack listing the same screen twice and a hidden keyboard that kept a height.
@Suite struct LoadedStateTests {
    let app: App
    init() throws {
        app = try CreaseCoreTests.app(#"{"name":"T","root":{"kind":"navigationStack","id":"stack","screens":[{"id":"root","toolbar":[]},{"id":"a","toolbar":[]},{"id":"b","toolbar":[]}]}}"#)
    }

    /// The state's JSON as the engine writes it, with `edit` applied to its text.
    func load(_ events: [Event], _ edit: (String) -> String) throws(InputError) -> Engine {
        var e = Engine(profile: .builtin, app: app)
        for ev in events { _ = try e.apply(ev) }
        let text = edit(String(decoding: e.state.jsonBytes(app: app), as: UTF8.self))
        let state: JSONValue
        do { state = try JSON.parse(Array(text.utf8)) } catch { throw InputError(.badJSON, "\(error)") }
        return try LoadRequest(state: state).loaded(onto: Engine(profile: .builtin, app: app))
    }

    @Test func aScreenIsOnAStackOnce() throws {
        // The event path refuses it, and so does load.
        var e = Engine(profile: .builtin, app: app)
        _ = try e.apply(.push(screen: "a"))
        let again = #expect(throws: InputError.self) { try e.apply(.push(screen: "a")) }
        #expect(again?.code == .invalidState && again?.message.contains("already on navigation stack") == true)
        let root = #expect(throws: InputError.self) { try e.apply(.push(screen: "root")) }
        #expect(root?.code == .invalidState)
        #expect(e.seq == 1)

        #expect(try load([.push(screen: "a"), .push(screen: "b")]) { $0 }.state.ui.pushed[0].count == 2)
        let twice = #expect(throws: InputError.self) { try load([.push(screen: "a")]) { $0.replacing(#""pushed":["a"]"#, with: #""pushed":["a","a"]"#) } }
        #expect(twice?.code == .invalidState && twice?.field == "state.ui.stacks[0].pushed", "\(String(describing: twice))")
        let rootPushed = #expect(throws: InputError.self) { try load([.push(screen: "a")]) { $0.replacing(#""pushed":["a"]"#, with: #""pushed":["root"]"#) } }
        #expect(rootPushed?.code == .invalidState)
    }

    @Test func aHiddenKeyboardKeepsNoHeight() throws {
        #expect(try load([.keyboard(visible: true, height: 250)]) { $0 }.state.keyboardHeight == 250)
        let hidden = #expect(throws: InputError.self) {
            try load([]) { $0.replacing(#""keyboard":{"visible":false,"height":null}"#, with: #""keyboard":{"visible":false,"height":250}"#) }
        }
        #expect(hidden?.code == .invalidState && hidden?.field == "state.keyboard.height", "\(String(describing: hidden))")
    }

    /// Issue 37: a stack listed twice was taken (the second silently replacing the first).
    @Test func aStackIsListedOnce() throws {
        let twice = #expect(throws: InputError.self) {
            try load([.push(screen: "a")]) { $0.replacing(#""stacks":[{"stack":"stack","pushed":["a"]}]"#,
                                                         with: #""stacks":[{"stack":"stack","pushed":["a"]},{"stack":"stack","pushed":["b"]}]"#) }
        }
        #expect(twice?.code == .invalidState && twice?.field == "state.ui.stacks[1]", "\(String(describing: twice))")
    }

    /// Issue 37: a rotation lock with a landscape interface was taken, a state no event makes.
    @Test func aRotationLockHoldsTheInterfaceAsItsRuleSays() throws {
        let locked = try load([.rotationLock(enabled: true)]) { $0 }
        #expect(locked.state.rotationLock && locked.state.orientation == .portrait)
        let landscape = #expect(throws: InputError.self) {
            try load([.rotationLock(enabled: true)]) { $0.replacing(#""orientation":"portrait""#, with: #""orientation":"landscapeLeft""#) }
        }
        #expect(landscape?.code == .invalidState && landscape?.field == "state.orientation", "\(String(describing: landscape))")
    }

    /// Issue 37: a pending orientation dated after the load (a state from another clock) held
    /// portrait for ever; it is taken as proposed when the load is read.
    @Test func aPendingOrientationFromAnotherClockStartsAtTheLoad() throws {
        var e = Engine(profile: .builtin, app: app)
        _ = try e.apply(.motion(Gravity(x: 0, y: -1, z: 0)), at: 0)
        _ = try e.apply(.motion(Gravity(x: -1, y: 0, z: 0)), at: 10_000_000)
        let pending = try #require(e.state.pendingOrientation)
        var text = String(decoding: e.state.jsonBytes(app: app), as: UTF8.self)
        text = text.replacing(#""since":\#(pending.since)"#, with: #""since":900000000000000000"#)
        let request = LoadRequest(state: try JSON.parse(Array(text.utf8)))
        var loaded = try request.loaded(onto: Engine(profile: .builtin, app: app), now: 5_000_000_000)
        #expect(loaded.state.pendingOrientation?.since == 5_000_000_000)
        // The settle time runs from the load: the turn lands once it has passed.
        let settle = Int64(DeviceProfile.builtin.orientationSettleMs * 1_000_000)
        _ = try loaded.apply(.motion(Gravity(x: -1, y: 0, z: 0)), at: 5_000_000_000 + settle + 1_000_000)
        #expect(loaded.state.orientation != .portrait, "\(loaded.state.orientation)")
    }
}
