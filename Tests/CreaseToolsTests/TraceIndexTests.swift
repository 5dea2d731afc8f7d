#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
@testable import CreaseTools
import Foundation
import Testing

@Suite struct TraceIndexTests {
    @Test func oneRowPerTraceUnderADirectoryRecursively() throws {
        let scratch = Scratch()
        let d = try LiveDaemon(scratch, name: "rig")
        let events = (0..<20).map { #"{"event":"hinge","angle":\#(Double($0) * 9)}"# }
        #expect(try runProgram(Built.crease, ["send", "--socket", d.socket] + events, in: scratch).status == 0)
        let rotated = try DaemonConnection(path: d.socket).command(#"{"cmd":"trace","action":"rotate"}"#)
        #expect(rotated["ok"] == .bool(true))
        #expect(try runProgram(Built.crease, ["send", "--socket", d.socket, #"{"event":"orientation","value":"landscapeLeft"}"#], in: scratch).status == 0)
        #expect(d.stop().status == 0)
        // A copy deeper down is found too; a JSON Lines file that is no trace is skipped.
        let files = try d.traceFiles()
        let nested = "\(d.traces)/archive/2026"
        try FileManager.default.createDirectory(atPath: nested, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: files[0], toPath: "\(nested)/copy.jsonl")
        try Data(#"{"not":"a trace"}"#.utf8).write(to: URL(fileURLWithPath: "\(d.traces)/notes.jsonl"))

        let r = try runProgram(Built.crease, ["trace", "index", d.traces, "--json"], in: scratch)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("skipped \(d.traces)/notes.jsonl"))
        let rows = r.stdout.split(separator: "\n").map { try? JSON.parse(Array($0.utf8)) }
        #expect(rows.count == 3, "\(r.stdout)")
        let byFile = Dictionary(uniqueKeysWithValues: rows.compactMap { $0 }.map { (text($0["file"]) ?? "", $0) })
        let part0 = try #require(byFile[files[0]]), part1 = try #require(byFile[files[1]])
        #expect(part0["events"] == .number(20) && part0["firstSeq"] == .number(1) && part0["lastSeq"] == .number(20))
        #expect(part1["events"] == .number(1) && part1["part"] == .number(1) && part1["reason"] == .string("trace rotate"))
        #expect(byFile["\(nested)/copy.jsonl"]?["events"] == .number(20))
        for row in [part0, part1] {
            #expect(row["app"] == .string("Trailhead") && row["gaps"] == .number(0) && row["damaged"] == .null)
            #expect(row["labels"] == .object([]) && row["mismatches"] == .number(0))
            // Glitches by kind, every kind present, counted as `crease trace glitches` counts them.
            let file = try TraceFile(bytes: try TraceIO.readWhole(text(row["file"]) ?? ""))
            let found = try TraceGlitches.check(file, options: GlitchOptions()).glitches
            #expect(row["glitches"] == .object(GlitchKind.allCases.map { k in (k.rawValue, .number(Double(found.filter { $0.kind == k }.count))) }))
            // start and end are ISO 8601 UTC, end no earlier than start, apart by the duration.
            let start = try #require(text(row["start"]).flatMap(TraceIndex.parseISO8601))
            let end = try #require(text(row["end"]).flatMap(TraceIndex.parseISO8601))
            guard case .number(let duration)? = row["durationS"] else { Issue.record("no durationS"); continue }
            #expect(end >= start && abs(end.timeIntervalSince(start) - duration) < 0.002)
        }
        // Every row has the same members in the same order, so a table reader sees one schema.
        let keys = rows.compactMap { row -> [String]? in if case .object(let m)? = row { m.map(\.0) } else { nil } }
        #expect(Set(keys.map { $0.joined(separator: ",") }).count == 1)
    }

    @Test func labelsFilterByTheHeaderAndAreCheckedForShape() throws {
        let scratch = Scratch()
        let all = try runProgram(Built.crease, ["trace", "index", "\(packageRootPath)/Traces"], in: scratch)
        #expect(all.status == 0 && all.stdout.split(separator: "\n").count >= 9, "\(all.stdout)")
        #expect(all.stdout.contains(" events  0 gaps  Trailhead  \(packageRootPath)/Traces/slow-unfold.jsonl\n"), "\(all.stdout)")
        // The observing rig's trace holds one observation judged a mismatch (and one stale, not counted).
        let json = try runProgram(Built.crease, ["trace", "index", "\(packageRootPath)/Traces/rig-observations.jsonl", "--json"], in: scratch)
        let row = try JSON.parse(Array(json.stdout.utf8.prefix { $0 != 0x0A }))
        #expect(row["mismatches"] == .number(1), "\(json.stdout)")
        // The corpus was recorded without labels: a label filter leaves nothing.
        let none = try runProgram(Built.crease, ["trace", "index", "\(packageRootPath)/Traces", "--label", "rig=bench-3"], in: scratch)
        #expect(none.status == 0 && none.stdout.isEmpty, "\(none.stdout)")
        let bad = try runProgram(Built.crease, ["trace", "index", "\(packageRootPath)/Traces", "--label", "=x"], in: scratch)
        #expect(bad.status == 2 && bad.stderr.contains("KEY=VALUE"))
    }

    @Test func aDamagedTraceIsListedAsSuchAndFailsTheRun() throws {
        let scratch = Scratch()
        let source = try #require(try FileManager.default.contentsOfDirectory(atPath: packageRootPath + "/Traces").first { $0.hasSuffix(".jsonl") })
        var lines = try String(contentsOfFile: "\(packageRootPath)/Traces/\(source)", encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        lines[3] = "{\"seq\":this is not json}"
        try lines.joined(separator: "\n").write(toFile: "\(scratch.path)/bad.jsonl", atomically: true, encoding: .utf8)
        let r = try runProgram(Built.crease, ["trace", "index", scratch.path], in: scratch)
        #expect(r.status == 1)
        #expect(r.stdout.contains("bad.jsonl") && r.stdout.contains("DAMAGED"), "\(r.stdout)")
    }
}

let packageRootPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
