#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseDaemonCore
@testable import CreaseTools
import Foundation
import Testing

/// Issue 37: what a rig campaign and an adversarial round broke in the command line, each
/// with the command that showed it.
@Suite struct HardeningCommandTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Traces").path

    static func scratch() throws -> String {
        let dir = NSTemporaryDirectory() + "crease-hardening-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("crease --version and crease version print the version creased --version prints")
    func versionIsPrinted() throws {
        let daemon = try CommandRunner.run(["--version"], executable: CommandRunner.productsDirectory.appendingPathComponent("creased"))
        for args in [["--version"], ["version"]] {
            let r = try CommandRunner.run(args)
            #expect(r.status == 0 && r.stdout == "crease \(DaemonInfo.version)\n", "\(args): \(r.stdout)\(r.stderr)")
            #expect(r.stdout.dropFirst("crease".count) == daemon.stdout.dropFirst("creased".count))
        }
    }

    @Test("-o naming an input is refused and the input is left as it was")
    func anOutputNamingAnInputIsRefused() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + "/rig.jsonl"
        try FileManager.default.copyItem(atPath: Self.corpus + "/rig-observations.jsonl", toPath: trace)
        let before = try Data(contentsOf: URL(fileURLWithPath: trace))
        try FileManager.default.createSymbolicLink(atPath: dir + "/alias.jsonl", withDestinationPath: trace)
        for args in [["calibrate", trace, "-o", trace], ["report", trace, "-o", trace], ["trace", "slice", trace, "--from", "1", "--to", "5", "-o", trace],
                     ["report", trace, "-o", dir + "/alias.jsonl"]] {
            let r = try CommandRunner.run(args)
            #expect(r.status == 2 && r.stderr.contains("it is an input of this command"), "\(args): \(r.stderr)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: trace)) == before)
        // Another output is written as before.
        #expect(try CommandRunner.run(["trace", "slice", trace, "--from", "1", "--to", "5", "-o", dir + "/slice.jsonl"]).status == 0)
    }

    @Test("a file replaced by -o keeps its mode and owner; a symbolic link another user planted is not followed")
    func replacedFilesKeepModeAndOwnerAndForeignLinksAreRefused() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = dir + "/theirs.html"
        #expect(FileManager.default.createFile(atPath: out, contents: Data("old".utf8)))
        #expect(chmod(out, 0o600) == 0 && chown(out, 65534, 65534) == 0)
        let r = try CommandRunner.run(["report", Self.corpus + "/slow-unfold.jsonl", "-o", out])
        #expect(r.status == 0, "\(r.stderr)")
        var st = stat()
        #expect(stat(out, &st) == 0)
        #expect(st.st_mode & 0o7777 == 0o600 && st.st_uid == 65534 && st.st_gid == 65534, "mode \(String(st.st_mode & 0o7777, radix: 8)) uid \(st.st_uid)")
        #expect(st.st_size > 3)

        let target = dir + "/target"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep".utf8)))
        let link = dir + "/planted.html"
        #expect(symlink(target, link) == 0 && lchown(link, 65534, 65534) == 0)
        let refused = try CommandRunner.run(["report", Self.corpus + "/slow-unfold.jsonl", "-o", link])
        #expect(refused.status == 2 && refused.stderr.contains("symbolic link owned by uid 65534"), "\(refused.stderr)")
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep")
    }

    @Test("batch verify: a directory that cannot be listed fails its own entry; a file named twice is verified once")
    func batchInputsFailAloneAndCountOnce() throws {
        // As root every directory can be listed; one that vanished stands for one that cannot be.
        var found: [BatchVerify.Input] = []
        BatchVerify.walk("/nonexistent-crease-dir", relative: "rig-9", skipping: nil, into: &found)
        #expect(found.count == 1 && found[0].unlisted?.contains("cannot be listed") == true)
        guard case .unreadable(let why) = BatchVerify.verify(found[0]) else { Issue.record("not unreadable"); return }
        #expect(why.contains("cannot be listed"))

        let trace = Self.corpus + "/slow-unfold.jsonl"
        let r = try CommandRunner.run(["replay", "--verify", trace, trace, Self.corpus + "/./slow-unfold.jsonl"])
        #expect(r.status == 0 && r.stderr.contains("verified 1 files"), "\(r.stderr)")

        // A name that is not UTF-8 fails its own entry saying so (it was reported as missing).
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: trace, toPath: dir + "/ok.jsonl")
        let bad = Array(dir.utf8) + Array("/bad".utf8) + [0xFF] + Array(".jsonl".utf8) + [0]
        let source = try Data(contentsOf: URL(fileURLWithPath: trace))
        let fd = bad.withUnsafeBufferPointer { p in p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: bad.count) { open($0, O_WRONLY | O_CREAT, 0o644) } }
        #expect(fd >= 0)
        _ = source.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        Glibc.close(fd)
        let mixed = try CommandRunner.run(["replay", "--verify", dir])
        #expect(mixed.status != 0 && mixed.stderr.contains("1 green") && mixed.stderr.contains("1 unreadable"), "\(mixed.stderr)")
        #expect(mixed.stdout.contains("its name is not UTF-8 (bytes 62 61 64 ff"), "\(mixed.stdout)")
    }

    @Test("trace rebase DIR -o DIR/rebased: a second run does not take the first run's output as input")
    func rebaseLeavesItsOwnOutputOut() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: Self.corpus + "/slow-unfold.jsonl", toPath: dir + "/a.jsonl")
        for _ in 0..<2 {
            let r = try CommandRunner.run(["trace", "rebase", dir, "-o", dir + "/rebased"])
            #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/rebased/rebased"))
        #expect(FileManager.default.fileExists(atPath: dir + "/rebased/a.jsonl"))
    }

    @Test("trace info escapes control characters from app names and mark labels instead of printing them to the terminal")
    func traceInfoEscapesControlCharacters() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var text = try String(contentsOfFile: Self.corpus + "/slow-unfold.jsonl", encoding: .utf8)
        text = text.replacingOccurrences(of: #""app":{"name":"Trailhead""#, with: #""app":{"name":"Trail\u001b]0;owned\u0007head""#)
        let last = try #require(text.split(separator: "\n").last { $0.contains(#""event":"#) })
        let record = try JSON.parse(Array(last.utf8))
        guard case .number(let seq)? = record["seq"], case .number(let t)? = record["t"] else { Issue.record("no seq and t"); return }
        text += #"{"seq":\#(Int(seq)),"t":\#(Int(t)),"mark":"\u001b[2Jcleared\u009b"}"# + "\n"
        let trace = dir + "/escape.jsonl"
        try text.write(toFile: trace, atomically: false, encoding: .utf8)
        let r = try CommandRunner.run(["trace", "info", trace])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!r.stdout.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B }, "raw control characters reached stdout")
        #expect(r.stdout.contains(#"Trail\u{1B}]0;owned\u{7}head"#) && r.stdout.contains(#"\u{1B}[2Jcleared\u{9B}"#), "\(r.stdout)")
    }

    @Test("coverage refuses a plan of another version, an empty plan and a trace of another app; a plan listed thrice counts once")
    func coverageChecksItsPlan() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let plan = dir + "/plan.json"
        #expect(try CommandRunner.run(["plan", "--app", "builtin:tabs", "--max-depth", "2", "-o", plan]).status == 0)
        let lines = try String(contentsOfFile: plan, encoding: .utf8).split(separator: "\n").map(String.init)
        guard case .object(let members) = try JSON.parse(Array(lines[0].utf8)) else { Issue.record("no plan header"); return }
        func variant(_ name: String, header change: (inout [(String, JSONValue)]) -> Void = { _ in }, steps: [String]) throws -> String {
            var m = members
            change(&m)
            var w = JSONWriter()
            w.value(.object(m))
            try ([String(decoding: w.bytes, as: UTF8.self)] + steps).joined(separator: "\n").write(toFile: dir + "/" + name, atomically: false, encoding: .utf8)
            return dir + "/" + name
        }
        func set(_ key: String, _ v: JSONValue) -> (inout [(String, JSONValue)]) -> Void {
            { m in m = m.map { $0.0 == key ? (key, v) : $0 } }
        }
        let body = Array(lines.dropFirst())
        let trace = Self.corpus + "/slow-unfold.jsonl"
        let v99 = try CommandRunner.run(["coverage", "--plan", try variant("v99.jsonl", header: set("version", .number(99)), steps: body), trace])
        #expect(v99.status == 2 && v99.stderr.contains("a plan of version 99"), "\(v99.stderr)")
        let empty = try CommandRunner.run(["coverage", "--plan", try variant("empty.jsonl", steps: []), trace])
        #expect(empty.status == 2 && empty.stderr.contains("no layouts"), "\(empty.stderr)")
        let cut = try CommandRunner.run(["coverage", "--plan", try variant("cut.jsonl", steps: Array(body.dropLast())), trace])
        #expect(cut.status == 2 && cut.stderr.contains("ends without an observe step"), "\(cut.stderr)")
        let once = try CommandRunner.run(["coverage", "--plan", plan, trace, "--json"])
        let thrice = try CommandRunner.run(["coverage", "--plan", try variant("x3.jsonl", steps: body + body + body), trace, "--json"])
        #expect(once.status == 0 && thrice.status == 0 && once.stdout == thrice.stdout, "\(once.stdout) vs \(thrice.stdout)")
        // A plan of version 1 (one JSON document) still reads.
        let v1 = dir + "/v1.json"
        try #"{"crease":"plan","version":1,"app":"Trailhead","sequences":[{"digest":"ca4b1840358ffb1c","events":[]}],"transitionSequences":[]}"#
            .write(toFile: v1, atomically: false, encoding: .utf8)
        let old = try CommandRunner.run(["coverage", "--plan", v1, trace, "--json"])
        let oldReport = try JSON.parse(Array(old.stdout.utf8))
        #expect(old.status == 0 && oldReport["layouts"]?["total"] == .number(1) && oldReport["covered"] == .number(1), "\(old.stdout)\(old.stderr)")
        let split = dir + "/split.json"
        #expect(try CommandRunner.run(["plan", "--app", "builtin:split", "--max-depth", "1", "-o", split]).status == 0)
        let other = try CommandRunner.run(["coverage", "--plan", split, trace])
        #expect(other.status == 2 && other.stderr.contains(#"a trace of app "Trailhead""#) && other.stderr.contains(#"is for app "Field Notes""#), "\(other.stderr)")
    }

    @Test("layout --events refuses an event whose ts goes back, naming both lines")
    func layoutEventsTimesNeverGoBack() throws {
        let events = [#"{"event":"motion","gravity":[0,-1,0],"ts":2000000}"#, #"{"event":"motion","gravity":[1,0,0],"ts":1000000}"#].joined(separator: "\n")
        let r = try CommandRunner.run(["layout", "--events", "-"], stdin: events)
        #expect(r.status == 2 && r.stderr.contains("stdin:2") && r.stderr.contains("goes back") && r.stderr.contains("line 1"), "\(r.stderr)")
        #expect(r.stdout.isEmpty)
    }

    @Test("report: a bad screenshot (a directory, an oversized file, a text file) is skipped and named; the good one is kept")
    func reportSkipsBadScreenshots() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let shots = dir + "/shots"
        try FileManager.default.createDirectory(atPath: shots + "/gen-look-1.png", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: shots + "/gen-look-1.jpg", contents: Data("not an image".utf8)))
        let big = try #require(FileHandle(forWritingAtPath: shots + "/gen-look-1.jpeg") ?? {
            _ = FileManager.default.createFile(atPath: shots + "/gen-look-1.jpeg", contents: nil)
            return FileHandle(forWritingAtPath: shots + "/gen-look-1.jpeg")
        }())
        try big.truncate(atOffset: UInt64(ReportCommand.screenshotLimit + 1))
        try big.close()
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 16)
        #expect(FileManager.default.createFile(atPath: shots + "/gen-look-6.png", contents: Data(png)))
        let r = try CommandRunner.run(["report", Self.corpus + "/rig-observations.jsonl", "--screenshots", shots, "-o", dir + "/r.html"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("gen-look-1.png is a directory") && r.stderr.contains("gen-look-1.jpg is not a JPEG image")
                && r.stderr.contains("gen-look-1.jpeg is over the limit"), "\(r.stderr)")
        #expect(r.stderr.contains(", 1 screenshots;"), "\(r.stderr)")
    }

    @Test("trace check streams: a trace followed by 1.25 GiB of NUL padding is checked and fixed within 1 GiB of address space")
    func traceCheckStreamsAHugePaddedFile() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let trace = dir + "/padded.jsonl"
        try FileManager.default.copyItem(atPath: Self.corpus + "/slow-unfold.jsonl", toPath: trace)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: trace)[.size] as? Int)
        #expect(truncate(trace, off_t(size + (5 << 28))) == 0)   // sparse: no disk used
        // Read whole, the file needed 1.25 GiB of memory; under this limit that cannot be had.
        let crease = CommandRunner.productsDirectory.appendingPathComponent("crease").path
        for (args, status) in [("trace check '\(trace)'", Int32(1)), ("trace check --fix '\(trace)'", Int32(0))] {
            let r = try CommandRunner.run(["-c", "ulimit -v 1048576; exec '\(crease)' \(args)"], executable: URL(fileURLWithPath: "/bin/sh"))
            #expect(r.status == status, "\(args): \(r.stdout)\(r.stderr)")
            #expect(r.stdout.contains("1000 events") && r.stdout.contains("cut at byte \(size)") && r.stdout.contains("NUL bytes"), "\(r.stdout)")
        }
        #expect(try FileManager.default.attributesOfItem(atPath: trace)[.size] as? Int == size)
        #expect(try CommandRunner.run(["replay", "--verify", trace]).status == 0)
    }

    /// Issue 37: one record no reader accepts (a capture that ends before it starts, as a
    /// wall clock wrote it) made every reader refuse the file: info, glitches, conformance,
    /// report and replay --verify now skip that line, name it and read the rest; index counts
    /// the rest and says where the damage is; the tools that write a trace refuse it, so
    /// they never drop a line.
    @Test("a line that is no record is skipped and named by every reader, and refused by the tools that write")
    func aBadRecordIsSkippedAndNamed() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let lines = try String(contentsOfFile: Self.corpus + "/slow-unfold.jsonl", encoding: .utf8).split(separator: "\n").map(String.init)
        let seq = try #require(try JSON.parse(Array(lines[4].utf8))["seq"])
        var w = JSONWriter()
        w.value(seq)
        let bad = #"{"seq":\#(String(decoding: w.bytes, as: UTF8.self)),"t":5,"captured":[9,3],"client":1,"observe":{"cmd":"observe","observed":{}},"verdict":"match","layoutSeq":0,"matchedSeq":0,"differences":[]}"#
        let trace = dir + "/damaged.jsonl"
        try (Array(lines[..<5]) + [bad] + Array(lines[5...])).joined(separator: "\n").appending("\n").write(toFile: trace, atomically: false, encoding: .utf8)
        let events = lines.count { $0.contains(#""event":"#) }
        let named = "line 6 (byte"
        let info = try CommandRunner.run(["trace", "info", trace, "--json"])
        #expect(info.status == 0 && info.stderr.contains(named) && info.stderr.contains("this line is skipped"), "\(info.stderr)")
        #expect(try JSON.parse(Array(info.stdout.utf8))["events"] == .number(Double(events)), "\(info.stdout.prefix(300))")
        for command in [["trace", "glitches", trace], ["trace", "conformance", trace], ["report", trace, "-o", dir + "/page.html"]] {
            let r = try CommandRunner.run(command)
            #expect(r.status != 2 && r.stderr.contains(named), "\(command): \(r.status) \(r.stderr)")
        }
        let verified = try CommandRunner.run(["replay", "--verify", trace])
        #expect(verified.status == 1 && verified.stderr.contains("verified \(events) events") && verified.stdout.contains("1 line is no record"),
                "\(verified.stdout)\(verified.stderr)")
        let index = try CommandRunner.run(["trace", "index", dir])
        #expect(index.stdout.contains("\(events) events") && index.stdout.contains("DAMAGED: line 6"), "\(index.stdout)")
        // A tool that writes a trace would drop the line: it refuses, naming it.
        let rebase = try CommandRunner.run(["trace", "rebase", trace, "-o", dir + "/rebased"])
        #expect(rebase.status != 0 && rebase.stdout.contains(named), "\(rebase.stdout)\(rebase.stderr)")
        let slice = try CommandRunner.run(["trace", "slice", trace, "--from", "2", "--to", "4", "-o", dir + "/slice.jsonl"])
        #expect(slice.status != 0 && slice.stderr.contains(named), "\(slice.stderr)")
    }
}
