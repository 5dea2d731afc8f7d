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
}
