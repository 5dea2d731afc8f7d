import CreaseCore
import Foundation
import Testing
@testable import CreaseTools

/// `crease render` end to end: files in, files out, and one frame turned into a PNG by
/// librsvg so that a person can look at it.
@Suite struct RenderCommandTests {
    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crease-render-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func rendersTheLayoutAfterAnEventsFile() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let events = dir.appendingPathComponent("events.ndjson").path
        let out = dir.appendingPathComponent("frame.svg").path
        try Data("{\"event\":\"hinge\",\"angle\":90}\n# a comment\n{\"event\":\"orientation\",\"value\":\"landscapeLeft\"}\n".utf8)
            .write(to: URL(fileURLWithPath: events))
        #expect(CLI.main(["render", "--app", "builtin:split", "--events", events, "-o", out]) == ExitStatus.success)
        let root = try XMLTree.parse(String(decoding: try Data(contentsOf: URL(fileURLWithPath: out)), as: UTF8.self))

        var e = Engine(profile: .builtin, app: try #require(BuiltinApps.app(named: "split")))
        try e.apply(.hinge(angle: 90))
        try e.apply(.orientation(.landscapeLeft))
        #expect(root["data-seq"] == "2" && root["data-digest"] == Digest.hex(e.digest))
        #expect(root.first(id: "heading")?.allText.contains("after {\"event\":\"orientation\",\"value\":\"landscapeLeft\"}") == true)
    }

    @Test func usageErrorsExitTwo() throws {
        #expect(CLI.main(["render"]) == ExitStatus.usage)                                    // no -o
        #expect(CLI.main(["render", "-o", "/dev/null", "--app", "builtin:nope"]) == ExitStatus.usage)
        #expect(CLI.main(["render", "-o", "/dev/null", "--bogus"]) == ExitStatus.usage)
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let events = dir.appendingPathComponent("bad.ndjson").path
        try Data("{\"event\":\"hinge\",\"angle\":400}\n".utf8).write(to: URL(fileURLWithPath: events))
        let out = dir.appendingPathComponent("frame.svg").path
        #expect(CLI.main(["render", "--events", events, "-o", out]) == ExitStatus.usage)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// librsvg's converter, if this machine has it (.ci/run installs librsvg2-bin).
    static let rsvgConvert: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/rsvg-convert" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test(.enabled(if: rsvgConvert != nil, "rsvg-convert is not installed (Debian librsvg2-bin): no PNG is drawn to look at"))
    func aFrameBecomesAPNG() throws {
        let rsvg = try #require(Self.rsvgConvert)
        var e = Engine(profile: .builtin, app: try #require(BuiltinApps.app(named: "tabs")))
        for event: Event in [.hinge(angle: 90), .orientation(.landscapeLeft), .liveActivities(count: 2), .pip(active: true)] { try e.apply(event) }
        let svg = FrameSVG.render(e.layout, app: e.app, caption: FrameCaption(seq: e.seq, digest: e.digest))
        let root = try XMLTree.parse(svg)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: rsvg)
        process.arguments = ["--format", "png"]
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data(svg.utf8))
        try input.fileHandleForWriting.close()
        let png = output.fileHandleForReading.readDataToEndOfFile()
        let complaints = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "rsvg-convert: \(complaints)")
        #expect(complaints.isEmpty, "rsvg-convert complained: \(complaints)")

        // A PNG whose size is the drawing's: 1 point = 1 pixel.
        let bytes = [UInt8](png)
        try #require(bytes.count > 24)
        #expect(Array(bytes[0..<8]) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        func be32(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        #expect(String(be32(16)) == root["width"] && String(be32(20)) == root["height"])
        #expect(bytes.count > 20_000, "a frame this full of shapes and text cannot be that small: \(bytes.count) bytes")

        // Where a person can look at it: next to the build, and as a test attachment.
        let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = here.appendingPathComponent(".build/render-check")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try png.write(to: dir.appendingPathComponent("frame.png"))
        Attachment.record(bytes, named: "frame.png")
    }
}
