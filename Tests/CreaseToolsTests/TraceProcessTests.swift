#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
@testable import CreaseTools
import Foundation
import Testing
import CreaseTestSupport

/// The built `crease` and `creased`, beside the test bundle in `.build/<configuration>/`.
enum Built {
    static let directory: String = {
        let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var dir = bundle.deletingLastPathComponent()
        // Swift Testing may run from inside the .xctest bundle.
        while dir.path != "/", !FileManager.default.fileExists(atPath: dir.appendingPathComponent("creased").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.path
    }()
    static var crease: String { "\(directory)/crease" }
    static var creased: String { "\(directory)/creased" }
}

struct Finished {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A scratch directory removed when the test ends.
final class Scratch {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "crease-trace-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs a program to completion, its output in files (a pipe could fill and stall it).
func runProgram(_ path: String, _ args: [String], in scratch: Scratch) throws -> Finished {
    let p = try launch(path, args, in: scratch)
    p.process.waitUntilExit()
    return p.finish()
}

struct Launched {
    let process: Process
    let out: String
    let err: String
    func finish() -> Finished {
        Finished(status: process.terminationStatus,
                 stdout: (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
                 stderr: (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
    }
}

func launch(_ path: String, _ args: [String], in scratch: Scratch, environment: [String: String] = [:]) throws -> Launched {
    #expect(FileManager.default.isExecutableFile(atPath: path), "\(path) is not built: run swift build first")
    let id = UInt64.random(in: 0...UInt64.max)
    let out = "\(scratch.path)/out-\(id)", err = "\(scratch.path)/err-\(id)"
    #expect(FileManager.default.createFile(atPath: out, contents: nil))
    #expect(FileManager.default.createFile(atPath: err, contents: nil))
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    p.standardOutput = FileHandle(forWritingAtPath: out)
    p.standardError = FileHandle(forWritingAtPath: err)
    p.standardInput = FileHandle.nullDevice
    if !environment.isEmpty { p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
    try p.run()
    return Launched(process: p, out: out, err: err)
}

/// A real creased recording into `scratch/traces`.
final class LiveDaemon {
    let scratch: Scratch
    let socket: String
    let traces: String
    let launched: Launched

    init(_ scratch: Scratch, name: String = "d", _ extra: [String] = [], environment: [String: String] = [:]) throws {
        self.scratch = scratch
        socket = "\(scratch.path)/\(name).sock"
        traces = "\(scratch.path)/\(name)-traces"
        // --no-trace refuses a trace directory beside it.
        let traceArguments = extra.contains("--no-trace") ? [] : ["--trace-dir", traces]
        launched = try launch(Built.creased, ["--socket", socket] + traceArguments + ["--log-level", "warning"] + extra, in: scratch,
                              environment: environment)
        // The file appears at bind(), and a connection is accepted from listen() on; the loop
        // opens the trace (making its directory) only after that. A reply comes from the loop,
        // so once one came the trace's directory and first file exist.
        let path = socket
        try waitUntil("creased to answer on \(socket)") { (try? DaemonConnection(path: path).command(#"{"cmd":"sync","id":"ready"}"#)) != nil }
    }

    func signal(_ s: Int32) { kill(launched.process.processIdentifier, s) }

    func stop() -> Finished {
        signal(SIGTERM)
        launched.process.waitUntilExit()
        return launched.finish()
    }

    func killHard() {
        signal(SIGKILL)
        launched.process.waitUntilExit()
    }

    func traceFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: traces).filter { $0.hasSuffix(".jsonl") }
            .sorted { Int($0.split(separator: "-").last!.dropLast(6))! < Int($1.split(separator: "-").last!.dropLast(6))! }
            .map { "\(traces)/\($0)" }
    }

    deinit {
        if launched.process.isRunning { killHard() }
    }
}

func load(_ path: String) throws -> TraceFile { try TraceFile(bytes: Array(FileManager.default.contents(atPath: path)!)) }

func text(_ value: JSONValue?) -> String? { if case .string(let s)? = value { s } else { nil } }

@Suite(.serialized) struct TraceProcessTests {
    @Test func recordThenReplayInTwoSeparateProcessesGivesTheSameDigests() throws {
        let scratch = Scratch()
        let daemon = try LiveDaemon(scratch)
        let gen = try runProgram(Built.crease, ["gen", "--scenario", "tabs", "--seed", "3", "--to", daemon.socket, "--speed", "20"], in: scratch)
        #expect(gen.status == 0, "\(gen.stderr)")
        let client = try SocketStreamer(path: daemon.socket)
        let sync = try client.request(Array(#"{"cmd":"sync","id":"s"}"#.utf8), id: "s")
        let digest = try #require(text(sync["digest"]))
        #expect(daemon.stop().status == 0)
        let files = try daemon.traceFiles()
        #expect(files.count == 1)

        for _ in 0..<2 {
            let replay = try runProgram(Built.crease, ["replay", "--verify", files[0]], in: scratch)
            #expect(replay.status == 0, "\(replay.stdout)\(replay.stderr)")
            #expect(replay.stderr.contains("final digest \(digest)"), "\(replay.stderr)")
        }
        // And the way a rig streams, into a second, fresh daemon: every reply's digest is the recorded one.
        let second = try LiveDaemon(scratch, name: "second", ["--no-trace"])
        let into = try runProgram(Built.crease, ["replay", files[0], "--to", second.socket, "--verify", "--speed", "10"], in: scratch)
        #expect(into.status == 0, "\(into.stdout)\(into.stderr)")
        #expect(into.stderr.contains("every reply's digest matches") && into.stderr.contains("daemon digest \(digest)"), "\(into.stderr)")
        _ = second.stop()
    }

    @Test func killNineDuringA1kHzStreamStillReplaysToTheLastCompleteRecord() throws {
        let scratch = Scratch()
        let daemon = try LiveDaemon(scratch)
        let gen = try launch(Built.crease, ["gen", "--scenario", "flap", "--seconds", "3", "--to", daemon.socket], in: scratch)
        // Killed mid-stream, once the trace holds more than 600 records (a fifth of the stream).
        try waitUntil("the trace to hold 600 records") {
            guard let path = try daemon.traceFiles().first, let bytes = FileManager.default.contents(atPath: path) else { return false }
            return bytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } > 600
        }
        daemon.killHard()
        gen.process.waitUntilExit()
        let path = try daemon.traceFiles()[0]
        let outcome = try TraceReplay.run(try load(path), verify: true)
        #expect(outcome.divergence == nil)
        #expect(outcome.eventsApplied > 400, "more than 600 records were on disk before the kill")
        let replay = try runProgram(Built.crease, ["replay", "--verify", path], in: scratch)
        #expect(replay.status == 0, "\(replay.stderr)")
    }

    /// Streams hinge events with ids into a daemon whose disk takes 40 ms per write, kills it
    /// with SIGKILL once 300 replies are in, and returns how many acknowledged events the trace lacks.
    func acknowledgedButMissing(fsync: String) throws -> Int {
        let scratch = Scratch()
        let daemon = try LiveDaemon(scratch, ["--fsync", fsync], environment: ["CREASE_TRACE_SLOW_DISK_MS": "40"])
        let client = try SocketStreamer(path: daemon.socket)
        for i in 1...3000 {
            try client.send(Array(#"{"event":"hinge","angle":\#((i * 13) % 181),"id":\#(i)}"#.utf8))
            if i % 10 == 0 { try client.flush() }
        }
        try client.flush()
        try waitUntil("300 acknowledgements") { client.collected().count >= 300 }
        daemon.killHard()
        let acks = client.collected().compactMap { r -> (Int, String)? in
            guard case .number(let seq)? = r["seq"], let d = text(r["digest"]) else { return nil }
            return (Int(seq), d)
        }
        #expect(acks.count >= 300)
        var recorded: [Int: UInt64] = [:]
        var cursor = try load(try daemon.traceFiles()[0]).cursor()
        while let r = try cursor.next() { if case .event(let e) = r.record { recorded[e.seq] = e.digest } }
        return acks.filter { recorded[$0.0].map(Digest.hex) != $0.1 }.count
    }

    @Test func withFsyncAlwaysEveryAcknowledgedEventIsInTheTrace() throws {
        #expect(try acknowledgedButMissing(fsync: "always") == 0)
        // The same slow disk without it: replies run ahead of the file, and a kill loses some.
        #expect(try acknowledgedButMissing(fsync: "never") > 0)
    }

    /// On a disk that takes 40 ms per write, counts the observations whose record was not
    /// yet in the trace file when their reply came.
    func observationsAnsweredBeforeTheirRecord(fsync: String) throws -> Int {
        let scratch = Scratch()
        let daemon = try LiveDaemon(scratch, ["--fsync", fsync], environment: ["CREASE_TRACE_SLOW_DISK_MS": "40"])
        let client = try SocketStreamer(path: daemon.socket)
        _ = try client.request(Array(#"{"event":"hinge","angle":180,"id":"e"}"#.utf8), id: "e")
        var early = 0
        for i in 1...5 {
            let id = "o\(i)"
            let reply = try client.request(Array(#"{"cmd":"observe","id":"\#(id)","observed":{"barAxis":"horizontal"}}"#.utf8), id: id)
            #expect(reply["verdict"] == .string("match"))
            let written = String(decoding: try Data(contentsOf: URL(fileURLWithPath: try daemon.traceFiles()[0])), as: UTF8.self)
            if !written.contains(#""id":"\#(id)""#) { early += 1 }
        }
        #expect(daemon.stop().status == 0)
        return early
    }

    @Test func withFsyncAlwaysAnObserveIsAnsweredOnlyOnceItsRecordIsWritten() throws {
        #expect(try observationsAnsweredBeforeTheirRecord(fsync: "always") == 0)
        // The same slow disk without it: the replies run ahead of the file.
        #expect(try observationsAnsweredBeforeTheirRecord(fsync: "never") > 0)
    }

    @Test func rotationOnCommandAndOnSIGHUPStartsFilesThatEachVerify() throws {
        let scratch = Scratch()
        let daemon = try LiveDaemon(scratch)
        func gen(_ seed: Int) throws {
            let r = try runProgram(Built.crease, ["gen", "--scenario", "rtl", "--seed", "\(seed)", "--rate", "200", "--to", daemon.socket, "--speed", "max"], in: scratch)
            #expect(r.status == 0, "\(r.stderr)")
        }
        try gen(1)
        let client = try SocketStreamer(path: daemon.socket)
        let rotated = try client.request(Array(#"{"cmd":"trace","action":"rotate","id":"r"}"#.utf8), id: "r")
        #expect(rotated["ok"] == .bool(true))
        try gen(2)
        daemon.signal(SIGHUP)
        try waitUntil("the SIGHUP file") { try daemon.traceFiles().count == 3 }
        try gen(3)
        let stats = try client.request(Array(#"{"cmd":"stats","id":"st"}"#.utf8), id: "st")
        #expect(stats["stats"]?["trace"]?["lost"] == .number(0))
        #expect(daemon.stop().status == 0)
        let files = try daemon.traceFiles()
        #expect(files.count == 3)
        #expect(files.contains(try #require(text(rotated["trace"]))))
        var seq = 0
        for (path, reason) in zip(files, ["start", "trace rotate", "SIGHUP"]) {
            let file = try load(path)
            #expect(file.header.reason == reason)
            #expect(file.header.initialSeq == seq)
            let outcome = try TraceReplay.run(file, verify: true)
            #expect(outcome.divergence == nil)
            seq = outcome.engine.seq
        }
    }

    @Test func checkFixSliceDiffExportAndAnUnknownVersionFromTheCommandLine() throws {
        let scratch = Scratch()
        let source = try Inputs.readFile(Corpus.directory + "/tab-switch-browse-task.jsonl")
        let whole = "\(scratch.path)/whole.jsonl", cut = "\(scratch.path)/cut.jsonl"
        #expect(FileManager.default.createFile(atPath: whole, contents: Data(source)))
        #expect(FileManager.default.createFile(atPath: cut, contents: Data(source.dropLast(400))))

        let damaged = try runProgram(Built.crease, ["trace", "check", cut], in: scratch)
        #expect(damaged.status == 1 && damaged.stdout.contains("cut at byte"), "\(damaged.stdout)")
        let fixed = try runProgram(Built.crease, ["trace", "check", "--fix", cut], in: scratch)
        #expect(fixed.status == 0 && fixed.stdout.contains("fixed: truncated"), "\(fixed.stdout)")
        #expect(try runProgram(Built.crease, ["trace", "check", cut], in: scratch).status == 0)
        #expect(try runProgram(Built.crease, ["replay", "--verify", cut], in: scratch).status == 0)

        let sliced = "\(scratch.path)/slice.jsonl"
        #expect(try runProgram(Built.crease, ["trace", "slice", whole, "--from", "20", "--to", "40", "-o", sliced], in: scratch).status == 0)
        #expect(try load(sliced).header.initialSeq == 19)
        #expect(try runProgram(Built.crease, ["replay", "--verify", sliced], in: scratch).status == 0)

        #expect(try runProgram(Built.crease, ["trace", "diff", whole, whole], in: scratch).status == 0)
        let diff = try runProgram(Built.crease, ["trace", "diff", whole, cut], in: scratch)
        #expect(diff.status == 1 && diff.stdout.contains("B ends after"), "\(diff.stdout)")

        let chrome = try runProgram(Built.crease, ["trace", "export", "--chrome", whole], in: scratch)
        #expect(chrome.status == 0)
        #expect(try JSON.parse(Array(chrome.stdout.utf8).dropLast())["traceEvents"] != nil)
        // On the recorded schedule, ten times faster: the 1.45 s between the marks takes about 145 ms.
        let started = Date()
        let paced = try runProgram(Built.crease, ["replay", "--verify", "--speed", "10", "--each", whole], in: scratch)
        #expect(Date().timeIntervalSince(started) > 0.12)
        #expect(paced.status == 0, "\(paced.stderr)")
        let layouts = paced.stdout.split(separator: "\n")
        #expect(layouts.count == 13, "the initial layout and one per change")
        #expect(layouts.allSatisfy { (try? JSON.parse(Array($0.utf8)))?["digest"] != nil })
        // A recorded batch was published once, at its end: so does --each.
        let burst = try runProgram(Built.crease, ["replay", "--each", Corpus.directory + "/burst-coalesced.jsonl"], in: scratch)
        let published = burst.stdout.split(separator: "\n").compactMap { line -> Int? in
            if case .number(let n)? = (try? JSON.parse(Array(line.utf8)))?["seq"] { Int(n) } else { nil }
        }
        #expect(published.contains(434) && !published.contains { (430..<434).contains($0) }, "\(published)")
        let bench = try runProgram(Built.crease, ["trace", "bench", whole, "--repeat", "1"], in: scratch)
        #expect(bench.status == 0 && bench.stdout.contains("replay --verify in process"), "\(bench.stdout)\(bench.stderr)")
        let info = try runProgram(Built.crease, ["trace", "info", whole], in: scratch)
        #expect(info.status == 0 && info.stdout.contains("select 6"), "\(info.stdout)")

        let future = "\(scratch.path)/v5.jsonl"
        let v5 = String(decoding: source, as: UTF8.self).replacingFirst(#""version":1,"#, with: #""version":5,"#)
            .replacingFirst(#""version":2,"#, with: #""version":5,"#).replacingFirst(#""version":3,"#, with: #""version":5,"#)
            .replacingFirst(#""version":4,"#, with: #""version":5,"#)
        #expect(FileManager.default.createFile(atPath: future, contents: Data(v5.utf8)))
        let refused = try runProgram(Built.crease, ["replay", "--verify", future], in: scratch)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("trace format version 5 is not supported: this crease reads versions 1, 2, 3 and 4"), "\(refused.stderr)")
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let r = range(of: target) else { return self }
        return replacingCharacters(in: r, with: replacement)
    }
}
