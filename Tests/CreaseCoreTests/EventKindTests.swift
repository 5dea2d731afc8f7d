import Foundation
import Testing
@testable import CreaseCore

/// The event vocabulary is defined once (`EventKind`); these walk it against the wire format,
/// the state machine, the state encoding, the property tests' generator and docs/events.md.
@Suite struct EventKindTests {
    static let eventsDoc: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/events.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// Each kind's values and random events, on every built-in app.
    static func samples(_ kind: EventKind, app: App, count: Int = 40) -> [Event] {
        var rng = SplitMix64(seed: 7)
        return kind.values(app: app, profile: .builtin) + (0..<count).map { _ in kind.random(using: &rng, app: app, profile: .builtin) }
    }

    @Test("every kind's events encode and decode back to themselves, with only the kind's fields", arguments: BuiltinApps.names)
    func roundTrip(app name: String) throws {
        let app = builtin(name)
        for kind in EventKind.allCases {
            for event in Self.samples(kind, app: app) {
                #expect(event.kind == kind && event.name == kind.rawValue)
                let bytes = event.jsonBytes()
                let decoded = try Event.decode(try JSON.parse(bytes))
                #expect(decoded.event == event, "\(String(decoding: bytes, as: UTF8.self))")
                guard case .object(let members) = try JSON.parse(bytes) else { Issue.record("not an object"); continue }
                for (key, _) in members where key != "event" {
                    #expect(kind.fields.contains { FieldReader.equal(key, $0) }, "\(kind.rawValue) wrote \(key), which it does not declare")
                }
            }
        }
        #expect(Event.names == EventKind.allCases.map(\.rawValue))
    }

    @Test("an unknown event name and an unknown field are refused with the kinds listed")
    func refusals() throws {
        let unknown = try JSON.parse(Array(#"{"event":"fold","angle":3}"#.utf8))
        do throws(InputError) {
            _ = try Event.decode(unknown)
            Issue.record("accepted an unknown event")
        } catch {
            #expect(error.code == .unknownEvent && EventKind.names.allSatisfy { error.message.contains($0) })
        }
        let foreign = try JSON.parse(Array(#"{"event":"pip","active":true,"count":2}"#.utf8))
        do throws(InputError) {
            _ = try Event.decode(foreign)
            Issue.record("accepted a field of another kind")
        } catch {
            #expect(error.code == .unknownField && error.field == "count")
        }
    }

    /// A kind's `changes` is what the state machine may change: applying its events to states
    /// reached by random sequences changes no other member of the state.
    @Test("an event changes only the state members its kind declares", arguments: BuiltinApps.names)
    func changesAreDeclared(app name: String) {
        let app = builtin(name)
        var gen = RandomEvents(seed: 3, app: app, without: [.app])
        var e = Engine(profile: .builtin, app: app)
        var seen: Set<EventKind> = []
        for _ in 0..<1500 {
            let event = gen.next()
            let before = e.state
            guard (try? e.apply(event, at: gen.time)) != nil else { continue }
            seen.insert(event.kind)
            for member in StateMember.allCases where member.differs(before, e.state) {
                #expect(event.kind.changes.contains(member), "\(event.kind.rawValue) changed \(member.rawValue)")
            }
        }
        // Whatever bookkeeping a kind keeps, what it changes reaches the layout.
        for kind in EventKind.allCases {
            let reaches = kind.changes.contains { $0.isLayoutInput }
            #expect(reaches, "\(kind.rawValue) changes nothing the layout reads")
        }
        // Every device kind was applied (whether a navigation event applies depends on the screen).
        for kind in EventKind.allCases where !kind.changes.contains(.ui) {
            #expect(seen.contains(kind), "\(name): no \(kind.rawValue) event was applied")
        }
    }

    @Test("the property tests' generator makes every kind, and the explorer takes the explored kinds' values")
    func generatorAndExplorer() {
        let app = builtin("tabs")
        var gen = RandomEvents(seed: 1, app: app)
        var made: Set<EventKind> = []
        for _ in 0..<2000 { made.insert(gen.next().kind) }
        #expect(made == Set(EventKind.allCases))
        let inputs = ModelExplorer.inputs(app: app, profile: .builtin)
        #expect(Set(inputs.map(\.kind)) == Set(EventKind.allCases.filter { $0.explored && !$0.values(app: app, profile: .builtin).isEmpty }))
    }

    /// The state's encoding is derived from `StateMember`: a stored property no member writes
    /// would not survive the round trip, whichever of DeviceInputs or DeviceBookkeeping it joins.
    @Test("the state encoding round-trips every state random events reach", arguments: BuiltinApps.names)
    func stateRoundTrip(app name: String) throws {
        let app = builtin(name)
        var gen = RandomEvents(seed: 17, app: app, without: [.app])
        var e = Engine(profile: .builtin, app: app)
        var checked = 0
        for _ in 0..<800 {
            guard (try? e.apply(gen.next(), at: gen.time)) != nil else { continue }
            let bytes = e.state.jsonBytes(app: app)
            #expect(try DeviceState.decode(try JSON.parse(bytes), app: app) == e.state, "\(String(decoding: bytes, as: UTF8.self))")
            checked += 1
        }
        #expect(checked > 400)
        guard case .object(let members) = try JSON.parse(DeviceState(app: app).jsonBytes(app: app)) else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == StateMember.keys)
        // One member per piece of bookkeeping; the rest are layout inputs.
        let bookkeeping = Mirror(reflecting: DeviceBookkeeping()).children.count
        #expect(StateMember.allCases.filter { !$0.isLayoutInput }.count == bookkeeping)
    }

    @Test("docs/events.md has a row for every kind and each of its fields")
    func documented() {
        let doc = Self.eventsDoc
        #expect(!doc.isEmpty)
        let table = doc.components(separatedBy: "\n").filter { $0.hasPrefix("| ") }
        for kind in EventKind.allCases {
            guard let start = table.firstIndex(where: { $0.hasPrefix("| `\(kind.rawValue)` |") }) else {
                Issue.record("docs/events.md has no row for \(kind.rawValue)"); continue
            }
            // The kind's own row and the continuation rows (`| |`) after it.
            var rows = [table[start]]
            var i = start + 1
            while i < table.count, table[i].hasPrefix("| | ") { rows.append(table[i]); i += 1 }
            for field in kind.fields {
                #expect(rows.contains { $0.contains("| `\(field)` |") }, "docs/events.md: \(kind.rawValue) lacks field \(field)")
            }
        }
    }
}
