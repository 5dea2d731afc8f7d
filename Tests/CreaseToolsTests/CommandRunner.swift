import Foundation

/// Runs a built product of this package as a real process.
struct CommandRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The folder `swift build` put the products in (the test bundle sits beside them).
    static let productsDirectory: URL = {
        var url = Bundle.main.bundleURL
        for candidate in [url, url.deletingLastPathComponent()] where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("crease").path) {
            return candidate
        }
        url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return url.appendingPathComponent(".build/debug")
    }()

    static func run(_ args: [String], executable: URL = productsDirectory.appendingPathComponent("crease"), stdin: String? = nil) throws -> Result {
        let p = Process()
        p.executableURL = executable
        p.arguments = args
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }
}
