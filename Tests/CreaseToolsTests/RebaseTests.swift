import CreaseCore
import Foundation
import Testing

/// Issue 28: `crease trace rebase` rewrites a trace another build recorded with this
/// build's digests and verdicts, says what changed, and changes nothing the second time.
@Suite struct RebaseTests {
    static let traces = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Traces")

    @Test("a rule change: the rebased trace verifies, names what changed and which verdicts flipped, and a second rebase changes nothing")
    func ruleChange() throws {
        let dir = NSTemporaryDirectory() + "crease-rebase-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/in", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // As if recorded by a build whose column was 90 pt: this build computes other layouts for it.
        let original = try String(contentsOf: Self.traces.appendingPathComponent("rig-observations.jsonl"), encoding: .utf8)
        let other = original.replacingOccurrences(of: #""columnWidth":84"#, with: #""columnWidth":90"#)
        #expect(other != original)
        try other.write(toFile: dir + "/in/rig.jsonl", atomically: true, encoding: .utf8)
        let stale = try CommandRunner.run(["replay", "--verify", dir + "/in/rig.jsonl"])
        #expect(stale.status == 1)

        let check = try CommandRunner.run(["trace", "rebase", dir + "/in", "--check"])
        #expect(check.status == 1 && check.stdout.contains("layouts changed, the first at seq") && check.stdout.contains("verdicts flipped"),
                "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("-> mismatch  (needs a look)") || check.stdout.contains("-> match  (a fix, if intended)"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/out"), "--check writes nothing")

        let rebased = try CommandRunner.run(["trace", "rebase", dir + "/in", "-o", dir + "/out"])
        #expect(rebased.status == 0 && rebased.stderr.contains("1 rebased"), "\(rebased.stderr)")
        let verified = try CommandRunner.run(["replay", "--verify", dir + "/out/rig.jsonl"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        let header = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: dir + "/out/rig.jsonl")))).header
        #expect(header.rebased?.from.hasPrefix("creased") == true && header.rebased?.by.hasPrefix("crease ") == true)
        // The inputs are kept: the same events and observations, in order, with their times.
        func count(_ text: String, _ key: String) -> Int { text.components(separatedBy: key).count }
        let out = try String(contentsOfFile: dir + "/out/rig.jsonl", encoding: .utf8)
        #expect(count(out, #""event":{"#) == count(other, #""event":{"#) && count(out, #""observe":{"#) == count(other, #""observe":{"#))
        #expect(count(out, #""mark":"#) == count(other, #""mark":"#))

        let again = try CommandRunner.run(["trace", "rebase", dir + "/out", "--check"])
        #expect(again.status == 0 && again.stdout.isEmpty && again.stderr.contains("0 would change, 1 unchanged"), "\(again.stdout)\(again.stderr)")
        // Under -o, an unchanged trace is written too, byte for byte: the directory is the whole corpus.
        let copied = try CommandRunner.run(["trace", "rebase", dir + "/out", "-o", dir + "/copy"])
        #expect(copied.status == 0 && (try? String(contentsOfFile: dir + "/copy/rig.jsonl", encoding: .utf8)) == out, "\(copied.stderr)")
        let twice = try CommandRunner.run(["trace", "rebase", dir + "/out", "--in-place"])
        let after = try String(contentsOfFile: dir + "/out/rig.jsonl", encoding: .utf8)
        #expect(twice.status == 0 && after == out)
    }

    @Test("an older format version is rewritten in the current one; its layouts did not change")
    func olderVersion() throws {
        let dir = NSTemporaryDirectory() + "crease-rebase-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try CommandRunner.run(["trace", "rebase", Self.traces.appendingPathComponent("version-2").path, "-o", dir])
        #expect(r.status == 0 && r.stdout.contains("format version 2 -> 4") && !r.stdout.contains("layouts changed"), "\(r.stdout)")
        let v = try CommandRunner.run(["replay", "--verify", dir])
        #expect(v.status == 0, "\(v.stdout)\(v.stderr)")
        let bad = try CommandRunner.run(["trace", "rebase", dir])
        #expect(bad.status == 2 && bad.stderr.contains("--check"))
    }
}
