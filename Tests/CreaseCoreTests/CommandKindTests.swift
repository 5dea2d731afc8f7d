import Foundation
import Testing
@testable import CreaseCore

/// The commands are defined once (`CommandKind`); these walk it against the wire format and
/// docs/events.md's Commands table.
@Suite struct CommandKindTests {
    static let eventsDoc: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/events.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// One command of each kind, as a client sends it.
    static let examples: [CommandKind: String] = [
        .hello: #"{"cmd":"hello"}"#, .layout: #"{"cmd":"layout"}"#, .state: #"{"cmd":"state"}"#,
        .subscribe: #"{"cmd":"subscribe","topics":["layout"]}"#, .unsubscribe: #"{"cmd":"unsubscribe"}"#,
        .stats: #"{"cmd":"stats","reset":true}"#, .load: #"{"cmd":"load","state":null}"#, .mark: #"{"cmd":"mark","label":"x"}"#,
        .sync: #"{"cmd":"sync"}"#, .trace: #"{"cmd":"trace","action":"rotate"}"#,
        .observe: #"{"cmd":"observe","observed":{"barAxis":"vertical"}}"#, .clock: #"{"cmd":"clock"}"#,
        .frame: #"{"cmd":"frame","kind":"flash","t":5,"refSeq":0,"frame":3}"#,
    ]

    static func decode(_ text: String) throws -> Command {
        let body = try JSON.parse(Array(text.utf8))
        guard case .string(let name)? = body["cmd"] else { throw InputError(.missingField, "no cmd", field: "cmd") }
        return try Command.decode(name: name, body: body)
    }

    @Test("every kind decodes to a command of that kind, and its declared fields are the only ones taken")
    func decoding() throws {
        #expect(Command.names == CommandKind.allCases.map(\.rawValue))
        for kind in CommandKind.allCases {
            let text = try #require(Self.examples[kind], "no example of \(kind.rawValue)")
            let command = try Self.decode(text)
            #expect(command.kind == kind && command.name == kind.rawValue)
            guard kind.fields != nil else { continue }
            let extra = String(text.dropLast()) + #","bogus":1}"#
            do {
                _ = try Self.decode(extra)
                Issue.record("\(kind.rawValue) took an unknown field")
            } catch let error as InputError {
                #expect(error.code == .unknownField && error.field == "bogus")
            }
        }
    }

    @Test("a command needs publishing exactly as its kind says; stats only to reset")
    func access() throws {
        for kind in CommandKind.allCases {
            let command = try Self.decode(try #require(Self.examples[kind]))
            switch kind.access {
            case .read: #expect(!command.needsPublish)
            case .publish: #expect(command.needsPublish)
            case .publishToReset: #expect(command.needsPublish)  // the example resets
            }
        }
        #expect(!(try Self.decode(#"{"cmd":"stats"}"#)).needsPublish)
        #expect(CommandKind.allCases.filter(\.publishes) == [.load])
    }

    @Test("docs/events.md's Commands table has a row for every command, marked publish as its access says")
    func documented() {
        // The Commands section's table only (the Pushes table has rows named like topics).
        let section = Self.eventsDoc.components(separatedBy: "\n## Commands")
        #expect(section.count == 2)
        let rows = (section.last ?? "").components(separatedBy: "\n## ")[0].components(separatedBy: "\n").filter { $0.hasPrefix("| `") }
        for kind in CommandKind.allCases {
            guard let row = rows.first(where: { $0.hasPrefix("| `\(kind.rawValue)` |") || $0.hasPrefix("| `\(kind.rawValue)` *publish* |") }) else {
                Issue.record("docs/events.md has no Commands row for \(kind.rawValue)"); continue
            }
            let cells = row.components(separatedBy: " | ")
            let marked = cells[0].contains("*publish*")
            switch kind.access {
            case .read: #expect(!marked, "\(kind.rawValue) is marked publish")
            case .publish: #expect(marked, "\(kind.rawValue) is not marked publish")
            case .publishToReset: #expect(!marked && row.contains("is *publish*"), "\(kind.rawValue): the reset is not marked publish")
            }
        }
    }
}
