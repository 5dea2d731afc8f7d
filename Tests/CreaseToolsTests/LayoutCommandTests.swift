#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

@Suite struct LayoutCommandTests {
    @Test("crease layout prints the final layout for events on stdin")
    func prints() throws {
        let r = try CommandRunner.run(["layout", "--events", "-"], stdin: #"{"event":"hinge","angle":180}"# + "\n" + #"{"event":"orientation","value":"landscapeLeft"}"# + "\n")
        #expect(r.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(json?["seq"] as? Int == 2)
        #expect(json?["barAxis"] as? String == "vertical")
        #expect((json?["digest"] as? String)?.count == 16)
    }

    @Test("a bad event exits 2 naming its line and field, and prints no layout")
    func badEvent() throws {
        let r = try CommandRunner.run(["layout", "--events", "-"], stdin: #"{"event":"hinge","angle":180}"# + "\n\n" + #"{"event":"hinge","angle":400}"# + "\n")
        #expect(r.status == 2)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("stdin:3") && r.stderr.contains("angle"))
    }

    @Test("an event that cannot apply (pop at the root) exits 2 and prints nothing")
    func stateError() throws {
        let r = try CommandRunner.run(["layout", "--events", "-"], stdin: #"{"event":"pop"}"# + "\n")
        #expect(r.status == 2 && r.stdout.isEmpty && r.stderr.contains("invalidState"))
    }

    @Test("a bad manifest exits 2 naming the field; an unknown built-in names the ones there are")
    func badManifest() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crease-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("app.json")
        try Data(#"{"name":"x","root":{"kind":"navigationStack","id":"a","screens":[{"id":"a","toolbar":[]}]}}"#.utf8).write(to: file)
        let r = try CommandRunner.run(["layout", "--app", file.path])
        #expect(r.status == 2 && r.stderr.contains("duplicateId") && r.stderr.contains("root.screens[0].id"))
        let b = try CommandRunner.run(["layout", "--app", "builtin:nope"])
        #expect(b.status == 2 && b.stderr.contains("tabs, split, sidebar"))
    }

    @Test("usage errors exit 2")
    func usage() throws {
        #expect(try CommandRunner.run(["layout", "--bogus"]).status == 2)
        #expect(try CommandRunner.run(["frobnicate"]).status == 2)
        #expect(try CommandRunner.run(["layout", "--help"]).status == 0)
    }

    @Test("the same events give byte-identical output in two processes")
    func deterministic() throws {
        let events = (0..<200).map { i in #"{"event":"hinge","angle":\#(Double(i % 181))}"# }.joined(separator: "\n") + "\n"
        let a = try CommandRunner.run(["layout", "--events", "-", "--each", "--app", "builtin:split"], stdin: events)
        let b = try CommandRunner.run(["layout", "--events", "-", "--each", "--app", "builtin:split"], stdin: events)
        #expect(a.status == 0 && a.stdout == b.stdout && a.stdout.split(separator: "\n").count == 200)
    }

    @Test("crease demo streams its session through a real creased, one line per published layout, and stops it cleanly")
    func demo() throws {
        let r = try CommandRunner.run(["demo"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        let layouts = lines.filter { $0.hasPrefix("#") }
        #expect(layouts.first?.hasPrefix("#0  closed  outer  portrait") == true, "\(r.stdout)")
        #expect(layouts.contains { $0.contains("fullyOpen") && $0.contains("vertical") })
        #expect(layouts.contains { $0.contains("  rtl  ") })
        // One line per layout creased published, plus the one a new subscriber starts from.
        let counters = lines.first { $0.hasPrefix("events ") }?.split(separator: " ") ?? []
        let publishes = counters.firstIndex(of: "publishes").flatMap { Int(counters[$0 + 1]) }
        #expect(publishes.map { $0 + 1 } == layouts.count, "\(r.stdout)")
        #expect(lines.contains { $0.hasPrefix("latency us: p50") && $0.contains("p99.9") && $0.contains("over budget") })
        #expect(lines.last == "creased pushed shutdown, exited 0 and removed its socket")
        // Its temporary directory (socket, log) is gone.
        let socket = try #require(lines.first?.split(separator: " ").last.map(String.init))
        #expect(!FileManager.default.fileExists(atPath: (socket as NSString).deletingLastPathComponent))
    }

    @Test("crease demo --json prints the raw pushes, in seq order, ending with shutdown; the narration goes to stderr")
    func demoJSON() throws {
        let r = try CommandRunner.run(["demo", "--json", "--rate", "max", "--app", "builtin:split"])
        #expect(r.status == 0, "\(r.stderr)")
        let pushes = r.stdout.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(pushes.allSatisfy { $0 != nil })
        let seqs = pushes.compactMap { $0?["seq"] as? Int }
        #expect(seqs.count == pushes.count && seqs == seqs.sorted())
        #expect(pushes.dropLast().allSatisfy { $0?["push"] as? String == "layout" && $0?["layout"] != nil })
        #expect(pushes.last??["push"] as? String == "shutdown")
        #expect(r.stderr.contains("latency us: p50") && r.stderr.contains("exited 0"))
    }

    @Test("crease demo without a creased beside it says so and exits 1")
    func demoWithoutDaemon() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("crease-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let lone = dir.appendingPathComponent("crease")
        try FileManager.default.copyItem(at: CommandRunner.productsDirectory.appendingPathComponent("crease"), to: lone)
        let r = try CommandRunner.run(["demo"], executable: lone)
        #expect(r.status == 1)
        #expect(r.stderr.contains("no creased next to crease"))
        #expect(try CommandRunner.run(["demo", "--rate", "0"]).status == 2)
    }

    @Test("crease demo whose reader goes away stops its daemon, removes its directory and ends quietly")
    func demoIntoAClosedPipe() throws {
        let p = Process()
        p.executableURL = CommandRunner.productsDirectory.appendingPathComponent("crease")
        p.arguments = ["demo", "--rate", "100"]  // a second and a half: the pipe closes long before the end
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        var first = Data()
        while !first.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            first.append(chunk)
        }
        try out.fileHandleForReading.close()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        #expect(p.terminationStatus == 141, "\(String(decoding: e, as: UTF8.self))")
        #expect(e.isEmpty)
        // "crease demo: creased 0.1.0 (pid N) on /tmp/crease-demo-XXXXXX/creased.sock"
        let words = String(decoding: first, as: UTF8.self).split(separator: "\n")[0].split(separator: " ")
        let socket = try #require(words.last.map(String.init))
        let pid = try #require(words.first { $0.hasSuffix(")") }.flatMap { Int32($0.dropLast()) })
        #expect(!FileManager.default.fileExists(atPath: (socket as NSString).deletingLastPathComponent))
        #expect(kill(pid, 0) != 0)
    }
}
