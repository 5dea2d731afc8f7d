import CreaseCore
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import CreaseTestSupport
import Foundation
import Testing

/// `DaemonCore` takes one input type through one method: a run's inputs, recorded with
/// their times and fed to a fresh core, give the same actions, byte for byte. Daemon
/// behaviour can so be written as input sequences with every action expected, no socket.
@Suite struct DaemonInputReplayTests {
    /// Lines a rig, a reader and a careless client send: events, commands, bad JSON,
    /// forbidden ones, a line too long for its own good.
    static let pool: [String] = [
        #"{"event":"hinge","angle":90,"id":1}"#, #"{"event":"hinge","angle":170}"#, #"{"event":"hinge","angle":5,"id":"h"}"#,
        #"{"event":"hinge","angle":400,"id":2}"#,
        #"{"event":"motion","gravity":[1,0,0],"id":3}"#, #"{"event":"motion","gravity":[0,-1,0]}"#,
        #"{"event":"orientation","value":"landscapeLeft","id":4}"#, #"{"event":"keyboard","visible":true,"id":5}"#,
        #"{"event":"keyboard","visible":false}"#, #"{"event":"liveActivities","count":2,"id":6}"#,
        #"{"event":"push","screen":"trailDetail","id":7}"#, #"{"event":"pop","id":8}"#,
        #"{"cmd":"subscribe","topics":["layout","diagnostics","glitches","stats"],"id":"s"}"#,
        #"{"cmd":"unsubscribe","id":"u"}"#, #"{"cmd":"sync","id":"y"}"#, #"{"cmd":"stats","id":"t"}"#,
        #"{"cmd":"mark","label":"fold","id":"m"}"#, #"{"cmd":"hello","id":"o"}"#, #"{"cmd":"layout","id":"l"}"#,
        #"{"cmd":"observe","observed":{"barAxis":"vertical"},"id":"v"}"#,
        #"{"cmd":"observe","observed":{"barAxis":"horizontal"},"capturedAt":[1,2],"id":"w"}"#,
        #"{"cmd":"trace","action":"rotate","id":"r"}"#,
        #"{"event":"hinge","angle":"wide","id":9}"#, "{not json", "", "# a comment", #"{"cmd":"nope","id":"n"}"#,
    ]

    /// A random run: clients come (one only reads) and go, lines arrive in reads, the clock
    /// moves by microseconds to milliseconds, iterations end, the disk catches up, the stats
    /// timer fires, a client is dropped or sends a line too long; then the daemon stops.
    static func randomRun(seed: UInt64, steps: Int) -> CoreDriver {
        var rng = SplitMix64(seed: seed)
        let policy = AccessPolicy(publish: [.uid(1)], read: [.uid(2)])
        var d = CoreDriver(budgetUs: 1000, policy: policy)
        switch rng.below(3) {
        case 0: break
        case 1: d.input(.traceMode(.recording(layouts: rng.below(2) == 0, repliesWaitForDisk: false)))
        default: d.input(.traceMode(.recording(layouts: false, repliesWaitForDisk: true)))
        }
        var open: [Int] = []
        var next = 1
        for _ in 0..<steps {
            d.now += UInt64(rng.below(2_000_000))
            switch rng.below(20) {
            case 0, 1:
                let uid: UInt32 = [1, 2, 3][rng.below(3)]
                d.connect(next, peer: PeerCredentials(pid: 100, uid: uid, gid: uid))
                if d.core.clients[next] != nil { open.append(next) }
                next += 1
            case 2 where !open.isEmpty:
                let c = open.remove(at: rng.below(open.count))
                switch rng.below(4) {
                case 0: d.input(.dropped(client: c, reason: "queue over 1048576 bytes"))
                case 1: d.input(.lineTooLong(client: c, length: 2_000_000)); d.input(.closed(client: c))
                case 2: d.input(.endOfInput(client: c, unterminatedBytes: rng.below(2) * 17)); d.input(.closed(client: c))
                default: d.input(.closed(client: c))
                }
            case 3: d.endOfIteration()
            case 4: d.durable(upTo: d.core.engine.seq - rng.below(3), awaitedRecords: rng.below(4))
            case 5: d.input(.statsTick)
            case 6: d.input(.traceReopened(path: rng.below(2) == 0 ? "/t/new.jsonl" : nil, client: open.first ?? 1, id: .string("r")))
            default:
                guard !open.isEmpty else { continue }
                let c = open[rng.below(open.count)]
                let lines = (0...rng.below(4)).map { _ in pool[rng.below(pool.count)] }
                d.read(lines, from: c)
            }
        }
        d.input(.shutdown(reason: "SIGTERM"))
        if d.core.tracing { d.input(.traceClosed) }
        return d
    }

    @Test("random runs replay from their recorded inputs to the same actions, byte for byte", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomRunsReplay(seed: UInt64) throws {
        let run = Self.randomRun(seed: seed, steps: 300)
        #expect(run.performed.count > 100, "the run did something: \(run.performed.count) actions")
        let outcome = try run.replay()
        #expect(outcome.inputs > 300 && outcome.performs > 50, "\(outcome)")
        #expect(outcome.difference == nil, "\(outcome.difference ?? "")")
    }

    /// A daemon test written as inputs and every action they give.
    @Test func aReaderIsRefusedAnEventAndAnUnknownPeerIsRefusedAtTheDoor() {
        var d = CoreDriver(policy: AccessPolicy(publish: [.uid(1)], read: [.uid(2)]))
        d.connect(1, peer: PeerCredentials(pid: 10, uid: 2, gid: 2))
        d.read([#"{"event":"hinge","angle":90,"id":1}"#], from: 1)
        d.connect(2, peer: PeerCredentials(pid: 11, uid: 3, gid: 3))
        let expected: [String] = [
            #"log info: client 1 connected: pid 10 uid 2 gid 2; may read (1 open)"#,
            "startReading(client: 1)",
            #"write 1: {"id":1,"line":1,"ok":false,"error":{"code":"forbidden","message":"uid 2 (gid 2) may only read; the \"hinge\" event needs a peer named by --allow-publish","field":"event"}}"# + "\n",
            #"log debug: client 1: forbidden: the "hinge" event"#,
            #"log warning: client 2 connected: pid 11 uid 3 gid 3; refused: no --allow-read or --allow-publish rule names it"#,
            #"write 2: {"ok":false,"error":{"code":"forbidden","message":"uid 3 (gid 3) may not use this daemon; see --allow-read and --allow-publish"}}"# + "\n",
            "refuse(client: 2)",
        ]
        #expect(d.performed == expected)
        #expect(d.core.clients[2] == nil && d.core.engine.seq == 0)
    }

    /// The shutdown's order is the core's: no new client, the subscribers told, the trace
    /// closed, and only once it is on disk the replies it held and the connections closed.
    @Test func shutdownStopsAcceptingTellsSubscribersClosesTheTraceThenTheConnections() throws {
        var d = CoreDriver(acksWaitForDisk: true)
        d.connect(1)
        d.connect(2)
        d.read([#"{"cmd":"subscribe","topics":["layout"],"id":"s"}"#], from: 2)
        d.read([#"{"event":"hinge","angle":90,"id":7}"#], from: 1)
        let before = d.performed.count
        d.input(.shutdown(reason: "SIGTERM"))
        let stopping = Array(d.performed[before...])
        #expect(stopping.first == #"log notice: SIGTERM: shutting down"#)
        #expect(stopping.dropFirst().first == #"stopAccepting(status: "shutting down (SIGTERM)")"#)
        #expect(stopping.contains { $0.hasPrefix("write 2: ") && $0.contains(#""push":"shutdown""#) })
        #expect(!stopping.contains { $0.hasPrefix("write 1: ") }, "the hinge's reply waits for the disk")
        #expect(stopping.last == "closeTrace")
        let closing = d.performed.count
        d.input(.traceClosed)
        let after = Array(d.performed[closing...])
        #expect(after.count == 2 && after[0].hasPrefix("write 1: ") && after[0].contains(#""id":7"#), "\(after)")
        #expect(after.last == "closeConnections(graceMs: 1000)")
        // A second signal changes nothing.
        d.input(.shutdown(reason: "SIGINT"))
        #expect(d.performed.count == closing + 2)
        #expect(try d.replay().difference == nil)
    }
}

/// A real creased's run, recorded with `--record-inputs`, replays into a fresh core with the
/// same actions at every perform: the decisions of the daemon are a function of its inputs
/// and of the readings it recorded.
@Suite struct RecordedDaemonRunTests {
    @Test func aRealRunRecordedWithRecordInputsReplaysToTheSameActions() throws {
        let dir = try makeTempDir()
        let recording = "\(dir)/inputs.jsonl"
        let d = try DaemonProcess(arguments: ["--record-inputs", recording, "--trace-dir", "\(dir)/traces", "--fsync", "always",
                                              "--stats-interval-ms", "20"])
        let rig = try Client(d.socketPath)
        let watcher = try Client(d.socketPath)
        #expect(try watcher.request(#"{"cmd":"subscribe","topics":["layout","glitches","stats","conformance"],"id":"s"}"#)["ok"] == .bool(true))
        for i in 0..<200 {
            let angle = 10 + Double(i % 170)
            #expect(try rig.request(#"{"event":"hinge","angle":\#(angle),"id":\#(i)}"#)["ok"] == .bool(true))
        }
        rig.sendLine(#"{"event":"keyboard","visible":true}"#)
        rig.sendLine(#"{"event":"keyboard","visible":false}"#)
        #expect(try rig.request(#"{"cmd":"observe","observed":{"barAxis":"vertical"},"id":"o"}"#)["verdict"] != nil)
        #expect(try rig.request(#"{"cmd":"mark","label":"half way","id":"m"}"#)["ok"] == .bool(true))
        #expect(try rig.request("{not json")["ok"] == .bool(false))
        #expect(try rig.request(#"{"cmd":"stats","id":"t"}"#)["stats"] != nil)
        #expect(try rig.request(#"{"cmd":"trace","action":"rotate","id":"r"}"#)["ok"] == .bool(true))
        rig.close()
        d.signal(SIGTERM)
        #expect(d.waitForExit() == 0, "\(d.log())")
        let bytes = try #require(FileManager.default.contents(atPath: recording), "\(d.log())")
        let outcome = try DaemonRecording.replay(Array(bytes), policy: .open)
        #expect(outcome.difference == nil, "\(outcome.difference ?? "")")
        #expect(outcome.inputs > 400 && outcome.performs > 200, "\(outcome)")
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""in":"gauges""#), "the stats reply's gauges are an input of the recording")
        // A recording whose actions were not the core's is caught.
        let forged = text.replacingOccurrences(of: #"\"verdict\":\"mismatch\""#, with: #"\"verdict\":\"match\""#)
            .replacingOccurrences(of: #"\"verdict\":\"stale\""#, with: #"\"verdict\":\"match\""#)
        #expect(forged != text, "the observation's verdict is in the recorded actions")
        let caught = try DaemonRecording.replay(Array(forged.utf8), policy: .open)
        #expect(caught.difference?.contains("verdict") == true, "\(caught)")
    }
}

extension SplitMix64 {
    /// Uniform in 0..<n (n small: the modulo's bias does not matter to a test's choices).
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
