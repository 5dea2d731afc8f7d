import CreaseCore
import Foundation
import Testing

/// docs/layout.md defines the digest so another implementation can recompute it; this runs
/// the Python reference printed there against the engine's own layout lines.
@Suite struct DigestReferenceTests {
    static let layoutDoc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/layout.md").path

    /// The first ```python block after "## The digest".
    static func referenceScript() throws -> String {
        let doc = try String(contentsOfFile: layoutDoc, encoding: .utf8)
        let section = try #require(doc.range(of: "## The digest"))
        let open = try #require(doc.range(of: "```python\n", range: section.upperBound..<doc.endIndex))
        let close = try #require(doc.range(of: "```", range: open.upperBound..<doc.endIndex))
        return String(doc[open.upperBound..<close.lowerBound])
    }

    @Test("the Python reference in docs/layout.md recomputes the engine's digests, and versions 3 and 2's crease64x4 and crease64",
          arguments: [DigestAlgorithm.crease64v, .crease64x4, .crease64])
    func pythonReferenceAgrees(_ algorithm: DigestAlgorithm) throws {
        var lines: [UInt8] = []
        // Real layouts of every built-in app through a few changes.
        let events: [Event] = [.hinge(angle: 175), .orientation(.landscapeLeft), .keyboard(visible: true, height: 300),
                               .liveActivities(count: 2), .layoutDirection(.rtl), .hinge(angle: 60), .splitView(.left),
                               .pip(active: true), .hinge(angle: 0)]
        for name in BuiltinApps.names {
            var engine = Engine(app: BuiltinApps.app(named: name)!, digestAlgorithm: algorithm)
            lines += engine.layoutJSON() + [0x0A]
            for event in events where (try? engine.apply(event)) != nil {
                lines += engine.layoutJSON() + [0x0A]
            }
        }
        // Bodies of every length around the 16-byte blocks and the 64-byte stripes, including an empty one.
        for n in 0..<140 {
            let body = (0..<n).map { UInt8(0x20 + ($0 * 7 + n) % 90) }
            lines += Layout.assemble(seq: n, digest: algorithm.digest(body), body: body) + [0x0A]
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crease-digest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("check.py")
        try Data(try Self.referenceScript().utf8).write(to: script)

        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script.path] + (algorithm == .crease64v ? [] : ["--version-\(algorithm.traceVersion)"])
        let input = Pipe(), output = Pipe(), errors = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = errors
        try p.run()
        input.fileHandleForWriting.write(Data(lines))
        try input.fileHandleForWriting.close()
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0 && out == "ok\n", "\(out)\(err)")
    }
}
