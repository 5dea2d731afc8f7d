#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import Testing

/// What a rig needs from a real creased: errors it can trace, labels, loading a state,
/// resetting the stats, and per-event latency in the trace.

/// The trace files (not the index) in a daemon's default trace directory, by part.
private func traceFiles(_ d: DaemonProcess) throws -> [String] {
    let dir = "\(d.dir)/state"
    return try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".jsonl") }
        .sorted { Int($0.split(separator: "-").last!.dropLast(6))! < Int($1.split(separator: "-").last!.dropLast(6))! }
        .map { "\(dir)/\($0)" }
}

/// Stops the daemon (flushing its trace) and reads its first trace file.
private func stoppedTrace(_ d: DaemonProcess) throws -> TraceFile {
    d.stop()
    let path = try #require(try traceFiles(d).first)
    return try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
}

private func records(_ file: TraceFile) throws -> [TraceRecord] {
    var cursor = file.cursor()
    var out: [TraceRecord] = []
    while let r = try cursor.next() { out.append(r.record) }
    return out
}

private func encode(_ value: JSONValue) -> String {
    var w = JSONWriter()
    w.value(value)
    return String(decoding: w.bytes, as: UTF8.self)
}

@Suite(.serialized) struct RigDaemonTests {
    @Test("a rejected event without an id echoes its ts and the connection's line number; every line counts")
    func rejectionsCarryLineAndTs() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        c.send(#"{"event":"hinge","angle":10,"ts":1000}"# + "\n\n# a comment\n" + #"{"event":"hinge","angle":190,"ts":2000}"# + "\n")
        let r = try c.readJSON()
        #expect(r["line"] == .number(4) && r["ts"] == .number(2000) && r["id"] == nil, "\(r)")
        #expect(r["error"]?["code"] == .string("outOfRange") && r["error"]?["message"]?.str?.hasSuffix("got 190") == true)
        // A line that is not JSON has no ts to echo, only its line; an event the state refuses keeps its ts.
        c.sendLine("{nope")
        let bad = try c.readJSON()
        #expect(bad["line"] == .number(5) && bad["ts"] == nil && bad["error"]?["code"] == .string("badJSON"))
        c.sendLine(#"{"event":"dismiss","ts":77}"#)
        let state = try c.readJSON()
        #expect(state["line"] == .number(6) && state["ts"] == .number(77) && state["error"]?["code"] == .string("invalidState"))
        // With an id the id comes back too.
        let withId = try c.request(#"{"event":"liveActivities","count":5000,"id":"x","ts":9}"#)
        #expect(withId["id"] == .string("x") && withId["line"] == .number(7) && withId["ts"] == .number(9))
        #expect(withId["error"]?["message"]?.str?.hasSuffix("got 5000") == true)
        // Another connection counts its own lines.
        let other = try Client(d.socketPath)
        #expect(try other.request(#"{"event":"pop"}"#)["line"] == .number(1))
    }

    @Test("a last line without a newline is reported to the client, logged and counted, and not applied")
    func unterminatedLastLine() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        c.send(#"{"event":"hinge","angle":90,"id":1}"# + "\n" + #"{"event":"hinge","angle":180,"id":2}"#)
        c.shutdownWrite()
        let (lines, eof) = c.drainToEOF(timeout: 30)
        #expect(eof)
        let replies = lines.compactMap(parseJSON)
        #expect(replies.count == 2, "\(lines)")
        #expect(replies.first?["id"] == .number(1) && replies.first?["ok"] == .bool(true))
        let report = try #require(replies.last)
        #expect(report["line"] == .number(2) && report["error"]?["code"] == .string("unterminatedLine"), "\(report)")
        let watcher = try Client(d.socketPath)
        let stats = try watcher.request(#"{"cmd":"stats","id":"s"}"#)
        #expect(stats["seq"] == .number(1), "the unterminated event was not applied")
        #expect(stats["stats"]?["unterminatedLines"] == .number(1))
        #expect(d.log().contains("ended its stream inside line 2"), "\(d.log())")
        // A stream that ends on a newline is not reported.
        let clean = try Client(d.socketPath)
        clean.send(#"{"event":"hinge","angle":90}"# + "\n")
        clean.shutdownWrite()
        #expect(clean.drainToEOF(timeout: 30).lines.isEmpty)
        #expect(try watcher.request(#"{"cmd":"stats","id":"s"}"#)["stats"]?["unterminatedLines"] == .number(1))
    }

    @Test("--label goes into hello, stats, the trace header and the trace directory's index")
    func labelsEverywhere() throws {
        let d = try DaemonProcess(arguments: ["--label", "rig=bench-3", "--label", "serial=F2LX=91"])
        let c = try Client(d.socketPath)
        let expected = JSONValue.object([("rig", .string("bench-3")), ("serial", .string("F2LX=91"))])
        #expect(try c.request(#"{"cmd":"hello"}"#)["labels"] == expected)
        #expect(try c.request(#"{"cmd":"stats"}"#)["stats"]?["labels"] == expected)
        // A record first: a rotation of a file that holds none answers with that file.
        #expect(try c.request(#"{"event":"hinge","angle":30,"id":"h"}"#)["ok"] == .bool(true))
        let rotated = try c.request(#"{"cmd":"trace","action":"rotate","id":"r"}"#)
        #expect(rotated["ok"] == .bool(true))
        let file = try stoppedTrace(d)
        #expect(file.header.labels == [try Label(parsing: "rig=bench-3"), try Label(parsing: "serial=F2LX=91")])
        let index = try String(contentsOfFile: "\(d.dir)/state/\(TraceIndexEntry.fileName)", encoding: .utf8)
        let entries = try index.split(separator: "\n").map { try TraceIndexEntry.decode(try JSON.parse(Array($0.utf8))) }
        #expect(entries.map(\.file) == (try traceFiles(d)).map { ($0 as NSString).lastPathComponent })
        #expect(entries.map(\.reason) == ["start", "trace rotate"] && entries.allSatisfy { $0.labels == file.header.labels })
        let listed = try crease(["trace", "index", "\(d.dir)/state", "--label", "rig=bench-3"], socket: d.socketPath)
        #expect(listed.status == 0 && listed.out.split(separator: "\n").count == 2, "\(listed)")
        #expect(try crease(["trace", "index", "\(d.dir)/state", "--label", "rig=bench-4"], socket: d.socketPath).out.isEmpty)
        // A daemon without labels says so with an empty object.
        let plain = try DaemonProcess()
        #expect(try Client(plain.socketPath).request(#"{"cmd":"hello"}"#)["labels"] == .object([]))
    }

    @Test("load puts a state in place one seq on, publishes it, is traced and replays; a wrong digest changes nothing")
    func loadAStateIntoALiveDaemon() throws {
        let d = try DaemonProcess(arguments: ["--app", "builtin:tabs"])
        let sub = try Client(d.socketPath)
        #expect(try sub.request(#"{"cmd":"subscribe","topics":["layout"],"id":"s"}"#)["ok"] == .bool(true))
        #expect(try sub.readJSON()["push"] == .string("layout"))
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"event":"hinge","angle":40,"id":1}"#)["ok"] == .bool(true))
        #expect(try sub.readJSON()["seq"] == .number(1))

        var target = Engine(profile: .builtin, app: BuiltinApps.app(named: "split")!)
        try target.apply(.hinge(angle: 175))
        try target.apply(.inspector(presented: true))
        try target.apply(.orientation(.landscapeRight))
        let request = LoadRequest(profile: target.profile, app: target.app,
                                  state: try JSON.parse(target.state.jsonBytes(app: target.app)), digest: target.digest)
        var w = JSONWriter()
        request.write(to: &w, id: .string("load"))
        let line = String(decoding: w.bytes, as: UTF8.self)

        // The same load asking for another digest is refused and changes nothing.
        let wrong = try c.request(line.replacingOccurrences(of: Digest.hex(target.digest), with: "0123456789abcdef"))
        #expect(wrong["ok"] == .bool(false) && wrong["error"]?["code"] == .string("digestMismatch") && wrong["id"] == .string("load"))
        #expect(try c.request(#"{"cmd":"sync","id":"y"}"#)["seq"] == .number(1))

        let loaded = try c.request(line)
        #expect(loaded["ok"] == .bool(true) && loaded["seq"] == .number(2) && loaded["changed"] == .bool(true), "\(loaded)")
        #expect(loaded["digest"]?.str == Digest.hex(target.digest))
        let push = try sub.readJSON()
        #expect(push["seq"] == .number(2) && push["digest"]?.str == Digest.hex(target.digest))
        let hello = try c.request(#"{"cmd":"hello"}"#)
        #expect(hello["app"]?.str == target.app.name)
        // Events go on from the loaded state.
        let next = try c.request(#"{"event":"orientation","value":"portrait","id":3}"#)
        var expected = target
        try expected.apply(.orientation(.portrait))
        #expect(next["seq"] == .number(3) && next["digest"]?.str == Digest.hex(expected.digest))

        let file = try stoppedTrace(d)
        let loads = try records(file).compactMap { r -> TraceLoad? in if case .load(let l) = r { l } else { nil } }
        #expect(loads.count == 1 && loads.first?.seq == 2 && loads.first?.digest == target.digest && loads.first?.state == target.state)
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil && outcome.engine.digest == expected.digest, "\(outcome.divergence?.summary ?? "")")
        #expect(d.log().contains("loaded app \"\(target.app.name)\""))
    }

    @Test("replay SLICE --to SOCKET --verify loads the slice's starting state into a busy daemon; --no-load refuses a wrong one")
    func replayASliceIntoALiveDaemon() throws {
        // Record a run, then slice it from the middle.
        let recorder = try DaemonProcess()
        let gen = try crease(["gen", "--scenario", "rig", "--seed", "5", "--rate", "2000", "--seconds", "1", "--to", recorder.socketPath, "--speed", "max"],
                             socket: recorder.socketPath)
        #expect(gen.status == 0, "\(gen.err)")
        recorder.stop()
        let recorded = try #require(try traceFiles(recorder).first)
        let slice = "\(recorder.dir)/slice.jsonl"
        let sliced = try crease(["trace", "slice", recorded, "--from", "200", "--to", "600", "-o", slice], socket: recorder.socketPath)
        #expect(sliced.status == 0, "\(sliced.err)")

        // A daemon with another app, somewhere else entirely.
        let live = try DaemonProcess(arguments: ["--app", "builtin:sidebar"])
        let c = try Client(live.socketPath)
        #expect(try c.request(#"{"event":"hinge","angle":100,"id":1}"#)["ok"] == .bool(true))
        let refused = try crease(["replay", slice, "--to", live.socketPath, "--verify", "--no-load"], socket: live.socketPath)
        #expect(refused.status == 1 && refused.err.contains("the daemon is at digest"), "\(refused)")
        #expect(try c.request(#"{"cmd":"sync","id":"y"}"#)["seq"] == .number(1), "a refused replay sends no event")

        let replayed = try crease(["replay", slice, "--to", live.socketPath, "--verify"], socket: live.socketPath)
        #expect(replayed.status == 0 && replayed.err.contains("every reply's digest matches"), "\(replayed)")
        let sliceFile = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: slice))))
        let final = try TraceReplay.run(sliceFile, verify: true).engine.digest
        #expect(try c.request(#"{"cmd":"sync","id":"z"}"#)["digest"]?.str == Digest.hex(final))
    }

    @Test("stats reset answers with the figures so far and starts a new period; it needs publish access")
    func statsReset() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        for i in 0..<5 { c.sendLine(toggle(i)) }
        c.sendLine("{bad")
        #expect(try c.readJSON()["error"]?["code"] == .string("badJSON"))
        let before = try c.request(#"{"cmd":"stats","reset":true,"id":"r"}"#)
        #expect(before["reset"] == .bool(true) && before["stats"]?["events"] == .number(5) && before["stats"]?["rejected"] == .number(1),
                "\(encode(before))")
        let after = try c.request(#"{"cmd":"stats","id":"s"}"#)
        let s = try #require(after["stats"])
        #expect(s["events"] == .number(0) && s["rejected"] == .number(0) && s["latency"]?["count"] == .number(0), "\(encode(s))")
        #expect(s["commands"] == .number(1) && s["clients"] == .number(1) && after["seq"] == .number(5))
        #expect((s["periodS"]?.double ?? 99) <= (s["uptimeS"]?.double ?? 0))
    }

    @Test("with layouts recorded and files rotating by size, bursts published as one still replay file by file, latencies and all")
    func layoutsAndRotationWithStagedRecords() throws {
        let d = try DaemonProcess(arguments: ["--trace-layouts", "--trace-rotate-bytes", "60000"])
        let c = try Client(d.socketPath)
        for round in 0..<6 {
            c.send((0..<40).map { toggle($0 + round) + "\n" }.joined() + #"{"event":"hinge","angle":\#(round * 30)}"# + "\n")
            _ = try c.request(#"{"cmd":"sync","id":"y"}"#)
        }
        d.stop()
        let files = try traceFiles(d)
        #expect(files.count > 2, "\(files)")
        var events = 0, batches = 0, layouts = 0
        for path in files {
            let file = try TraceFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            let outcome = try TraceReplay.run(file, verify: true)
            #expect(outcome.divergence == nil, "\(path): \(outcome.divergence?.summary ?? "")")
            for r in try records(file) {
                switch r {
                case .event(let e): events += 1; #expect(e.latencyNs != nil)
                case .batch: batches += 1
                case .layout: layouts += 1
                default: break
                }
            }
        }
        #expect(events == 246 && batches > 0 && layouts > 0)
    }

    @Test("every traced event carries the daemon's latency: the figure its reply gave, in nanoseconds")
    func traceRecordsLatency() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        var acks: [Int: Double] = [:]
        for i in 0..<40 {
            let r = try c.request(toggle(i, id: String(i + 1)))
            acks[i + 1] = try #require(r["latencyUs"]?.double)
        }
        // A burst without ids: published together, recorded each with its own latency.
        c.send((0..<200).map { toggle($0) + "\n" }.joined())
        _ = try c.request(#"{"cmd":"sync","id":"y"}"#)
        let events = try records(try stoppedTrace(d)).compactMap { r -> TraceEvent? in if case .event(let e) = r { e } else { nil } }
        #expect(events.count == 240 && events.allSatisfy { $0.latencyNs != nil })
        for e in events.prefix(40) {
            // The reply rounds to a tenth of a microsecond.
            let us = Double(e.latencyNs!) / 1000
            #expect(abs(us - acks[e.seq]!) <= 0.051, "seq \(e.seq): trace \(us) us, reply \(acks[e.seq]!) us")
        }
        #expect(events.allSatisfy { $0.latencyNs! < 60_000_000_000 })
    }
}
