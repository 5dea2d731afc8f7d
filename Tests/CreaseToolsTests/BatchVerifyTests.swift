import CreaseCore
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import CreaseTools

/// Issue 28: `crease replay --verify PATH...` over a corpus: directories, jobs, shards,
/// JUnit and JSON reports, exit statuses, every file checked.
@Suite struct BatchVerifyTests {
    static let traces = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Traces")

    /// A corpus of the recorded traces in two nested folders, plus `extra` files.
    static func corpus(extra: [String: String] = [:]) throws -> String {
        let dir = NSTemporaryDirectory() + "crease-corpus-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/rig-1/night", withIntermediateDirectories: true)
        try fm.createDirectory(atPath: dir + "/rig-2", withIntermediateDirectories: true)
        let names = try fm.contentsOfDirectory(atPath: traces.path).filter { $0.hasSuffix(".jsonl") }.sorted()
        for (i, name) in names.enumerated() {
            try fm.copyItem(atPath: traces.path + "/" + name, toPath: dir + (i % 2 == 0 ? "/rig-1/night/" : "/rig-2/") + name)
        }
        for (name, text) in extra { try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8) }
        return dir
    }

    static func summary(_ stdout: String) throws -> JSONValue {
        let last = try #require(stdout.split(separator: "\n").last)
        return try #require(try JSON.parse(Array(last.utf8))["summary"])
    }

    @Test("scripts/make-corpus makes a rig's corpus of small traces, with the creased options given after --, that verifies")
    func madeCorpus() throws {
        let dir = NSTemporaryDirectory() + "crease-made-corpus-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let script = Self.traces.deletingLastPathComponent().appendingPathComponent("scripts/make-corpus")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = [script.path, dir, "6", "16384", "--", "--label", "rig=rig9"]
        p.environment = ProcessInfo.processInfo.environment.merging(["CREASE_BIN": CommandRunner.productsDirectory.path]) { $1 }
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".jsonl") }
        // Issue 37: PARTS is the number of parts made, exactly.
        #expect(files.count == 6, "\(files)")
        let labelled = try CommandRunner.run(["trace", "index", dir, "--json", "--label", "rig=rig9"])
        #expect(labelled.status == 0 && labelled.stdout.split(separator: "\n").count == files.count, "\(labelled.stderr)")
        let r = try CommandRunner.run(["replay", "--verify", dir, "--jobs", "2"])
        #expect(r.status == 0 && r.stderr.contains("verified \(files.count) files: \(files.count) green"), "\(r.stderr)")
    }

    @Test("a green corpus verifies on two jobs with a summary; JSON gives a line per file")
    func greenCorpus() throws {
        let dir = try Self.corpus()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let count = try FileManager.default.contentsOfDirectory(atPath: Self.traces.path).filter { $0.hasSuffix(".jsonl") }.count
        let r = try CommandRunner.run(["replay", "--verify", dir, "--jobs", "2", "--json"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        let s = try Self.summary(r.stdout)
        #expect(s["files"] == .number(Double(count)) && s["verified"] == .number(Double(count)) && s["diverged"] == .number(0))
        #expect((s["events"]?.double ?? 0) > 5_000 && (s["observations"]?.double ?? 0) > 0)
        let lines = r.stdout.split(separator: "\n").dropLast().map { try? JSON.parse(Array($0.utf8)) }
        #expect(lines.count == count && lines.allSatisfy { $0?["status"] == .string("verified") })
        let plain = try CommandRunner.run(["replay", "--verify", dir + "/rig-1", dir + "/rig-2"])
        #expect(plain.status == 0 && plain.stderr.contains("verified \(count) files: \(count) green, 0 diverged, 0 unreadable"), "\(plain.stderr)")
    }

    @Test("a divergence is exit 1 naming the file and its first divergent seq; an unreadable file is exit 2; every file is still checked")
    func divergenceAndUnreadable() throws {
        let original = try String(contentsOf: Self.traces.appendingPathComponent("slow-unfold.jsonl"), encoding: .utf8)
        var lines = original.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // The 10th event record's digest, changed by hand.
        let i = try #require(lines.indices.filter { lines[$0].contains(#""event":{"#) }.dropFirst(9).first)
        let record = try JSON.parse(Array(lines[i].utf8))
        let seq = try #require(record["seq"]?.double)
        let digest = try #require(record["digest"]?.str)
        let forged = digest == "0123456789abcdef" ? "fedcba9876543210" : "0123456789abcdef"
        lines[i] = lines[i].replacingOccurrences(of: #""digest":"\#(digest)""#, with: #""digest":"\#(forged)""#)
        let dir = try Self.corpus(extra: ["tampered.jsonl": lines.joined(separator: "\n")])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try CommandRunner.run(["replay", "--verify", dir, "--junit", dir + "/report.xml"])
        #expect(r.status == 1, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("1 diverged") && r.stderr.contains("diverged: \(dir)/tampered.jsonl at seq \(Int(seq))"), "\(r.stderr)")
        let report = try XMLDocument(contentsOf: URL(fileURLWithPath: dir + "/report.xml"))
        let cases = try report.nodes(forXPath: "//testcase")
        let failures = try report.nodes(forXPath: "//testcase/failure")
        #expect(cases.count >= 11 && failures.count == 1)
        #expect((failures.first?.parent as? XMLElement)?.attribute(forName: "name")?.stringValue == "tampered.jsonl")

        try "not a trace\n".write(toFile: dir + "/rig-2/garbage.jsonl", atomically: true, encoding: .utf8)
        let both = try CommandRunner.run(["replay", "--verify", dir, "--json"])
        #expect(both.status == 2)
        let s = try Self.summary(both.stdout)
        #expect(s["unreadable"] == .number(1) && s["diverged"] == .number(1) && (s["verified"]?.double ?? 0) >= 10)
        let missing = try CommandRunner.run(["replay", "--verify", dir + "/nope"])
        #expect(missing.status == 2 && missing.stderr.lowercased().contains("no such file or directory"))
    }

    @Test("shards are disjoint, cover the corpus, and keep a file in its shard wherever the corpus sits")
    func shards() throws {
        let dir = try Self.corpus()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var seen: [String] = []
        for i in 1...3 {
            let r = try CommandRunner.run(["replay", "--verify", dir, "--shard", "\(i)/3", "--json"])
            #expect(r.status == 0)
            seen += r.stdout.split(separator: "\n").dropLast().compactMap { try? JSON.parse(Array($0.utf8))["relative"]?.str }
        }
        let all = try BatchVerify.collect([dir]).map(\.relative)
        #expect(seen.sorted() == all.sorted() && Set(seen).count == seen.count)
        // Relative to the argument, so the same wherever the corpus sits; FNV-1a, so the same on every machine.
        #expect(all.allSatisfy { !$0.hasPrefix("/") && !$0.contains(dir) })
        #expect(all.contains("rig-2/slow-unfold.jsonl") && BatchVerify.shard(of: "rig-2/slow-unfold.jsonl", count: 8) == 2)
        #expect(BatchVerify.shard(of: "a", count: 7) == 6)
        for bad in ["0/3", "4/3", "x", "1/0", "2"] {
            let r = try CommandRunner.run(["replay", "--verify", dir, "--shard", bad])
            #expect(r.status == 2 && r.stderr.contains("--shard"), "\(bad)")
        }
        #expect(BatchVerify.naturalOrder("creased-x-2.jsonl", "creased-x-10.jsonl") && !BatchVerify.naturalOrder("b", "a"))
    }
}

fileprivate extension JSONValue {
    var double: Double? { if case .number(let n) = self { return n }; return nil }
    var str: String? { if case .string(let s) = self { return s }; return nil }
}
