#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Foundation
import Testing
import CreaseTestSupport

/// A real creased over a real Unix socket.

/// An event that always changes the layout: the keyboard shows on even `i`, hides on odd.
func toggle(_ i: Int, id: String? = nil) -> String {
    let idPart = id.map { ",\"id\":\"\($0)\"" } ?? ""
    return "{\"event\":\"keyboard\",\"visible\":\(i % 2 == 0)\(idPart)}"
}

/// The `topic` pushes a subscriber has been sent: once `sync` answered, they are all
/// on their way, so everything that arrives before a short quiet spell.
func readPushes(_ c: Client, topic: String = "layout", quiet: Double = 0.5) -> [JSONValue] {
    c.readAvailable(quiet: quiet).compactMap(parseJSON).filter { $0["push"]?.str == topic }
}

@Suite(.serialized) struct DaemonProtocolTests {
    @Test func helloLayoutStateStatsAndIdEcho() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        let hello = try c.request(#"{"cmd":"hello","id":"h1"}"#)
        #expect(hello["id"] == .string("h1"))
        #expect(hello["ok"] == .bool(true))
        #expect(hello["protocol"] == .number(1))
        #expect(hello["daemon"]?.str?.hasPrefix("creased ") == true)
        #expect(hello["app"]?.str == Engine.builtinApp(named: "tabs")?.name)
        #expect(hello["profile"]?.str == Engine.builtinProfile.name)
        #expect(hello["socketActivated"] == .bool(false))

        // Commands are answered with or without an id.
        let layout = try c.request(#"{"cmd":"layout"}"#)
        #expect(layout["id"] == nil)
        #expect(layout["layout"]?["seq"] == .number(0))
        #expect(layout["layout"]?["digest"] == hello["digest"])
        #expect(try c.request(#"{"cmd":"state","id":2}"#)["state"] != nil)

        // Ids of every scalar kind come back as sent.
        for id in [#""a b""#, "42", "1.5", "true", "-3"] {
            let r = try c.request("{\"event\":\"hinge\",\"angle\":10,\"id\":\(id)}")
            #expect(r["id"] == parseJSON(id), "id \(id)")
            #expect(r["ok"] == .bool(true))
        }
        let ack = try c.request(#"{"event":"orientation","value":"landscapeLeft","id":9,"ts":123}"#)
        #expect(ack["seq"] == .number(6))
        #expect(ack["changed"] == .bool(true))
        #expect(ack["digest"]?.str?.count == 16)
        #expect((ack["latencyUs"]?.double ?? -1) >= 0)
        #expect(try c.request(#"{"cmd":"layout"}"#)["layout"]?["digest"] == ack["digest"])

        // Events without an id get no reply: the next line is the stats reply.
        c.sendLine(#"{"event":"hinge","angle":20}"#)
        let stats = try c.request(#"{"cmd":"stats","id":"s"}"#)
        #expect(stats["id"] == .string("s"))
        let s = try #require(stats["stats"])
        #expect(s["events"] == .number(7))
        #expect(s["latency"]?["count"] == .number(7))
        for k in ["p50Us", "p90Us", "p99Us", "p999Us", "maxUs", "overBudget", "budgetUs"] {
            #expect(s["latency"]?[k] != nil, "stats.latency.\(k)")
        }
    }

    @Test func badLinesGetErrorsAndChangeNothing() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        let before = try c.request(#"{"cmd":"sync"}"#)
        let bad: [(String, String, String?)] = [
            ("{not json", "badJSON", nil),
            ("[1,2]", "wrongType", nil),
            (#"{"event":"warp","id":1}"#, "", nil),
            (#"{"event":"hinge","id":2}"#, "missingField", "angle"),
            (#"{"event":"hinge","angle":"wide","id":3}"#, "wrongType", "angle"),
            (#"{"event":"hinge","angle":400,"id":4}"#, "outOfRange", "angle"),
            (#"{"event":"select","tab":"no-such-tab","id":5}"#, "", nil),
            (#"{"cmd":"teleport","id":6}"#, "unknownCommand", "cmd"),
            (#"{"cmd":"subscribe","topics":["weather"],"id":7}"#, "badValue", "topics[0]"),
            (#"{"hello":1}"#, "missingField", nil),
        ]
        for (line, code, field) in bad {
            let r = try c.request(line)
            #expect(r["ok"] == .bool(false), "\(line)")
            let err = try #require(r["error"], "\(line)")
            if !code.isEmpty { #expect(err["code"]?.str == code, "\(line): \(err)") }
            if let field { #expect(err["field"]?.str == field, "\(line): \(err)") }
            #expect(err["message"]?.str?.isEmpty == false)
            if let want = parseJSON(line)?["id"] { #expect(r["id"] == want, "\(line)") }
        }
        // Blank lines and comments are ignored: nothing answers them.
        c.send("\n   \n# a comment\n")
        let after = try c.request(#"{"cmd":"sync"}"#)
        #expect(after["seq"] == before["seq"])
        #expect(after["digest"] == before["digest"])
        #expect(try c.request(#"{"cmd":"stats"}"#)["stats"]?["rejected"] == .number(Double(bad.count)))
    }

    @Test func twoPublishersThreeSubscribersSeeOneOrder() throws {
        let d = try DaemonProcess()
        let subs = try (0..<3).map { _ in try Client(d.socketPath) }
        var initial: [JSONValue] = []
        for s in subs {
            let r = try s.request(#"{"cmd":"subscribe","topics":["layout"],"id":"sub"}"#)
            #expect(r["topics"] == .array([.string("layout")]))
            let first = try s.readJSON()
            #expect(first["push"] == .string("layout"))
            initial.append(first)
        }
        #expect(initial[0]["digest"] == initial[1]["digest"])
        let pubs = try (0..<2).map { _ in try Client(d.socketPath) }

        // Lock step: each event is its own batch, so every change is pushed.
        var acks: [JSONValue] = []
        for i in 0..<40 {
            acks.append(try pubs[i % 2].request(toggle(i, id: "e\(i)")))
        }
        #expect(acks.map { $0["seq"]?.int } == (1...40).map { Optional($0) })
        #expect(acks.allSatisfy { $0["changed"] == .bool(true) })

        // Then both at once, unthrottled: batches may merge pushes.
        var burst: [[String]] = [[], []]
        for i in 40..<400 { burst[i % 2].append(toggle(i, id: "b\(i)")) }
        pubs[0].send(burst[0].joined(separator: "\n") + "\n")
        pubs[1].send(burst[1].joined(separator: "\n") + "\n")
        var burstSeqs: [[Int]] = [[], []]
        for p in 0..<2 {
            for _ in 0..<180 { burstSeqs[p].append(try pubs[p].readJSON()["seq"]?.int ?? -1) }
            // Each publisher's events are applied in its order.
            #expect(burstSeqs[p] == burstSeqs[p].sorted())
        }
        // Across both, every seq from 41 to 400 exactly once.
        #expect((burstSeqs[0] + burstSeqs[1]).sorted() == Array(41...400))

        let sync = try pubs[0].request(#"{"cmd":"sync","id":"s"}"#)
        #expect(sync["seq"] == .number(400))
        var seen: [[Int]] = []
        for s in subs {
            let pushes = readPushes(s)
            let seqs = pushes.compactMap { $0["seq"]?.int }
            // In seq order, each layout new, the last one the synced one.
            #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count)
            #expect(Array(seqs.prefix(40)) == Array(1...40))
            for (a, b) in zip(pushes, pushes.dropFirst()) { #expect(a["digest"] != b["digest"]) }
            #expect(pushes.last?["digest"] == sync["digest"])
            #expect(pushes.last?["layout"]?["digest"] == sync["digest"])
            // Lock-step pushes match the acks.
            for (p, a) in zip(pushes.prefix(40), acks) { #expect(p["digest"] == a["digest"]) }
            seen.append(seqs)
        }
        #expect(seen[0] == seen[1] && seen[1] == seen[2])
    }

    @Test func syncRepliesAfterEverythingEarlierIsPublished() throws {
        // A budget so wide that no batch is cut early, whatever the build's speed.
        let d = try DaemonProcess(arguments: ["--budget-us", "10000000"])
        let sub = try Client(d.socketPath)
        _ = try sub.request(#"{"cmd":"subscribe","topics":["layout"]}"#)
        _ = try sub.readJSON()
        let pub = try Client(d.socketPath)
        // 301 events and a sync in one write: the sync waits for all of them.
        let lines = (0..<301).map { toggle($0) } + [#"{"cmd":"sync","id":"z"}"#]
        pub.send(lines.joined(separator: "\n") + "\n")
        let sync = try pub.readJSON()
        #expect(sync["id"] == .string("z"))
        #expect(sync["seq"] == .number(301))
        // By the time sync answered, the final layout was already queued to the subscriber.
        let pushes = sub.readAvailable(quiet: 0.2).compactMap(parseJSON)
        // (Keyboard toggles alternate between two layouts, so the last change pushed
        // may be older than seq 301, but it is the synced layout.)
        #expect(!pushes.isEmpty)
        #expect(pushes.last?["digest"] == sync["digest"])
        let stats = try #require(try pub.request(#"{"cmd":"stats"}"#)["stats"])
        #expect(stats["events"] == .number(301))
        #expect(stats["latency"]?["count"] == .number(301))
        // A burst read together is published as a few layouts, not one per event.
        #expect((stats["publishes"]?.int ?? 999) < 30)
        #expect((stats["batches"]?.int ?? 0) >= 1)
    }

    @Test func oversizedLineClosesOnlyThatConnection() throws {
        let d = try DaemonProcess()
        let other = try Client(d.socketPath)
        _ = try other.request(#"{"cmd":"hello"}"#)
        // A long comment inside the limit is fine.
        let ok = try Client(d.socketPath)
        ok.send("#" + String(repeating: "x", count: 65_000) + "\n")
        #expect(try ok.request(#"{"cmd":"hello","id":1}"#)["ok"] == .bool(true))

        let big = try Client(d.socketPath)
        big.send(#"{"event":"hinge","angle":1,"pad":""# + String(repeating: "y", count: 70_000))
        let err = try big.readJSON()
        #expect(err["ok"] == .bool(false))
        #expect(err["error"]?["code"] == .string("lineTooLong"))
        #expect(big.drainToEOF(timeout: 5).eof)

        #expect(try other.request(#"{"cmd":"hello","id":2}"#)["id"] == .number(2))
        #expect(try ok.request(#"{"cmd":"sync"}"#)["seq"] == .number(0))
        #expect(try other.request(#"{"cmd":"stats"}"#)["stats"]?["oversizedLines"] == .number(1))
    }

    @Test func aSubscriberThatNeverReadsIsDroppedWhileOthersKeepReceiving() throws {
        let d = try DaemonProcess(arguments: ["--max-queue-bytes", "65536"])
        let readers = try (0..<2).map { _ in try Client(d.socketPath) }
        let stuck = try Client(d.socketPath)
        for s in readers + [stuck] {
            s.sendLine(#"{"cmd":"subscribe","topics":["layout"]}"#)
        }
        for r in readers { _ = try r.readJSON(); _ = try r.readJSON() }
        let pub = try Client(d.socketPath)
        var received = [0, 0]
        var dropped = false
        var sent = 0
        while sent < 4000 && !dropped {
            for _ in 0..<50 {
                _ = try pub.request(toggle(sent, id: "\(sent)"))
                sent += 1
                for (i, r) in readers.enumerated() { received[i] += r.readAvailable(quiet: 0).count }
            }
            dropped = try pub.request(#"{"cmd":"stats"}"#)["stats"]?["dropped"] == .number(1)
        }
        #expect(dropped, "after \(sent) events")
        // The others got every layout, before and after the drop.
        _ = try pub.request(toggle(sent, id: "last"))
        sent += 1
        _ = try pub.request(#"{"cmd":"sync"}"#)
        for (i, r) in readers.enumerated() {
            received[i] += readPushes(r).count
            #expect(received[i] == sent)
        }
        // The stuck one's connection was closed by the daemon.
        #expect(stuck.drainToEOF(timeout: 10).eof)
        #expect(d.log().contains("dropping client"))
        let stats = try #require(try pub.request(#"{"cmd":"stats"}"#)["stats"])
        #expect(stats["lastDropReason"]?.str?.contains("not reading") == true)
        #expect(stats["subscribers"] == .number(2))
    }

    @Test func aClientThatHangsUpStillGetsItsReplies() throws {
        let d = try DaemonProcess()
        let c = try Client(d.socketPath)
        c.send((0..<5).map { toggle($0, id: "h\($0)") }.joined(separator: "\n") + "\n")
        c.shutdownWrite()
        let (lines, eof) = c.drainToEOF()
        #expect(eof)
        #expect(lines.compactMap { parseJSON($0)?["id"]?.str } == ["h0", "h1", "h2", "h3", "h4"])
    }

    /// Under --fsync always the replies wait for the disk; a client that half-closes first
    /// (found by `crease hunt`) used to be closed before they were released, and lost them.
    @Test("under --fsync always a client that hangs up still gets every reply, after its records are on disk")
    func aClientThatHangsUpUnderFsyncAlwaysStillGetsItsReplies() throws {
        let d = try DaemonProcess(arguments: ["--fsync", "always"])
        let c = try Client(d.socketPath)
        c.send((0..<5).map { toggle($0, id: "h\($0)") }.joined(separator: "\n") + "\n" + #"{"event":"nope","id":"bad"}"# + "\n")
        c.shutdownWrite()
        let (lines, eof) = c.drainToEOF(timeout: 30)
        #expect(eof, "\(d.log())")
        #expect(lines.compactMap { parseJSON($0)?["id"]?.str } == ["h0", "h1", "h2", "h3", "h4", "bad"], "\(lines)")
    }

    @Test func sigtermPushesShutdownRemovesTheSocketAndExitsZero() throws {
        let d = try DaemonProcess()
        let sub = try Client(d.socketPath)
        _ = try sub.request(#"{"cmd":"subscribe","topics":["layout","stats"]}"#)
        _ = try sub.readJSON()
        let pub = try Client(d.socketPath)
        _ = try pub.request(toggle(0, id: "x"))
        d.signal(SIGTERM)
        #expect(d.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: d.socketPath))
        let (lines, eof) = sub.drainToEOF()
        #expect(eof)
        #expect(lines.last.flatMap(parseJSON)?["push"] == .string("shutdown"))
        #expect(d.log().contains("SIGTERM: shutting down"))
    }

    @Test func sigintAndSighup() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let c = try Client(d.socketPath)
        // Sent as soon as the socket accepts, before the daemon may have installed its signal
        // handlers: the signal waits for them (it once met its default action and ended the daemon).
        d.signal(SIGHUP)
        // SIGHUP reopens the trace (none here) and the daemon goes on.
        #expect(try c.request(#"{"cmd":"hello","id":1}"#)["ok"] == .bool(true))
        #expect(try c.request(#"{"cmd":"trace","action":"rotate","id":2}"#)["error"]?["code"] == .string("traceDisabled"))
        try waitUntil("the SIGHUP logged") { d.log().contains("SIGHUP") }
        d.signal(SIGINT)
        #expect(d.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: d.socketPath))
    }

    /// Every signal that can be caught and is not a crash has a decided response: SIGUSR1
    /// once ended creased with its default action and left the socket behind.
    @Test func everyCatchableSignalIsHandledOrIgnoredAndNoneLeavesTheSocket() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let c = try Client(d.socketPath)
        let goOn = SignalPolicy.handled.filter { $0.response == .logAndIgnore }
        for s in goOn.map(\.signal) + [SIGPIPE, SIGXFSZ, __libc_current_sigrtmin(), __libc_current_sigrtmax()] { d.signal(s) }
        #expect(try c.request(#"{"cmd":"hello","id":1}"#)["ok"] == .bool(true))
        try waitUntil("each ignored signal logged") { goOn.allSatisfy { d.log().contains("\($0.name) received") } }
        #expect(d.process.isRunning)
        // The others stop it cleanly, like SIGTERM.
        for (signum, name, response) in SignalPolicy.handled where response == .shutdown && signum != SIGTERM && signum != SIGINT {
            let e = try DaemonProcess(arguments: ["--no-trace"])
            e.signal(signum)
            #expect(e.waitForExit() == 0, "\(name)")
            #expect(!FileManager.default.fileExists(atPath: e.socketPath), "\(name) left the socket")
            #expect(e.log().contains("\(name): shutting down"))
        }
    }

    /// Issue 37: `kill -ABRT` (systemd's watchdog) or `-SEGV` from outside printed the
    /// runtime's crash report and the daemon went on serving; docs/daemon.md says they end it.
    @Test(arguments: [SIGABRT, SIGSEGV, SIGBUS])
    func aCrashSignalSentFromOutsideEndsTheDaemon(signum: Int32) throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        #expect(try Client(d.socketPath).request(#"{"cmd":"hello","id":1}"#)["ok"] == .bool(true))
        d.signal(signum)
        #expect(d.waitForExit(timeout: 30) != nil, "still running after signal \(signum)")
        #expect(d.process.terminationReason == .uncaughtSignal && d.process.terminationStatus == signum)
    }

    /// A layout larger than the queue bound once dropped a healthy subscriber as "not
    /// reading" and cut the `layout` reply off: one whole message always goes out.
    @Test func aLayoutLargerThanTheQueueBoundReachesReadersWhole() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Long ids, most in the overflow menu: a layout of about 600 KB, more than a Unix
        // socket's buffer takes at once, so the daemon must queue part of every push.
        let long = String(repeating: "an-item-with-a-rather-long-identifier-", count: 5)
        let items = (0..<2_000).map { #"{"id":"\#(long)\#($0)","title":"Item \#($0)","symbol":"star"}"# }.joined(separator: ",")
        let app = "\(dir)/big.json"
        try Data(#"{"name":"Big","root":{"kind":"navigationStack","id":"s","screens":[{"id":"r","toolbar":[\#(items)]}]}}"#.utf8)
            .write(to: URL(fileURLWithPath: app))
        let d = try DaemonProcess(arguments: ["--no-trace", "--app", app, "--max-queue-bytes", "65536"])
        let sub = try Client(d.socketPath)
        sub.sendLine(#"{"cmd":"subscribe","topics":["layout"],"id":"s"}"#)
        #expect(try sub.readJSON(timeout: 30)["id"] == .string("s"))
        let first = try #require(sub.readLine(timeout: 30))
        #expect(first.utf8.count > 300_000 && parseJSON(first)?["push"] == .string("layout"), "\(first.utf8.count) bytes")
        let pub = try Client(d.socketPath)
        #expect(try pub.request(#"{"event":"hinge","angle":180,"id":1}"#, timeout: 30)["ok"] == .bool(true))
        let pushed = try #require(sub.readLine(timeout: 30))
        #expect(parseJSON(pushed)?["seq"] == .number(1))
        let layout = try pub.request(#"{"cmd":"layout","id":2}"#, timeout: 30)
        #expect(layout["layout"]?["seq"] == .number(1))
        #expect(!d.log().contains("not reading"), "\(d.log())")
    }

    /// A client gets a quarter of the budget per loop turn (at least one line), then the
    /// others have theirs; its remaining lines wait with its reading paused. With a 1 us
    /// budget every line is a turn of its own: a pipelined burst from two clients is still
    /// answered whole and in order, and the two interleave instead of one going first.
    @Test func aClientPastItsTurnWaitsAndLosesNothing() throws {
        let d = try DaemonProcess(arguments: ["--no-trace", "--budget-us", "1"])
        let a = try Client(d.socketPath), b = try Client(d.socketPath)
        let count = 400
        let burst = { (tag: String) in (0..<count).map { #"{"event":"hinge","angle":\#(90 + $0 % 2),"id":"\#(tag)\#($0)"}"# }.joined(separator: "\n") + "\n" }
        a.send(burst("a"))
        b.send(burst("b"))
        var seqs: [String: [Int]] = ["a": [], "b": []]
        for (tag, c) in [("a", a), ("b", b)] {
            while seqs[tag]!.count < count, let line = c.readLine(timeout: 60) {
                guard let v = parseJSON(line), case .string(let id)? = v["id"], case .number(let seq)? = v["seq"] else { continue }
                #expect(id == "\(tag)\(seqs[tag]!.count)", "replies in order")
                seqs[tag]!.append(Int(seq))
            }
        }
        #expect(seqs["a"]!.count == count && seqs["b"]!.count == count)
        #expect(Set(seqs["a"]! + seqs["b"]!) == Set(1...(2 * count)), "every event applied once")
        // Interleaved: neither client's burst ran through before the other's began.
        #expect(seqs["a"]!.last! > seqs["b"]!.first! && seqs["b"]!.last! > seqs["a"]!.first!)
        #expect(try a.request(#"{"cmd":"sync","id":"s"}"#)["seq"] == .number(Double(2 * count)))
    }

    @Test func socketDirectoryAndFileModes() throws {
        let d = try DaemonProcess()
        var st = stat()
        #expect(stat(d.socketPath, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o660)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(stat((d.socketPath as NSString).deletingLastPathComponent, &st) == 0)
        #expect(st.st_mode & 0o777 == 0o750)
    }

    /// Every `DaemonProcess` waits on `--ready-fd 1` (a pipe on its standard output); a
    /// descriptor that is not open is refused before anything listens.
    @Test("--ready-fd names an open descriptor; one that is not is refused at start")
    func readyFdMustBeOpen() throws {
        let d = try DaemonProcess(arguments: ["--ready-fd", "977"], waitUntilReady: false)
        #expect(d.waitForExit() == 1)
        #expect(d.log().contains("--ready-fd 977 is not an open descriptor"), "\(d.log())")
        #expect(!FileManager.default.fileExists(atPath: d.socketPath))
        let usage = try run(try creasedBinary(), ["--ready-fd", "0"])
        #expect(usage.status == 2 && usage.err.contains("--ready-fd needs an integer >= 1"), "\(usage.err)")
    }

    @Test func staleSocketIsReplacedLiveOneAndNonSocketAreRefused() throws {
        let first = try DaemonProcess()
        // A live daemon keeps its socket.
        let second = try DaemonProcess(socketPath: first.socketPath, waitUntilReady: false)
        #expect(second.waitForExit() == 1)
        #expect(second.log().contains("another daemon is answering"))
        #expect(try Client(first.socketPath).request(#"{"cmd":"hello"}"#)["ok"] == .bool(true))

        // A crash leaves the socket file behind; a restart replaces it.
        first.signal(SIGKILL)
        _ = first.waitForExit()
        #expect(FileManager.default.fileExists(atPath: first.socketPath))
        let third = try DaemonProcess(socketPath: first.socketPath)
        #expect(third.log().contains("replaced stale socket"))
        #expect(try Client(third.socketPath).request(#"{"cmd":"hello","id":3}"#)["id"] == .number(3))
        third.stop()

        // A path that is not a socket is never touched.
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/not-a-socket"
        FileManager.default.createFile(atPath: path, contents: Data("precious".utf8))
        let fourth = try DaemonProcess(socketPath: path, waitUntilReady: false)
        #expect(fourth.waitForExit() == 1)
        #expect(fourth.log().contains("not a socket"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")
    }

    /// The start-up check once blocked for ever in connect() on a listener whose backlog was
    /// full, with nothing in the log; it now says so and refuses at once.
    @Test func aListenerWithAFullBacklogIsNeitherWaitedForNorTakenOver() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/busy.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var (addr, len) = sockaddrUn(path)
        #expect(withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) } } == 0)
        #expect(listen(listener, 0) == 0)
        var queued: [Int32] = []
        defer { for fd in queued { close(fd) } }
        for _ in 0..<64 {
            let c = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            let rc = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(c, $0, len) } }
            if rc != 0 { close(c); break }
            queued.append(c)
        }
        let d = try DaemonProcess(socketPath: path, waitUntilReady: false)
        #expect(d.waitForExit(timeout: 30) == 1, "creased waited on the full backlog")
        #expect(d.log().contains("accepts no connection now (its backlog is full)"), "\(d.log())")
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK, "the other listener's socket is left as it was")
    }

    @Test func diagnosticsAndStatsTopicsAndUnsubscribe() throws {
        let d = try DaemonProcess(arguments: ["--stats-interval-ms", "50"])
        let c = try Client(d.socketPath)
        let r = try c.request(#"{"cmd":"subscribe","topics":["diagnostics","stats"],"id":1}"#)
        #expect(r["topics"] == .array([.string("diagnostics"), .string("stats")]))
        let diag = try c.readJSON()
        #expect(diag["push"] == .string("diagnostics"))
        #expect(diag["diagnostics"].map { if case .array = $0 { true } else { false } } == true)
        let pub = try Client(d.socketPath)
        _ = try pub.request(toggle(0, id: "a"))
        var statsPush: JSONValue?
        let deadline = monotonicSeconds() + 5
        while statsPush == nil && monotonicSeconds() < deadline {
            let v = try c.readJSON()
            if v["push"] == .string("stats") { statsPush = v }
            #expect(v["push"] != .string("layout"))
        }
        #expect(statsPush?["stats"]?["events"] == .number(1))
        let u = try c.request(#"{"cmd":"unsubscribe","topics":["stats"],"id":2}"#, timeout: 5)
        // A stats push may have been in flight; the reply is the next reply line.
        let reply = u["push"] == nil ? u : try c.readJSON()
        #expect(reply["topics"] == .array([.string("diagnostics")]))
        let none = try c.request(#"{"cmd":"unsubscribe","id":3}"#)
        #expect(none["topics"] == .array([]))
    }

    @Test func appFileAndJournalPrefixes() throws {
        let bad = try DaemonProcess(arguments: ["--app", "/nonexistent/app.json"], waitUntilReady: false)
        #expect(bad.waitForExit() == 1)
        #expect(bad.log().contains("/nonexistent/app.json"))
        let usage = try DaemonProcess(arguments: ["--bogus"], waitUntilReady: false)
        #expect(usage.waitForExit() == 2)

        // With JOURNAL_STREAM naming its stderr, lines carry <N> priorities.
        let split = try DaemonProcess(arguments: ["--app", "builtin:split"], journal: true)
        #expect(try Client(split.socketPath).request(#"{"cmd":"hello"}"#)["app"]?.str == Engine.builtinApp(named: "split")?.name)
        split.stop()
        let lines = split.log().split(separator: "\n")
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("<5>creased ") })
    }

    @Test func appAndProfileFilesTheAppEventAndMark() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let split = try #require(BuiltinApps.source(named: "split"))
        try split.write(toFile: "\(dir)/app.json", atomically: true, encoding: .utf8)
        var w = JSONWriter()
        try DeviceProfile.decode(json: Array(#"{"name":"Test Rig"}"#.utf8)).write(to: &w)
        try String(decoding: w.bytes, as: UTF8.self).write(toFile: "\(dir)/profile.json", atomically: true, encoding: .utf8)

        let d = try DaemonProcess(arguments: ["--app", "\(dir)/app.json", "--profile", "\(dir)/profile.json"])
        let c = try Client(d.socketPath)
        let hello = try c.request(#"{"cmd":"hello"}"#)
        #expect(hello["app"]?.str == Engine.builtinApp(named: "split")?.name)
        #expect(hello["profile"] == .string("Test Rig"))

        // The app event swaps the manifest while running; subscribers see the new layout.
        let sub = try Client(d.socketPath)
        _ = try sub.request(#"{"cmd":"subscribe","topics":["layout"]}"#)
        _ = try sub.readJSON()
        let tabs = try #require(BuiltinApps.source(named: "tabs")).replacingOccurrences(of: "\n", with: " ")
        let ack = try c.request("{\"event\":\"app\",\"manifest\":\(tabs),\"id\":\"swap\"}")
        #expect(ack["ok"] == .bool(true), "\(ack)")
        #expect(try c.request(#"{"cmd":"hello"}"#)["app"]?.str == Engine.builtinApp(named: "tabs")?.name)
        let push = try sub.readJSON()
        #expect(push["seq"] == .number(1))
        #expect(push["digest"] == ack["digest"])
        #expect(d.log().contains("replaced the app"))

        let mark = try c.request(#"{"cmd":"mark","label":"after swap","id":"m"}"#)
        #expect(mark["seq"] == .number(1))
        #expect(mark["traced"] == .bool(true))

        let badProfile = try DaemonProcess(arguments: ["--profile", "\(dir)/app.json"], waitUntilReady: false)
        #expect(badProfile.waitForExit() == 1)
        #expect(badProfile.log().contains("profile"))
    }
}

/// A flag one thread sets and another polls.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
