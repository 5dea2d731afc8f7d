import CreaseCore
import Foundation
import Testing

/// docs/orientation.md's table of bar sides, read back and checked against the engine.
@Suite struct OrientationTableTests {
    static let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/orientation.md").path

    /// The table's rows: the value, then the bar side for interface outer, interface inner, device outer, device inner.
    static func rows() throws -> [(value: String, cells: [String])] {
        let text = try String(contentsOfFile: doc, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> (String, [String])? in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 5, cells[0].hasPrefix("`"), cells[0] != "`value`" else { return nil }
            return (cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), Array(cells[1...]))
        }
    }

    static func side(_ value: Orientation, convention: OrientationConvention, open: Bool) throws -> String {
        var e = Engine(profile: .builtin, app: BuiltinApps.app(named: "tabs")!)
        if open { try e.apply(.hinge(angle: 180)) }
        let line = #"{"event":"orientation","value":"\#(value.rawValue)","convention":"\#(convention.rawValue)"}"#
        guard case .event(let envelope) = try Wire.decode(line: Array(line.utf8)) else { throw CocoaError(.coderInvalidValue) }
        try e.apply(envelope.event)
        return e.layout.verticalBarSide?.rawValue ?? "none"
    }

    @Test("every cell of the bar-side table in docs/orientation.md is what the engine does")
    func tableMatchesTheEngine() throws {
        let rows = try OrientationTableTests.rows()
        #expect(rows.map(\.value) == Orientation.allCases.map(\.rawValue), "one row per orientation value, in order")
        for row in rows {
            let value = try #require(Orientation(rawValue: row.value))
            let computed = [try Self.side(value, convention: .interface, open: false), try Self.side(value, convention: .interface, open: true),
                            try Self.side(value, convention: .device, open: false), try Self.side(value, convention: .device, open: true)]
            #expect(row.cells == computed, "row \(row.value)")
        }
    }

    @Test("device landscapeLeft is interface landscapeRight: the same layout bytes; upside down is not supported on the outer display")
    func deviceNamesTheOtherLandscape() throws {
        // Upside down on the outer display stays portrait: the app supports all but upside down.
        for (device, interface) in [("landscapeLeft", "landscapeRight"), ("landscapeRight", "landscapeLeft"),
                                    ("portrait", "portrait"), ("portraitUpsideDown", "portrait")] {
            let r1 = try CommandRunner.run(["layout", "--events", "-"], stdin: #"{"event":"orientation","value":"\#(device)","convention":"device"}"# + "\n")
            let r2 = try CommandRunner.run(["layout", "--events", "-"], stdin: #"{"event":"orientation","value":"\#(interface)"}"# + "\n")
            #expect(r1.status == 0 && r1.stdout == r2.stdout && r1.stdout.contains(#""orientation":"\#(interface)""#), "device \(device)")
        }
        let bad = try CommandRunner.run(["layout", "--events", "-"], stdin: #"{"event":"orientation","value":"portrait","convention":"sensor"}"# + "\n")
        #expect(bad.status == 2 && bad.stderr.contains("badValue") && bad.stderr.contains("convention"))
    }
}
