import Foundation
import Testing

/// The shape issue 41 asks for, checked where it can break: the daemon's decisions live in
/// `CreaseDaemonCore`, which imports CreaseCore and nothing else (no libuv, no Glibc, no
/// Foundation), so no system call can hide inside a decision.
@Suite struct ModuleBoundaryTests {
    @Test("every file of CreaseDaemonCore imports CreaseCore at most")
    func theDaemonCoreImportsOnlyTheCore() throws {
        let dir = packageRoot.appendingPathComponent("Sources/CreaseDaemonCore")
        let files = try #require(FileManager.default.enumerator(atPath: dir.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        #expect(files.count >= 10, "the module's files are found: \(files)")
        for file in files {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") || $0.hasPrefix("@testable import ") || $0.hasPrefix("#if canImport") }
            #expect(imports.allSatisfy { $0 == "import CreaseCore" }, "\(file): \(imports)")
        }
    }

    @Test("a running creased has mapped no Foundation library: its resident memory is its own (BENCHMARKS.md, memory)")
    func theDaemonLinksNoFoundation() throws {
        let daemon = try DaemonProcess()
        defer { daemon.stop() }
        // Read to the end: /proc files report no size, which a whole-file read trusts.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/\(daemon.process.processIdentifier)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        #expect(maps.contains("libswiftCore"), "the maps are the daemon's")
        #expect(!maps.contains("libFoundation"), "creased mapped Foundation")
        #expect(!maps.contains("FoundationICU"))
    }
}
