import CreaseCore
import CreaseDaemonCore
import Foundation
import Testing
@testable import CreaseTools

/// `crease replay --verify --daemon` (issue 41): a trace fed through the daemon's decision
/// core, its records and batches checked against what the core decides.
@Suite struct DaemonReplayTests {
    static func corpusFile(_ name: String) throws -> TraceFile {
        try TraceFile(bytes: try Inputs.readFile(Corpus.directory + "/" + name))
    }

    /// The trace's text with `edit` applied to its lines (the header is line 0).
    static func edited(_ name: String, _ edit: (inout [String]) -> Void) throws -> TraceFile {
        var lines = String(decoding: try Inputs.readFile(Corpus.directory + "/" + name), as: UTF8.self)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        edit(&lines)
        return try TraceFile(bytes: Array(lines.joined(separator: "\n").utf8))
    }

    @Test("every trace of the corpus, every version, replays through the daemon's core as it was recorded")
    func theCorpusReplaysThroughTheCore() throws {
        for name in try Corpus.traces() + Corpus.olderTraces() {
            let outcome = try DaemonReplay.run(try DaemonReplayTests.corpusFile(name))
            #expect(outcome.divergence == nil, "\(name): \(outcome.divergence.map(DaemonReplay.describe) ?? [])")
            #expect(outcome.events > 0 && outcome.marks == 2, "\(name)")
        }
        // What the corpus holds is checked, not skipped.
        let burst = try DaemonReplay.run(try DaemonReplayTests.corpusFile("burst-coalesced.jsonl"))
        #expect(burst.batches == 1 && burst.events == 994)
        #expect(try DaemonReplay.run(try DaemonReplayTests.corpusFile("rig-observations.jsonl")).observations == 7)
    }

    /// The plain replay does not read batch records; the core decides them.
    @Test("a batch the core would not have cut is caught, at its seq")
    func anEditedBatchIsCaught() throws {
        let file = try DaemonReplayTests.edited("burst-coalesced.jsonl") { lines in
            let i = lines.firstIndex(of: #"{"seq":434,"batch":[430,434]}"#)!
            lines[i] = #"{"seq":434,"batch":[431,434]}"#
        }
        #expect(try TraceReplay.run(file, verify: true).divergence == nil, "the engine's replay cannot tell")
        let d = try #require(try DaemonReplay.run(file).divergence)
        #expect(d.seq == 434 && d.recorded == "batch 431…434" && d.decided == "batch 430…434", "\(d)")
    }

    /// Two events exchanged, each keeping the seq of its place: the first one out of place
    /// is applied where the other was, and leaves another layout than the trace recorded.
    @Test("events whose order was edited diverge at the first one out of place")
    func editedOrderIsCaughtAtItsSeq() throws {
        let original = try DaemonReplayTests.corpusFile("split-view-left-right.jsonl")
        var cursor = original.cursor()
        var events: [(line: Int, seq: Int, digest: UInt64)] = []
        while let traced = try cursor.next() {
            if case .event(let e) = traced.record { events.append((traced.line, e.seq, e.digest)) }
        }
        // The first event that changed the layout, and the one before it.
        let i = try #require(events.indices.dropFirst().first { events[$0].digest != events[$0 - 1].digest })
        let (first, second) = (events[i - 1], events[i])
        // Each record keeps its seq, time and digest; only the events the rig sent change places.
        func event(_ line: String) -> Range<String.Index> {
            line.range(of: #""event":{"#)!.lowerBound..<line.range(of: #","digest""#)!.lowerBound
        }
        let file = try DaemonReplayTests.edited("split-view-left-right.jsonl") { lines in
            let a = lines[first.line - 1], b = lines[second.line - 1]
            lines[first.line - 1] = a.replacingCharacters(in: event(a), with: b[event(b)])
            lines[second.line - 1] = b.replacingCharacters(in: event(b), with: a[event(a)])
        }
        let d = try #require(try DaemonReplay.run(file).divergence)
        #expect(d.seq == first.seq && d.recorded.hasPrefix("event seq \(first.seq)") && d.decided.hasPrefix("event seq \(first.seq)"), "\(d)")
        #expect(d.recorded != d.decided)
    }

    @Test("the command: --daemon goes with --verify, passes a trace and names the seq of one it does not")
    func theCommand() throws {
        let scratch = Scratch()
        let path = Corpus.directory + "/burst-coalesced.jsonl"
        let ok = try runProgram(Built.crease, ["replay", "--verify", "--daemon", path], in: scratch)
        #expect(ok.status == 0 && ok.stderr.contains("the daemon's core decides what the trace recorded: 994 events, 1 batches"), "\(ok.stderr)")
        let text = String(decoding: try Inputs.readFile(path), as: UTF8.self)
            .replacingOccurrences(of: #"{"seq":434,"batch":[430,434]}"#, with: #"{"seq":434,"batch":[431,434]}"#)
        let bad = scratch.path + "/edited.jsonl"
        try text.write(toFile: bad, atomically: true, encoding: .utf8)
        let diverged = try runProgram(Built.crease, ["replay", "--verify", "--daemon", bad], in: scratch)
        #expect(diverged.status == 1 && diverged.stdout.contains("diverged at seq 434"), "\(diverged.stdout)\(diverged.stderr)")
        let corpus = try runProgram(Built.crease, ["replay", "--verify", "--daemon", bad, path, "--jobs", "2"], in: scratch)
        #expect(corpus.status == 1 && corpus.stdout.contains("seq 434"), "\(corpus.stdout)")
        let usage = try runProgram(Built.crease, ["replay", "--daemon", path], in: scratch)
        #expect(usage.status == 2 && usage.stderr.contains("--daemon checks the daemon's decisions: it goes with --verify"), "\(usage.stderr)")
    }
}
