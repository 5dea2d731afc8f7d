import CreaseCore
import Foundation
import Testing

/// The codes programs see are the enums' raw values; the docs list them. Both must agree.
@Suite struct DocumentedCodesTests {
    private func doc(_ name: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("docs/\(name)"), encoding: .utf8)
    }

    /// The first column's codes of the table that follows `heading`.
    private func tableCodes(_ text: String, after heading: String) -> [String] {
        guard let start = text.range(of: heading) else { return [] }
        var codes: [String] = []
        var inTable = false
        for line in text[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            inTable = true
            let first = line.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) ?? ""
            if first.hasPrefix("`"), first.hasSuffix("`") { codes.append(String(first.dropFirst().dropLast())) }
        }
        return codes
    }

    /// Every `code` in backquotes in `text`.
    private func quoted(_ text: String) -> Set<String> {
        Set(text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) })
    }

    @Test("docs/rules.md's table of diagnostic codes is Diagnostic.Code, no more, no less")
    func diagnosticCodes() throws {
        let documented = tableCodes(try doc("rules.md"), after: "## Diagnostic codes")
        #expect(documented.count == Set(documented).count, "a code listed twice")
        #expect(Set(documented) == Set(Diagnostic.Code.allCases.map(\.rawValue)))
    }

    @Test("every error code docs/events.md lists is an InputError.Code, and every InputError.Code is documented")
    func errorCodes() throws {
        let cases = Set(InputError.Code.allCases.map(\.rawValue))
        let table = tableCodes(try doc("events.md"), after: "## Errors")
        #expect(!table.isEmpty)
        #expect(Set(table).subtracting(cases).isEmpty, "documented but no code: \(Set(table).subtracting(cases).sorted())")
        let anywhere = try quoted(doc("events.md")).union(quoted(doc("daemon.md"))).union(quoted(doc("traces.md")))
        #expect(cases.subtracting(anywhere).isEmpty, "undocumented: \(cases.subtracting(anywhere).sorted())")
    }
}
