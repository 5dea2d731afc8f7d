import CreaseCore
import CreaseSystem
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Testing

/// Drives `DaemonCore` in-process with a clock the test moves: no socket, no loop. Every
/// input goes through `DaemonCore.handle`, as the shell's do, and the actions are performed
/// the way the shell does, into per-client lines. The run is recorded as `creased
/// --record-inputs` records one (`DaemonRecording`: inputs, the gauges among them, actions), so
/// `replay()` checks that a fresh core fed the same inputs decides the same actions.
struct CoreDriver {
    var core: DaemonCore
    var actions = DaemonActions(logThreshold: .debug)
    var now: UInt64 = 1_000_000
    /// Each client's bytes, split into lines as it would read them.
    var received: [Int: [String]] = [:]
    /// How many writes each client got (a batch's replies leave in one).
    var writes: [Int: Int] = [:]
    var closed: [Int] = []
    var records: [DaemonActions.TraceEntry] = []
    /// The lines of recorded events, as the trace sink got them.
    var recordedLines: [String] = []
    /// The layout line each recorded event handed the sink (nil: none).
    var recordedLayouts: [String?] = []
    var traceFlushes = 0
    var reopenRequests: [(reason: String, client: Int?, id: JSONValue?)] = []
    var logs: [String] = []
    /// The figures each `metrics` action handed the metrics file.
    var metrics: [JSONValue] = []
    /// Every action performed, as text (`DaemonActions.text`: a write's bytes included).
    private(set) var performed: [String] = []
    /// The run as `DaemonRecording` writes it.
    private let recording = RecordingBuffer()
    private let policy: AccessPolicy

    /// What the driver samples when the core asks for its gauges, as the shell would.
    static let gauges = SampledGauges(residentKiB: 1234, logDroppedLines: 0,
                                      trace: TraceFigures(file: "t.jsonl", failure: nil, fsync: "never", records: 0, bytes: 0, lost: 0,
                                                          gaps: 0, files: 1, removed: nil))

    /// Where the driver's recording goes.
    final class RecordingBuffer {
        var bytes: [UInt8] = []
        func append(_ line: [UInt8]) { bytes += line; bytes.append(0x0A) }
    }

    init(budgetUs: UInt64 = 1000, policy: AccessPolicy = .open, tracing: Bool = false, acksWaitForDisk: Bool = false) {
        self.policy = policy
        core = DaemonCore(engine: Engine(profile: Engine.builtinProfile, app: Engine.builtinApp(named: "tabs")!),
                          config: .init(daemonName: "creased test", budgetUs: budgetUs, socketActivated: false,
                                        policy: policy, lineLimit: LineFramer.defaultLimit),
                          startNs: 0)
        recording.append(DaemonRecording.header(core: core, logLevel: actions.logThreshold))
        if tracing || acksWaitForDisk { input(.traceMode(.recording(layouts: false, repliesWaitForDisk: acksWaitForDisk))) }
    }

    /// The run so far fed to a fresh core: where its actions differ, if they do.
    func replay() throws -> DaemonRecording.Outcome {
        try DaemonRecording.replay(recording.bytes, policy: policy)
    }

    /// Client 1 publishes; client 2 is subscribed to `topics` and has read what subscribing sent it.
    static func publisherAndSubscriber(_ topics: [String]) -> CoreDriver {
        var d = CoreDriver()
        d.connect(1)
        d.connect(2)
        d.read([#"{"cmd":"subscribe","topics":[\#(topics.map { "\"\($0)\"" }.joined(separator: ","))]}"#], from: 2)
        #expect(d.take(2).first?["topics"] != nil)
        return d
    }

    /// One input at the current time, its actions performed.
    mutating func input(_ input: DaemonInput) {
        recording.append(DaemonRecording.input(input, at: now))
        core.handle(input, at: now, into: &actions)
        perform()
    }

    /// One line of `client`'s, read at `readNs`, then the line handled.
    mutating func line(_ text: String, from client: Int, readAt readNs: UInt64) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { input(.line($0, client: client, readNs: readNs)) }
    }

    /// The client's access: what the core told the shell to do with it.
    @discardableResult
    mutating func connect(_ client: Int, peer: PeerCredentials? = nil) -> AccessLevel {
        input(.connected(client: client, peer: peer))
        return core.clients[client]?.access ?? .none
    }

    /// One read holding `lines`, read at the current time.
    mutating func read(_ lines: [String], from client: Int) {
        let readNs = now
        for text in lines {
            line(text, from: client, readAt: readNs)
            input(.lineHandled)
        }
    }

    /// As the daemon's loop ends an iteration: publish, perform, then free what was evicted.
    mutating func endOfIteration() {
        input(.endOfIteration)
        input(.repliesSent)
    }

    mutating func durable(upTo seq: Int, awaitedRecords: Int = .max) {
        input(.durable(seq: seq, awaitedRecords: awaitedRecords))
    }

    mutating func perform() {
        guard !actions.isEmpty else { return }
        var i = 0
        // Performing may add actions (the gauges' answer): read the list afresh each time, as the shell does.
        while i < actions.list.count {
            defer { i += 1 }
            performed.append(actions.text(at: i))
            switch actions.list[i] {
            case .write(let client, let range):
                let text = String(decoding: actions.bytes[range], as: UTF8.self)
                #expect(text.hasSuffix("\n"), "a write ends with a whole line")
                received[client, default: []].append(contentsOf: text.split(separator: "\n").map(String.init))
                writes[client, default: 0] += 1
            case .closeAfterWrites(let client): closed.append(client)
            case .startReading, .refuse, .stopAccepting, .closeTrace, .closeConnections: break
            case .record(let entry):
                records.append(entry)
                if case .event(let e) = entry {
                    recordedLines.append(String(decoding: actions.bytes[e.line], as: UTF8.self))
                    recordedLayouts.append(e.layout.map { String(decoding: actions.bytes[$0], as: UTF8.self) })
                }
            case .flushTrace: traceFlushes += 1
            case .reopenTrace(let reason, let client, let id): reopenRequests.append((reason, client, id))
            case .log(_, let message): logs.append(message)
            case .sampleGauges:
                recording.append(DaemonRecording.input(.gauges(CoreDriver.gauges), at: now))
                core.handle(.gauges(CoreDriver.gauges), at: now, into: &actions)
            case .metrics(let range): metrics.append(try! JSON.parse(Array(actions.bytes[range])))
            }
        }
        recording.append(DaemonRecording.actions(actions))
        actions.removeAll()
    }

    /// The client's lines so far, parsed, and forgets them.
    mutating func take(_ client: Int) -> [JSONValue] {
        defer { received[client] = nil; writes[client] = nil }
        return (received[client] ?? []).map { try! JSON.parse(Array($0.utf8)) }
    }
}

private func hinge(_ angle: Int, id: Int? = nil) -> String {
    #"{"event":"hinge","angle":\#(angle)\#(id.map { #","id":\#($0)"# } ?? "")}"#
}

private func orientation(_ value: String, id: Int) -> String {
    #"{"event":"orientation","value":"\#(value)","id":\#(id)}"#
}

@Suite struct DaemonCoreTests {
    /// The action list's bytes outlive `removeAll` until they pass `bytesKept` (emptying them
    /// per call cost a round trip ~80 instructions): every write still names its own bytes,
    /// never joins a write of an earlier call, and the buffer is emptied once past the threshold.
    @Test func actionBytesStayUntilTheirThresholdAndEveryWriteNamesItsOwn() {
        var actions = DaemonActions(logThreshold: .error)
        var emptied = 0
        for i in 0..<6000 {
            let start = actions.bytes.count
            actions.bytes.append(contentsOf: Array("reply \(i)\n".utf8))
            actions.write(client: 1, from: start)
            #expect(actions.list.count == 1)
            guard case .write(1, let range)? = actions.list.last else { Issue.record("no write"); return }
            #expect(String(decoding: actions.bytes[range], as: UTF8.self) == "reply \(i)\n")
            actions.removeAll()
            #expect(actions.isEmpty)
            #expect(actions.bytes.count <= DaemonActions.bytesKept)
            if actions.bytes.isEmpty { emptied += 1 }
        }
        #expect(emptied >= 1)
        #expect(emptied < 10, "the bytes are emptied past the threshold, not per call")
    }

    @Test func eventsOfOneIterationPublishOnceThenEveryReplyLeavesInOneWrite() {
        var d = CoreDriver()
        d.connect(1)
        d.connect(2)
        d.read([#"{"cmd":"subscribe","topics":["layout"],"id":"s"}"#], from: 2)
        #expect(d.take(2).count == 2, "the topics reply and the current layout")

        d.read([orientation("landscapeLeft", id: 1), hinge(90, id: 2), orientation("portrait", id: 3)], from: 1)
        #expect(d.received[1] == nil && d.received[2] == nil, "nothing is published or answered inside the iteration")
        d.now += 50_000
        d.endOfIteration()

        var expected = Engine(profile: Engine.builtinProfile, app: Engine.builtinApp(named: "tabs")!)
        _ = try? expected.apply(.orientation(.landscapeLeft))
        _ = try? expected.apply(.hinge(angle: 90))
        _ = try? expected.apply(.orientation(.portrait))
        let pushes = d.take(2)
        #expect(pushes.count == 1)
        #expect(pushes.first?["digest"] == .string(Digest.hex(expected.digest)))
        #expect(pushes.first?["seq"] == .number(3))
        #expect(d.writes[1] == 1)
        let acks = d.take(1)
        #expect(acks.map { $0["id"] } == [.number(1), .number(2), .number(3)])
        #expect(acks.allSatisfy { $0["latencyUs"] == .number(50) })
        #expect(d.core.stats.publishes == 1 && d.core.stats.batches == 1 && d.core.stats.batchedEvents == 3)
        #expect(d.core.stats.latency.count == 3)
    }

    @Test func layoutsEvictedInAnIterationAreFreedAfterItsReplies() {
        var d = CoreDriver()
        d.connect(1)
        // Twelve new keyboard heights: each relayout stores a layout, and past eight each evicts one.
        d.read((0..<12).map { #"{"event":"keyboard","visible":true,"height":\#(250 + $0),"id":\#($0)}"# }, from: 1)
        #expect(d.core.engine.retiredCount > 0, "nothing is freed inside the iteration")
        #expect(d.received[1] == nil)
        d.endOfIteration()
        #expect(d.take(1).count == 12)
        #expect(d.core.engine.retiredCount == 0)
    }

    @Test func aBatchIsCutOnceItsOldestEventWaitedAQuarterOfTheBudget() {
        var d = CoreDriver(budgetUs: 1000)
        d.connect(1)
        d.read([hinge(90, id: 1)], from: 1)
        #expect(d.received[1] == nil)
        d.now += 250_000
        d.read([hinge(100, id: 2)], from: 1)
        #expect(d.take(1).map { $0["id"] } == [.number(1), .number(2)], "answered before the iteration ends")
        d.endOfIteration()
        #expect(d.received[1] == nil)
    }

    /// The cut is decided with the time after the line was handled, so the event whose
    /// apply took the batch over the budget counts that apply in its latency.
    @Test func aBudgetCutCountsTheApplyOfTheLineThatCausedIt() {
        var d = CoreDriver(budgetUs: 1000)
        d.connect(1)
        d.now = 0
        d.line(hinge(90, id: 1), from: 1, readAt: 0)
        d.now = 400_000   // the apply took 400 µs
        d.input(.lineHandled)
        d.perform()
        let reply = d.take(1)
        #expect(reply.map { $0["id"] } == [.number(1)], "cut: 400 µs is past a quarter of the 1 ms budget")
        #expect(reply.first?["latencyUs"] == .number(400))
        #expect(d.core.stats.latency.count == 1)
    }

    @Test func underFsyncAlwaysRepliesWaitForTheirRecordsToReachTheDisk() {
        var d = CoreDriver(tracing: true)
        d.input(.traceMode(.recording(layouts: false, repliesWaitForDisk: true)))
        d.connect(1)
        d.read([hinge(90, id: 1), hinge(100, id: 2), hinge(110, id: 3)], from: 1)
        d.endOfIteration()
        #expect(d.received[1] == nil)
        #expect(d.traceFlushes == 1)
        let seqs = d.records.compactMap { if case .event(let e) = $0, e.client == 1 { e.seq } else { nil } }
        #expect(seqs == [1, 2, 3])
        d.durable(upTo: 2)
        #expect(d.take(1).map { $0["seq"] } == [.number(1), .number(2)])
        d.durable(upTo: 2)
        #expect(d.received[1] == nil)
        d.durable(upTo: 3)
        #expect(d.take(1).map { $0["seq"] } == [.number(3)])
        #expect(!d.core.holdsAcks)
    }

    /// Found by `crease hunt` (seed 2, shrunk to: a publisher, a burst, an unknown event): under
    /// --fsync always the error reply to a bad line was written at once, ahead of the replies
    /// to the events before it, which waited for the disk.
    @Test("under --fsync always an error reply waits behind the replies held before it")
    func anErrorReplyKeepsItsPlaceBehindHeldAcks() {
        var d = CoreDriver(tracing: true, acksWaitForDisk: true)
        d.connect(1)
        d.read([hinge(90, id: 1), #"{"event":"nope","id":2}"#, #"{"event":"hinge","angle":"wide","id":3}"#], from: 1)
        d.endOfIteration()
        #expect(d.received[1] == nil, "the error replies wait behind the held ack")
        d.durable(upTo: 1)
        let replies = d.take(1)
        #expect(replies.map { $0["id"] } == [.number(1), .number(2), .number(3)])
        #expect(replies.dropFirst().allSatisfy { $0["ok"] == .bool(false) })
    }

    /// Found by `crease hunt`: a client that sent events and then half-closed (as `nc -N` does)
    /// was closed at once under --fsync always, and its held replies were lost.
    @Test("a client that hangs up with replies held is closed once they are sent, not before")
    func aHalfClosedClientGetsItsHeldRepliesBeforeItIsClosed() {
        var d = CoreDriver(tracing: true, acksWaitForDisk: true)
        d.connect(1)
        d.read([hinge(90, id: 1), hinge(100, id: 2)], from: 1)
        d.input(.endOfInput(client: 1, unterminatedBytes: 4))
        #expect(d.closed.isEmpty && d.received[1] == nil, "nothing is closed while replies are held")
        d.durable(upTo: 1)
        #expect(d.closed.isEmpty, "one reply is still held")
        d.durable(upTo: 2)
        let replies = d.take(1)
        #expect(replies.map { $0["id"] } == [.number(1), .number(2), nil])
        #expect(replies.last?["error"]?["code"] == .string("unterminatedLine"))
        #expect(d.closed == [1], "closed once everything owed was written")
    }

    @Test func aTracedEventRecordsItsLineAsReceived() {
        var d = CoreDriver(tracing: true)
        d.connect(1)
        let line = #"{"event":"hinge","angle":95.5,"ts":7,"id":"x"}"#
        d.read([line], from: 1)
        d.now += 1
        d.read([hinge(120), hinge(130)], from: 1)
        #expect(d.recordedLines == [line, hinge(120), hinge(130)])
        d.endOfIteration()
        #expect(d.records.contains(.batch(firstSeq: 1, lastSeq: 3)))
    }

    @Test func aClientClosingMidBatchGetsNothingAndOthersAreServed() {
        var d = CoreDriver.publisherAndSubscriber(["layout"])
        d.read([orientation("landscapeLeft", id: 1)], from: 1)
        d.input(.closed(client: 1))
        d.endOfIteration()
        #expect(d.received[1] == nil)
        #expect(d.take(2).count == 1)
        #expect(d.core.stats.events == 1)
        #expect(d.core.clients[1] == nil)
    }

    @Test func theEndOfInputAnswersWhatCameBeforeThenCloses() {
        var d = CoreDriver()
        d.connect(1)
        d.read([hinge(90, id: 1)], from: 1)
        d.input(.endOfInput(client: 1, unterminatedBytes: 0))
        d.perform()
        #expect(d.take(1).map { $0["id"] } == [.number(1)])
        #expect(d.closed == [1])
    }

    @Test func aDroppedSubscriberIsCountedAndGetsNoMorePushes() {
        var d = CoreDriver.publisherAndSubscriber(["layout", "diagnostics"])
        d.input(.dropped(client: 2, reason: "queue over 1048576 bytes"))
        d.read([orientation("landscapeLeft", id: 1)], from: 1)
        d.endOfIteration()
        #expect(d.received[2] == nil)
        #expect(d.core.stats.dropped == 1 && d.core.stats.lastDropReason == "queue over 1048576 bytes")
        #expect(d.core.subscribers.count == 0)
    }

    @Test func aLineTooLongIsAnsweredThenTheClientCloses() {
        var d = CoreDriver()
        d.connect(1)
        d.input(.lineTooLong(client: 1, length: 2_000_000))
        d.perform()
        #expect(d.take(1).first?["error"]?["code"] == .string("lineTooLong"))
        #expect(d.closed == [1])
        #expect(d.core.stats.oversizedLines == 1)
    }

    @Test func everyCommand() {
        var d = CoreDriver()
        d.connect(1, peer: PeerCredentials(pid: 10, uid: 20, gid: 30))
        d.read([#"{"cmd":"hello","id":1}"#], from: 1)
        let hello = d.take(1).first
        #expect(hello?["ok"] == .bool(true) && hello?["client"] == .number(1) && hello?["daemon"] == .string("creased test"))
        #expect(hello?["peer"]?["uid"] == .number(20) && hello?["access"] == .string("publish"))

        d.read([#"{"cmd":"layout","id":2}"#, #"{"cmd":"state","id":3}"#], from: 1)
        let replies = d.take(1)
        #expect(replies.map { $0["id"] } == [.number(2), .number(3)])
        #expect(replies.first?["layout"]?["digest"] == .string(Digest.hex(d.core.engine.digest)))
        #expect(replies.last?["state"] != nil)

        d.read([#"{"cmd":"subscribe","topics":["stats","layout"],"id":4}"#], from: 1)
        let sub = d.take(1)
        #expect(sub.first?["topics"] == .array([.string("layout"), .string("stats")]))
        #expect(sub.last?["push"] == .string("layout"))
        d.read([#"{"cmd":"unsubscribe","topics":["layout"],"id":5}"#], from: 1)
        #expect(d.take(1).first?["topics"] == .array([.string("stats")]))
        d.read([#"{"cmd":"unsubscribe","id":6}"#], from: 1)
        #expect(d.take(1).first?["topics"] == .array([]))
        #expect(d.core.subscribers.count == 0)

        d.read([hinge(90)], from: 1)
        d.now = 3_500_000_000
        d.read([#"{"cmd":"stats","id":7}"#], from: 1)
        let stats = d.take(1).first?["stats"]
        #expect(stats?["events"] == .number(1) && stats?["commands"] == .number(7) && stats?["rssKiB"] == .number(1234))
        #expect(stats?["uptimeS"] == .number(3.5) && stats?["clients"] == .number(1) && stats?["trace"] == nil)

        d.read([#"{"cmd":"mark","label":"here","id":8}"#, #"{"cmd":"sync","id":9}"#], from: 1)
        let markAndSync = d.take(1)
        #expect(markAndSync.first?["traced"] == .bool(false) && markAndSync.first?["seq"] == .number(1))
        #expect(markAndSync.last?["digest"] == .string(Digest.hex(d.core.engine.digest)))
        #expect(d.records.isEmpty)

        d.read([#"{"cmd":"trace","action":"rotate","id":10}"#], from: 1)
        #expect(d.take(1).first?["error"]?["code"] == .string("traceDisabled"))
        d.read([#"{"cmd":"nope","id":11}"#], from: 1)
        #expect(d.take(1).first?["error"]?["field"] == .string("cmd"))
        #expect(d.core.stats.rejected == 1)
    }

    /// The core reads no gauge itself (issue 41): a `stats` reply, a stats push and the metrics
    /// file's figures each ask for them (`sampleGauges`) and go out when the shell's sample comes
    /// back as the `gauges` input. The core's own figures are those of when they were asked for.
    @Test("stats, a stats push and the metrics figures wait for the gauges the shell samples, an input like any other")
    func figuresWaitForTheSampledGauges() throws {
        var d = CoreDriver(tracing: true)
        d.connect(1)
        d.read([hinge(90, id: 1), #"{"cmd":"stats","id":"s"}"#], from: 1)
        let asked = try #require(d.performed.firstIndex(of: "sampleGauges"))
        #expect(d.performed[(asked + 1)...].contains { $0.hasPrefix("write 1: {\"id\":\"s\"") },
                "the reply is written once the gauges are in")
        #expect(!d.performed[..<asked].contains { $0.contains(#""id":"s""#) }, "and not before")
        let reply = try #require(d.take(1).last)
        #expect(reply["stats"]?["rssKiB"] == .number(1234) && reply["stats"]?["trace"]?["file"] == .string("t.jsonl"))
        #expect(reply["stats"]?["events"] == .number(1))

        d.now += 2_000_000_000
        d.input(.metricsTick)
        let figures = try #require(d.metrics.last)
        #expect(figures["events"] == .number(1) && figures["commands"] == .number(1) && figures["rssKiB"] == .number(1234))
        #expect(figures["uptimeS"] == .number(Double(d.now / 1_000_000) / 1000))
        // Every input the figures took, the gauges too, is in the recording: a fresh core decides the same.
        #expect(try d.replay().difference == nil)
    }

    @Test func traceCommandsWithATrace() {
        var d = CoreDriver(tracing: true)
        d.connect(1)
        d.read([#"{"cmd":"mark","label":"here"}"#, #"{"cmd":"trace","action":"rotate","id":"r"}"#], from: 1)
        #expect(d.records == [.mark(seq: 0, tNs: d.now, label: "here")])
        #expect(d.take(1).first?["traced"] == .bool(true))
        #expect(d.reopenRequests.count == 1 && d.reopenRequests.first?.id == .string("r"))
        d.input(.traceReopened(path: "/t/new.jsonl", client: 1, id: .string("r")))
        d.input(.traceReopened(path: nil, client: 1, id: .string("r")))
        d.perform()
        let replies = d.take(1)
        #expect(replies.first?["trace"] == .string("/t/new.jsonl"))
        #expect(replies.last?["error"]?["code"] == .string("traceFailed"))
        d.read([#"{"cmd":"stats"}"#], from: 1)
        #expect(d.take(1).first?["stats"]?["trace"]?["file"] == .string("t.jsonl"))
    }

    @Test func accessIsDecidedAtConnectAndCheckedOnEveryLine() {
        var d = CoreDriver(policy: AccessPolicy(publish: [.uid(1)], read: [.uid(2)]))
        #expect(d.connect(1, peer: PeerCredentials(pid: 1, uid: 2, gid: 2)) == .read)
        d.read([hinge(90, id: 1), #"{"cmd":"mark","label":"x","id":2}"#, #"{"cmd":"sync","id":3}"#], from: 1)
        let replies = d.take(1)
        #expect(replies.map { $0["error"]?["code"] } == [.string("forbidden"), .string("forbidden"), nil])
        #expect(d.core.stats.forbidden == 2 && d.core.engine.seq == 0)

        #expect(d.connect(2, peer: PeerCredentials(pid: 1, uid: 3, gid: 3)) == .none)
        #expect(d.take(2).first?["error"]?["code"] == .string("forbidden"))
        #expect(d.core.clients[2] == nil && d.core.stats.forbidden == 3)
        #expect(d.connect(3, peer: nil) == .none, "without credentials only the open policy admits")
    }

    /// Issue 37: a 64 MB line from a read-only client under a raised --max-line-bytes was
    /// parsed before its access was checked, stalling the loop for a second. A big line from
    /// a reader is refused unparsed: padded, a `hello` that would otherwise be answered is not.
    @Test func aReaderBigLineIsRefusedBeforeItIsParsed() {
        var d = CoreDriver(policy: AccessPolicy(publish: [.uid(1)], read: [.uid(2)]))
        #expect(d.connect(1, peer: PeerCredentials(pid: 1, uid: 2, gid: 2)) == .read)
        #expect(d.connect(2, peer: PeerCredentials(pid: 1, uid: 1, gid: 1)) == .publish)
        let padded = #"{"cmd":"hello","id":1"# + String(repeating: " ", count: DaemonCore.readerLineLimit) + "}"
        d.read([padded, #"{"cmd":"hello","id":2}"#], from: 1)
        let replies = d.take(1)
        #expect(replies.map { $0["error"]?["code"] } == [.string("forbidden"), nil], "\(replies)")
        #expect(replies.first?["error"]?["field"] == .string("line"))
        // A publisher's big line is parsed as before.
        d.read([padded], from: 2)
        #expect(d.take(2).first?["ok"] == .bool(true))
    }

    /// Issue 37: a flood of refused peers wrote a log line each (518k lines, 68 MB in 10 s).
    /// At most ten a second; the next line written counts the ones left out.
    @Test func refusalsReachTheLogAtMostTenASecond() {
        var d = CoreDriver(policy: AccessPolicy(publish: [.uid(1)], read: []))
        for client in 1...50 { #expect(d.connect(client, peer: PeerCredentials(pid: 1, uid: 65534, gid: 65534)) == .none) }
        #expect(d.logs.filter { $0.contains("refused") }.count == RefusalLog.perSecond)
        #expect(d.core.stats.forbidden == 50, "every refusal is still counted and answered")
        d.now += 1_000_000_000
        #expect(d.connect(51, peer: PeerCredentials(pid: 1, uid: 65534, gid: 65534)) == .none)
        #expect(d.logs.last?.contains("40 refusals before it not logged") == true, "\(d.logs.last ?? "")")
        // An allowed peer is logged as ever.
        #expect(d.connect(52, peer: PeerCredentials(pid: 1, uid: 1, gid: 1)) == .publish)
        #expect(d.logs.last?.contains("may publish") == true)
    }

    @Test func diagnosticsArePushedOnlyWhenTheyChange() throws {
        var d = CoreDriver()
        d.connect(1)
        d.connect(2)
        d.read([#"{"cmd":"subscribe","topics":["diagnostics"]}"#], from: 2)
        #expect(d.take(2).last?["push"] == .string("diagnostics"))
        let lines = [orientation("landscapeLeft", id: 1), #"{"event":"keyboard","visible":true}"#, hinge(10), hinge(180),
                     orientation("portrait", id: 2), #"{"event":"keyboard","visible":false}"#, hinge(90)]
        // What a subscriber should see: the diagnostics after each publish that differ from the last seen.
        var engine = Engine(profile: Engine.builtinProfile, app: Engine.builtinApp(named: "tabs")!)
        var seen = engine.layout.diagnostics
        var expected = 0
        for line in lines {
            d.read([line], from: 1)
            d.endOfIteration()
            guard case .event(let envelope) = try Wire.decode(line: Array(line.utf8)) else { continue }
            let before = engine.digest
            _ = try engine.apply(envelope.event)
            if engine.digest != before, engine.layout.diagnostics != seen {
                seen = engine.layout.diagnostics
                expected += 1
            }
        }
        let pushes = d.take(2)
        #expect(expected > 0, "the sequence changes the diagnostics at least once")
        #expect(pushes.count == expected)
        #expect(pushes.last?["diagnostics"] == DaemonCoreTests.diagnostics(engine))
    }

    @Test func statsArePushedOnTheTimerOnlyAfterNewEvents() {
        var d = CoreDriver()
        d.connect(1)
        d.read([#"{"cmd":"subscribe","topics":["stats"]}"#], from: 1)
        _ = d.take(1)
        d.input(.statsTick)
        #expect(d.take(1).first?["push"] == .string("stats"), "the first tick reports")
        d.input(.statsTick)
        #expect(d.received[1] == nil, "no new events, no push")
        d.read([hinge(90)], from: 1)
        d.endOfIteration()
        d.input(.statsTick)
        #expect(d.take(1).filter { $0["push"] == .string("stats") }.count == 1)
    }

    @Test func shutdownPublishesTheOpenBatchAndTellsEverySubscriber() {
        var d = CoreDriver.publisherAndSubscriber(["stats"])
        d.read([hinge(90, id: 1)], from: 1)
        d.input(.shutdown(reason: "SIGTERM"))
        d.perform()
        #expect(d.take(1).map { $0["id"] } == [.number(1)])
        #expect(d.take(2).map { $0["push"] } == [.string("shutdown")])
    }

    static func diagnostics(_ engine: Engine) -> JSONValue? {
        try? JSON.parse(engine.diagnosticsJSON())
    }
}

/// Observations, decided by the core with a clock the test moves.
@Suite struct DaemonCoreObserveTests {
    static func observe(_ engine: Engine, id: Int, edit: (inout Observation) -> Void = { _ in }) -> String {
        var o = Observation(describing: engine.layout)
        edit(&o)
        return String(decoding: ObserveRequest(observed: o, id: .number(Double(id))).jsonBytes(), as: UTF8.self)
    }

    @Test func everyLayoutOfABatchCountsAndTheWindowRunsOnTheReadTimes() {
        var d = CoreDriver.publisherAndSubscriber(["conformance"])
        d.input(.traceMode(.recording(layouts: false, repliesWaitForDisk: false)))
        var mirror = Engine(profile: Engine.builtinProfile, app: Engine.builtinApp(named: "tabs")!)
        // Three events read together, published as one layout: the device may still show the middle one.
        d.read([hinge(180, id: 1), orientation("landscapeLeft", id: 2), orientation("portrait", id: 3)], from: 1)
        d.endOfIteration()
        _ = d.take(1)
        _ = try? mirror.apply(.hinge(angle: 180))
        _ = try? mirror.apply(.orientation(.landscapeLeft))
        let middle = mirror
        _ = try? mirror.apply(.orientation(.portrait))

        d.now += 100_000_000
        d.read([Self.observe(middle, id: 10), Self.observe(mirror, id: 11)], from: 1)
        let replies = d.take(1)
        #expect(replies.map { $0["verdict"] } == [.string("stale"), .string("match")])
        #expect(replies[0]["matchedSeq"] == .number(2) && replies[0]["layoutSeq"] == .number(3))
        // Only the stale one is pushed; both are recorded, with the time the line was read.
        let pushes = d.take(2)
        #expect(pushes.count == 1 && pushes[0]["push"] == .string("conformance") && pushes[0]["client"] == .number(1))
        let observed = d.records.compactMap { entry -> (UInt64, ConformanceResult, ObservedReference?)? in
            if case .observation(let t, _, _, let r, _, let reference) = entry { return (t, r, reference) }
            return nil
        }
        #expect(observed.map(\.1.verdict) == [.stale, .match] && observed.allSatisfy { $0.0 == d.now })
        // Each look is exactly the complete view of the layout it agrees with: kept as a reference to it.
        #expect(observed.map { $0.2?.layout } == [middle.digest, mirror.digest] && observed.allSatisfy { $0.2?.view == .complete })

        // Past the window the middle layout is gone: a mismatch.
        d.now += 500_000_000
        d.read([Self.observe(middle, id: 12)], from: 1)
        #expect(d.take(1).first?["verdict"] == .string("mismatch"))
        #expect(d.core.stats.observations == [1, 1, 1])
        // Each non-match also reached the glitch checker, as a glitch of its verdict's kind.
        #expect(d.core.stats.glitches[GlitchKind.mismatch.index] == 1 && d.core.stats.glitches[GlitchKind.stale.index] == 1)
    }

    /// Under --fsync always a mark answered `"traced": true` and an acknowledged load are on
    /// disk, as an event is: both replies once went out before their records were written,
    /// and a kill -9 lost 3 loads and 5 marks of 15.
    @Test func underFsyncAlwaysMarkAndLoadRepliesWaitForTheirRecords() {
        var d = CoreDriver(tracing: true)
        d.input(.traceMode(.recording(layouts: false, repliesWaitForDisk: true)))
        d.connect(1)
        d.read([#"{"cmd":"mark","id":1,"label":"phase 1"}"#], from: 1)
        d.endOfIteration()
        #expect(d.records.contains { if case .mark = $0 { true } else { false } })
        #expect(d.received[1] == nil, "the mark's record is not on disk yet")
        d.durable(upTo: 0, awaitedRecords: 0)
        #expect(d.received[1] == nil)
        d.durable(upTo: 0, awaitedRecords: 1)
        let mark = d.take(1)
        #expect(mark.map { $0["id"] } == [.number(1)] && mark.first?["traced"] == .bool(true))

        d.read([#"{"cmd":"load","id":2}"#], from: 1)
        d.endOfIteration()
        #expect(d.records.contains { if case .load = $0 { true } else { false } })
        #expect(d.received[1] == nil, "the load's record is not on disk yet")
        d.durable(upTo: 0, awaitedRecords: 1)
        #expect(d.received[1] == nil)
        d.durable(upTo: 1, awaitedRecords: 1)
        let load = d.take(1)
        #expect(load.map { $0["id"] } == [.number(2)] && load.first?["seq"] == .number(1))
        #expect(!d.core.holdsAcks)
    }

    /// Under --fsync always an observation's reply waits for its record, as an event's does:
    /// the event's seq on disk is not enough, the observation's own record must be.
    @Test func underFsyncAlwaysAnObserveReplyWaitsForItsRecord() {
        var d = CoreDriver(tracing: true)
        d.input(.traceMode(.recording(layouts: false, repliesWaitForDisk: true)))
        d.connect(1)
        d.connect(2)
        var mirror = Engine(profile: Engine.builtinProfile, app: Engine.builtinApp(named: "tabs")!)
        _ = try? mirror.apply(.hinge(angle: 90))
        d.read([hinge(90, id: 1)], from: 1)
        d.endOfIteration()
        #expect(d.received[1] == nil, "the event's record is not on disk yet")
        d.now += 3_000_000
        d.durable(upTo: 1, awaitedRecords: 0)
        let event = d.take(1)
        #expect(event.map { $0["id"] } == [.number(1)])
        #expect(event.first?["latencyUs"] == .number(3000), "the event's reply counts the wait on the moved clock")

        // Seq 1 is on disk already; the observation's own record is not.
        d.now += 1_000_000
        d.read([Self.observe(mirror, id: 2), #"{"cmd":"sync","id":3}"#], from: 1)
        d.read([#"{"cmd":"hello","id":9}"#], from: 2)
        d.endOfIteration()
        #expect(d.records.contains { if case .observation = $0 { true } else { false } })
        #expect(d.traceFlushes == 2, "the batch and the observation are flush points")
        #expect(d.received[1] == nil, "the observation's record is not on disk yet")
        #expect(d.take(2).map { $0["id"] } == [.number(9)], "a client with nothing waiting is answered at once")
        d.durable(upTo: 1, awaitedRecords: 0)
        #expect(d.received[1] == nil)
        d.now += 1_000_000
        d.durable(upTo: 1, awaitedRecords: 1)
        let reply = d.take(1)
        // The sync behind it keeps its place: a client's replies stay in order.
        #expect(reply.map { $0["id"] } == [.number(2), .number(3)] && reply.first?["verdict"] == .string("match"))
        #expect(!d.core.holdsAcks)
        // Without --fsync always the reply goes at once.
        d.input(.traceMode(.recording(layouts: false, repliesWaitForDisk: false)))
        d.read([Self.observe(mirror, id: 4)], from: 1)
        #expect(d.take(1).map { $0["id"] } == [.number(4)])
    }
}

/// The live glitch checks, with a clock the test moves: what is published is checked,
/// what a batch hides is not.
@Suite struct DaemonCoreGlitchTests {
    private func glitches(_ d: inout CoreDriver) -> [Glitch] {
        d.take(2).filter { $0["push"] == .string("glitches") }.compactMap { $0["glitch"] }.compactMap { try? Glitch.decode($0) }
    }

    @Test func aKeyboardUpForTwentyMillisecondsIsPushedAsAFlashOnceItGoes() {
        var d = CoreDriver.publisherAndSubscriber(["glitches"])
        d.read([#"{"event":"keyboard","visible":true}"#], from: 1)
        d.endOfIteration()
        #expect(glitches(&d).map(\.kind) == [.occluded], "the built-in app's map scale bar under the keyboard; no flash yet")
        d.now += 20_000_000
        d.read([#"{"event":"keyboard","visible":false}"#], from: 1)
        d.endOfIteration()
        let flash = glitches(&d).filter { $0.kind == .flash && $0.subject == "keyboard" }
        #expect(flash.map { [$0.firstSeq, $0.lastSeq] } == [[1, 2]])
        #expect(flash.map { [$0.firstT, $0.lastT] } == [[1_000_000, 21_000_000]], "ns since the daemon started")
        #expect(d.core.stats.glitches[GlitchKind.flash.index] >= 1)
    }

    @Test func upAndDownInOneBatchIsNeverShownSoNeverAFlash() {
        var d = CoreDriver.publisherAndSubscriber(["glitches"])
        d.read([#"{"event":"keyboard","visible":true}"#, #"{"event":"keyboard","visible":false}"#, hinge(1)], from: 1)
        d.endOfIteration()
        #expect(glitches(&d).isEmpty)
        #expect(d.core.stats.glitches.reduce(0, +) == 1, "only the built-in app's map scale bar, at start: \(d.core.stats.glitches)")
    }

    @Test func aHingeChatteringAcrossAThresholdFlapsOnce() {
        var d = CoreDriver.publisherAndSubscriber(["glitches"])
        for i in 0..<12 {
            d.read([hinge(i % 2 == 0 ? 175 : 140)], from: 1)
            d.endOfIteration()
            d.now += 10_000_000
        }
        let flaps = glitches(&d).filter { $0.kind == .flapping }
        #expect(flaps.count == 1)
        #expect(flaps.map { [$0.firstSeq, $0.lastSeq] } == [[3, 7]], "returns from seq 3; the fifth at seq 7")
        #expect(d.core.stats.glitches[GlitchKind.flapping.index] == 1)
    }
}

/// What a rig needs from the core: traceable errors, unterminated lines, stats periods,
/// loads, labels, and each traced event's latency.
@Suite struct DaemonCoreRigTests {
    @Test func errorsCarryTheConnectionsLineAndTheEventsTs() {
        var d = CoreDriver()
        d.connect(1)
        d.connect(2)
        d.read([hinge(10), "", "# note", #"{"event":"hinge","angle":500,"ts":42}"#, #"{"cmd":"nope"}"#], from: 1)
        let replies = d.take(1)
        #expect(replies.count == 2)
        #expect(replies[0]["line"] == .number(4) && replies[0]["ts"] == .number(42) && replies[0]["id"] == nil)
        #expect(replies[1]["line"] == .number(5) && replies[1]["ts"] == nil && replies[1]["error"]?["code"] == .string("unknownCommand"))
        // A state error keeps the event's ts; each connection counts its own lines.
        d.read([#"{"event":"dismiss","ts":7}"#], from: 2)
        let other = d.take(2)
        #expect(other.first?["line"] == .number(1) && other.first?["ts"] == .number(7) && other.first?["error"]?["code"] == .string("invalidState"))
    }

    @Test func anUnterminatedLastLineIsReportedCountedAndNotApplied() {
        var d = CoreDriver()
        d.connect(1)
        d.read([hinge(10, id: 1)], from: 1)
        d.input(.endOfInput(client: 1, unterminatedBytes: 17))
        d.perform()
        let replies = d.take(1)
        #expect(replies.count == 2 && replies[0]["id"] == .number(1))
        #expect(replies[1]["line"] == .number(2) && replies[1]["error"]?["code"] == .string("unterminatedLine"))
        #expect(d.core.stats.unterminatedLines == 1 && d.core.engine.seq == 1 && d.closed == [1])
        #expect(d.logs.contains { $0.contains("ended its stream inside line 2 (17 bytes") })
    }

    @Test func aStatsResetAnswersThePeriodThenStartsAnother() {
        var d = CoreDriver()
        d.connect(1)
        d.read([hinge(10), hinge(90), "{x"], from: 1)
        d.now += 2_000_000_000
        d.read([#"{"cmd":"stats","reset":true,"id":"r"}"#], from: 1)
        let reply = d.take(1).last
        #expect(reply?["reset"] == .bool(true) && reply?["stats"]?["events"] == .number(2) && reply?["stats"]?["rejected"] == .number(1))
        #expect(reply?["stats"]?["periodS"] == .number(2.001))
        d.now += 500_000_000
        d.read([#"{"cmd":"stats","id":"s"}"#], from: 1)
        let after = d.take(1).last?["stats"]
        #expect(after?["events"] == .number(0) && after?["rejected"] == .number(0) && after?["latency"]?["count"] == .number(0))
        #expect(after?["periodS"] == .number(0.5) && after?["clients"] == .number(1) && after?["commands"] == .number(1))
    }

    @Test func aLoadPublishesIsRecordedAndAnswersItsSeq() throws {
        var d = CoreDriver.publisherAndSubscriber(["layout"])
        d.input(.traceMode(.recording(layouts: false, repliesWaitForDisk: false)))
        var target = Engine(profile: Engine.builtinProfile, app: Engine.builtinApp(named: "split")!)
        try target.apply(.hinge(angle: 170))
        var w = JSONWriter()
        LoadRequest(app: target.app, state: try JSON.parse(target.state.jsonBytes(app: target.app)), digest: target.digest).write(to: &w, id: .string("l"))
        d.read([hinge(90, id: 1), String(decoding: w.bytes, as: UTF8.self), hinge(100, id: 2)], from: 1)
        d.endOfIteration()
        let replies = d.take(1)
        #expect(replies.map { $0["id"] } == [.number(1), .string("l"), .number(2)], "the load is a flush point, answered in order")
        #expect(replies[1]["seq"] == .number(2) && replies[1]["digest"]?.str == Digest.hex(target.digest) && replies[1]["changed"] == .bool(true))
        let pushes = d.take(2)
        #expect(pushes.map { $0["seq"] } == [.number(1), .number(2), .number(3)], "the subscriber sees the loaded layout with its seq")
        let loads = d.records.compactMap { r -> TraceLoad? in if case .load(_, let l) = r { l } else { nil } }
        #expect(loads.count == 1 && loads.first?.seq == 2 && loads.first?.digest == target.digest && loads.first?.client == 1)
        // A load that does not fit is an error reply with its line, and changes nothing.
        d.read([#"{"cmd":"load","id":"bad","state":{"hingeAngle":0}}"#], from: 1)
        let bad = d.take(1).first
        #expect(bad?["id"] == .string("bad") && bad?["line"] == .number(4) && bad?["error"]?["field"]?.str?.hasPrefix("state.") == true)
        #expect(d.core.engine.seq == 3)
    }

    @Test func eachEventsLatencyIsRecordedWhenItsLayoutIsQueuedBeforeTheBatchRecord() {
        var d = CoreDriver(tracing: true)
        d.connect(1)
        d.read([orientation("landscapeLeft", id: 1), hinge(90, id: 2)], from: 1)
        d.now += 70_000
        d.endOfIteration()
        let kinds = d.records.map { r -> String in
            switch r {
            case .event: "event"
            case .queued(let t): "queued \(t)"
            case .batch: "batch"
            default: "other"
            }
        }
        #expect(kinds == ["event", "event", "queued \(d.now)", "batch"], "\(kinds)")
    }

    @Test func withTraceLayoutsAnEventThatChangesTheLayoutHandsTheTraceItsLayoutLine() {
        var d = CoreDriver(tracing: true)
        d.connect(1)
        d.read([hinge(90)], from: 1)
        let afterHinge = String(decoding: d.core.engine.layoutJSON(), as: UTF8.self)
        d.read([hinge(91)], from: 1)   // the same pose: the layout stays
        #expect(d.recordedLayouts == [nil, nil], "without --trace-layouts no event carries a layout")
        d.input(.traceMode(.recording(layouts: true, repliesWaitForDisk: false)))
        d.read([orientation("landscapeLeft", id: 1)], from: 1)
        let afterTurn = String(decoding: d.core.engine.layoutJSON(), as: UTF8.self)
        d.read([hinge(92)], from: 1)
        #expect(afterTurn != afterHinge)
        #expect(d.recordedLayouts == [nil, nil, afterTurn, nil])
    }

    @Test func labelsAreInHelloAndStats() throws {
        var d = CoreDriver()
        d.core.config.labels = [try Label(parsing: "rig=r7"), try Label(parsing: "build=27A")]
        d.connect(1)
        d.read([#"{"cmd":"hello"}"#, #"{"cmd":"stats"}"#], from: 1)
        let replies = d.take(1)
        let labels = JSONValue.object([("rig", .string("r7")), ("build", .string("27A"))])
        #expect(replies[0]["labels"] == labels && replies[1]["stats"]?["labels"] == labels)
    }
}
