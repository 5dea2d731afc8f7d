#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Testing

/// The pure pieces of the shell, without sockets.

private func feed(_ framer: inout LineFramer, _ text: String, into lines: inout [String]) -> LineFramer.Outcome {
    Array(text.utf8).withUnsafeBytes { raw in
        framer.feed(raw) { line in lines.append(String(decoding: line, as: UTF8.self)); return true }
    }
}

@Suite struct LineFramerTests {
    /// A handler that stops (its client's turn is over) leaves the rest held, partial line
    /// included, and `resume` hands it out as if it had just arrived.
    @Test func whatAStopLeavesIsHeldAndResumed() {
        var f = LineFramer()
        var lines: [String] = []
        let chunk = Array("one\ntwo\nthree\nfo".utf8)
        let first = chunk.withUnsafeBytes { f.feed($0) { lines.append(String(decoding: $0, as: UTF8.self)); return false } }
        #expect(first == .stopped && lines == ["one"])
        #expect(f.held == Array("two\nthree\nfo".utf8) && f.partial.isEmpty)
        #expect(f.resume { lines.append(String(decoding: $0, as: UTF8.self)); return lines.count < 2 } == .stopped)
        #expect(lines == ["one", "two"] && f.held == Array("three\nfo".utf8))
        #expect(f.resume { lines.append(String(decoding: $0, as: UTF8.self)); return true } == .ok)
        #expect(lines == ["one", "two", "three"] && f.held.isEmpty && f.partial == Array("fo".utf8))
        _ = Array("ur\n".utf8).withUnsafeBytes { f.feed($0) { lines.append(String(decoding: $0, as: UTF8.self)); return true } }
        #expect(lines.last == "four")
        #expect(f.resume { _ in true } == .ok, "nothing held: nothing to do")
    }

    @Test func splitsLinesAcrossChunksAndStripsCR() {
        var f = LineFramer()
        var lines: [String] = []
        #expect(feed(&f, "a\nbc", into: &lines) == .ok)
        #expect(lines == ["a"])
        #expect(f.partial == Array("bc".utf8))
        #expect(feed(&f, "d\r\n\ne", into: &lines) == .ok)
        #expect(lines == ["a", "bcd", "", ])
        #expect(feed(&f, "f\n", into: &lines) == .ok)
        #expect(lines == ["a", "bcd", "", "ef"])
        #expect(f.partial.isEmpty)
    }

    @Test func scansEachByteOnceHoweverTheLineIsSplit() {
        var f = LineFramer()
        var lines: [String] = []
        let line = String(repeating: "x", count: 60_000)
        for ch in line { _ = feed(&f, String(ch), into: &lines) }
        _ = feed(&f, "\n", into: &lines)
        #expect(lines == [line])
        #expect(f.scannedBytes == 60_001)
    }

    @Test func lineAtTheLimitPassesOneByteMoreFails() {
        var f = LineFramer(limit: 8)
        var lines: [String] = []
        #expect(feed(&f, "12345678\n", into: &lines) == .ok)
        #expect(feed(&f, "123456789\n", into: &lines) == .lineTooLong(length: 9))
        var g = LineFramer(limit: 8)
        #expect(feed(&g, "1234", into: &lines) == .ok)
        #expect(feed(&g, "5678", into: &lines) == .ok)
        // No newline yet, but already too long: reported without waiting for one.
        #expect(feed(&g, "9", into: &lines) == .lineTooLong(length: 9))
        #expect(lines == ["12345678"])
    }

    @Test func stopsWhenTheHandlerSaysSo() {
        var f = LineFramer()
        var seen: [String] = []
        let outcome = Array("a\nb\nc\n".utf8).withUnsafeBytes { raw in
            f.feed(raw) { line in seen.append(String(decoding: line, as: UTF8.self)); return seen.count < 2 }
        }
        #expect(outcome == .stopped)
        #expect(seen == ["a", "b"])
    }
}

@Suite struct OutboundQueueTests {
    @Test func writesDirectlyWhileNothingIsQueued() {
        var q = OutboundQueue(limit: 100)
        #expect(q.plan(40) == .tryWrite)
        #expect(q.wrote(40, of: 40) == .done)
        #expect(q.queuedBytes == 0)
    }

    /// A reply or push larger than the bound (a 10,000-item layout is 1.5 MB) once dropped a
    /// healthy subscriber as "not reading": one message is always taken whole.
    @Test func aMessageLargerThanTheBoundGoesOutWhole() {
        var q = OutboundQueue(limit: 100)
        #expect(q.plan(1_000) == .tryWrite)
        #expect(q.wrote(300, of: 1_000) == .enqueue(700))
        q.completed(700)
        #expect(q.plan(5_000) == .tryWrite)
        #expect(q.wrote(0, of: 5_000) == .enqueue(5_000))
        #expect(q.dropReason == nil)
    }

    @Test func queuesTheRestAndKeepsOrder() {
        var q = OutboundQueue(limit: 100)
        #expect(q.plan(50) == .tryWrite)
        #expect(q.wrote(20, of: 50) == .enqueue(30))
        // Something is queued: later bytes must queue behind it.
        #expect(q.plan(10) == .enqueue(10))
        #expect(q.queuedBytes == 40)
        q.completed(30)
        q.completed(10)
        #expect(q.queuedBytes == 0)
        #expect(q.highWater == 40)
        #expect(q.plan(5) == .tryWrite)
    }

    @Test func dropsWithAReasonOnceMoreThanTheBoundWaitsUnread() {
        var q = OutboundQueue(limit: 100)
        #expect(q.plan(80) == .tryWrite)
        #expect(q.wrote(0, of: 80) == .enqueue(80))
        // 80 wait, within the bound: one more message is taken whole.
        #expect(q.plan(30) == .enqueue(30))
        guard case .drop(let reason) = q.plan(1) else { Issue.record("expected a drop"); return }
        #expect(reason.contains("110 bytes wait unread"))
        #expect(reason.contains("100-byte limit"))
        // Once dropped, always dropped.
        q.completed(80)
        if case .drop = q.plan(1) {} else { Issue.record("a dropped queue accepted more") }
    }
}

@Suite struct PublishSchedulerTests {
    @Test func eventsOfOneIterationFormOneBatch() {
        var s = PublishScheduler(budgetNs: 1_000_000)
        s.applied(seq: 1, changed: true, readNs: 100)
        #expect(s.due(nowNs: 200) == nil)
        s.applied(seq: 2, changed: false, readNs: 100)
        #expect(s.due(nowNs: 300) == nil)
        s.applied(seq: 3, changed: false, readNs: 150)
        #expect(s.due(nowNs: 400) == nil)
        #expect(s.flush() == PublishScheduler.Batch(firstSeq: 1, lastSeq: 3, changed: true))
        #expect(s.flush() == nil)
        #expect(s.due(nowNs: 10_000_000) == nil, "nothing open, nothing due")
    }

    @Test func aBatchIsCutOnceItsOldestEventWaitedAQuarterOfTheBudget() {
        var s = PublishScheduler(budgetNs: 1000)
        s.applied(seq: 1, changed: false, readNs: 0)
        #expect(s.due(nowNs: 100) == nil)
        s.applied(seq: 2, changed: false, readNs: 0)
        #expect(s.due(nowNs: 249) == nil)
        s.applied(seq: 3, changed: true, readNs: 0)
        // Asked with the time after the event was applied: the apply counts toward the wait.
        let cut = s.due(nowNs: 250)
        #expect(cut == PublishScheduler.Batch(firstSeq: 1, lastSeq: 3, changed: true))
        #expect(cut?.events == 3)
        // The next batch starts afresh from its own first event.
        s.applied(seq: 4, changed: false, readNs: 600)
        #expect(s.due(nowNs: 700) == nil)
        #expect(s.flush() == PublishScheduler.Batch(firstSeq: 4, lastSeq: 4, changed: false))
    }
}

@Suite struct ReadSizerTests {
    @Test func readsShrinkWhenBytesGetExpensiveAndGrowBack() {
        var r = ReadSizer(budgetNs: 1_000_000)
        let start = r.size
        #expect(start == Int(1_000_000 / ReadSizer.budgetShare / 25))  // its share of 1 ms at the initial 25 ns/byte
        // Relayouts at 20 us per 35-byte event: about 570 ns a byte.
        for _ in 0..<40 { r.observe(bytes: 875, ns: 500_000) }
        #expect(r.size < 500 && r.size >= ReadSizer.minimum)
        // Cheap hinge ticks again: 1 us per 30 bytes.
        for _ in 0..<40 { r.observe(bytes: 3000, ns: 100_000) }
        #expect(r.size > Int(1_000_000 / ReadSizer.budgetShare / 34))
        #expect(r.size <= ReadSizer.maximum)
    }

    @Test func boundsHold() {
        var r = ReadSizer(budgetNs: 1_000)
        r.observe(bytes: 10, ns: 1_000_000)
        #expect(r.size == ReadSizer.minimum)
        var w = ReadSizer(budgetNs: 10_000_000_000)
        w.observe(bytes: 0, ns: 5)
        #expect(w.size == ReadSizer.maximum)
    }
}

@Suite struct NotifyTests {
    @Test func messages() {
        #expect(NotifyMessage.ready(status: "up").hasPrefix("READY=1\nSTATUS=up\nMAINPID="))
        #expect(NotifyMessage.stopping(status: "bye") == "STOPPING=1\nSTATUS=bye")
        #expect(NotifyMessage.watchdog == "WATCHDOG=1")
    }

    @Test func watchdogIntervalIsHalfTheTimeoutForThisProcessOnly() {
        #expect(NotifyMessage.watchdogIntervalMs(environment: ["WATCHDOG_USEC": "10000000"], pid: 7) == 5000)
        #expect(NotifyMessage.watchdogIntervalMs(environment: ["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "7"], pid: 7) == 5000)
        #expect(NotifyMessage.watchdogIntervalMs(environment: ["WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "8"], pid: 7) == nil)
        #expect(NotifyMessage.watchdogIntervalMs(environment: ["WATCHDOG_USEC": "0"], pid: 7) == nil)
        #expect(NotifyMessage.watchdogIntervalMs(environment: [:], pid: 7) == nil)
    }

    @Test func addressesForPathsAndTheAbstractNamespace() throws {
        let base = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
        let (p, plen) = try #require(Notifier.address(for: "/run/n"))
        #expect(Int(plen) == base + 7)
        let pathBytes = withUnsafeBytes(of: p.sun_path) { Array($0.prefix(7)) }
        #expect(pathBytes == Array("/run/n".utf8) + [0])
        let (a, alen) = try #require(Notifier.address(for: "@abs"))
        #expect(Int(alen) == base + 4)
        let absBytes = withUnsafeBytes(of: a.sun_path) { Array($0.prefix(4)) }
        #expect(absBytes == [0] + Array("abs".utf8))
        #expect(Notifier.address(for: "@") == nil)
        #expect(Notifier.address(for: "/" + String(repeating: "x", count: 200)) == nil)
    }
}

@Suite struct LogAndOptionsTests {
    @Test func journalLinesCarryTheSyslogPriority() {
        #expect(LogFormat(journal: true).line(.warning, "a\nb") == "<4>a | b\n")
        #expect(LogFormat(journal: false).line(.notice, "up") == "creased: notice: up\n")
        #expect(LogFormat.stderrIsJournal(nil) == false)
        #expect(LogFormat.stderrIsJournal("garbage") == false)
    }

    @Test func parsesTheCommandLine() throws {
        guard case .run(let o) = try DaemonOptions.parse(["--socket", "/x.sock", "--app", "builtin:split", "--budget-us=250",
                                                           "--log-level", "debug", "--no-trace", "--max-queue-bytes", "4096"]) else {
            Issue.record("expected run"); return
        }
        #expect(o.socketPath == "/x.sock")
        #expect(o.app == .builtin("split"))
        #expect(o.budgetUs == 250)
        #expect(o.logLevel == .debug)
        #expect(o.trace == false)
        #expect(o.maxQueueBytes == 4096)
        guard case .run(let f) = try DaemonOptions.parse(["--app", "my.json"]) else { Issue.record("expected run"); return }
        #expect(f.app == .file("my.json"))
        #expect(try DaemonOptions.parse(["--help"]) == .help)
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--budget-us", "0"]) }
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--log-level", "loud"]) }
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--socket"]) }
        #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--frobnicate"]) }
    }

    @Test func socketPathPrecedence() {
        #expect(SocketPath.resolve(explicit: "/a", environment: ["CREASE_SOCKET": "/b", "XDG_RUNTIME_DIR": "/c"]) == "/a")
        #expect(SocketPath.resolve(explicit: nil, environment: ["CREASE_SOCKET": "/b", "XDG_RUNTIME_DIR": "/c"]) == "/b")
        #expect(SocketPath.resolve(explicit: nil, environment: ["XDG_RUNTIME_DIR": "/c"]) == "/c/crease/creased.sock")
        #expect(SocketPath.resolve(explicit: nil, environment: ["XDG_RUNTIME_DIR": ""]) == "/run/crease/creased.sock")
    }
}
