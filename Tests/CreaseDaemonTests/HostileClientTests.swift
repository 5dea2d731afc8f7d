#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import CreaseTestSupport
import Testing

/// Hostile clients against a real creased (issue 6). In every case the daemon
/// keeps serving the others, its memory stays bounded, and it never crashes. Each
/// test prints the daemon's peak RSS (VmHWM) as a `hostile ...` line.

/// A hinge event, with an id, that changes the layout on every call (closed and
/// fully open alternate).
private func flap(_ i: Int) -> String {
    #"{"event":"hinge","angle":\#(i % 2 == 0 ? 175 : 5),"id":\#(i)}"#
}

@Suite(.serialized) struct HostileClientTests {
    @Test func aThousandConcurrentConnectionsAreAllServed() throws {
        #expect(raiseOpenFileLimit(to: 4096) >= 2048)
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let swarm = try Swarm(d.socketPath, count: 0)
        // Connect in steps of 100, each saying hello.
        for step in 0..<10 {
            for i in step * 100..<(step + 1) * 100 {
                try swarm.add()
                swarm.send(i, #"{"cmd":"hello","id":\#(i)}"# + "\n")
            }
            #expect(swarm.pump(timeout: 20) { swarm.peers.allSatisfy { $0.lineCount == 1 } })
        }
        for (i, p) in swarm.peers.enumerated() {
            #expect(p.lines.first.flatMap(parseJSON)?["id"] == .number(Double(i)))
        }
        #expect(try d.stats()["clients"] == .number(1001))
        // All thousand publish at once: every event is applied exactly once.
        for i in 0..<1000 { swarm.send(i, flap(i) + "\n") }
        #expect(swarm.pump(timeout: 30) { swarm.peers.allSatisfy { $0.lineCount == 2 } })
        let seqs = swarm.peers.compactMap { $0.lines.last.flatMap(parseJSON)?["seq"]?.int }
        #expect(seqs.sorted() == Array(1...1000))
        for i in 0..<1000 { swarm.hangUp(i) }
        var clients = -1
        try pollUntil {
            clients = try d.stats()["clients"]?.int ?? -1
            return clients == 1
        }
        #expect(clients == 1, "the daemon still counts \(clients) clients after all hung up")
        try d.expectServing("a thousand connections")
        #expect(d.peakRSSMiB < 256)
        report("1000 connections", d, "1000 held at once, 1000 events applied once each")
    }

    @Test func aThousandClientsConnectingAtOnceAllGetIn() throws {
        #expect(raiseOpenFileLimit(to: 4096) >= 2048)
        let somaxconn = (try? String(contentsOfFile: "/proc/sys/net/core/somaxconn", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
        try #require(somaxconn >= 1001, "this kernel caps every listen backlog at \(somaxconn) (net.core.somaxconn)")
        let d = try DaemonProcess(arguments: ["--no-trace"])
        // The daemon is stopped while they connect, so none is accepted before all have
        // connected: each waits in the listen backlog. Non-blocking, as a rig's event loop
        // connects: a full backlog would refuse it with EAGAIN at once.
        kill(d.process.processIdentifier, SIGSTOP)
        var fds: [Int32] = []
        var refused: [String] = []
        for _ in 0..<1000 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var (addr, len) = sockaddrUn(d.socketPath)
            let rc = withUnsafePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, len) }
            }
            if rc == 0 { fds.append(fd) } else { refused.append(String(cString: strerror(errno))); Glibc.close(fd) }
        }
        kill(d.process.processIdentifier, SIGCONT)
        #expect(refused.count == 0, "of 1000 connections, refused: \(refused.first ?? "")")
        let swarm = try Swarm(d.socketPath, count: 0)
        for fd in fds { swarm.adopt(fd) }
        for i in swarm.peers.indices { swarm.send(i, #"{"cmd":"hello","id":\#(i)}"# + "\n") }
        #expect(swarm.pump(timeout: 60) { swarm.peers.allSatisfy { $0.lineCount == 1 } })
        #expect(try d.stats()["clients"] == .number(Double(fds.count + 1)))
        for i in swarm.peers.indices { swarm.hangUp(i) }
        try d.expectServing("a thousand simultaneous connections")
        report("1000 simultaneous connects", d, "\(fds.count) connected while the daemon was stopped, all answered")
    }

    @Test func runningOutOfDescriptorsRefusesNewcomersAndKeepsServing() throws {
        // creased limited to 64 open files, against 200 connections.
        raiseOpenFileLimit(to: 1024)
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/creased.sock"
        let d = try DaemonProcess(arguments: ["--nofile=64", try creasedBinary(), "--socket", path, "--no-trace"],
                                  socketPath: path, executable: "/usr/bin/prlimit")
        let swarm = try Swarm(path, count: 0)
        for i in 0..<200 {
            try swarm.add()
            swarm.send(i, #"{"cmd":"hello","id":\#(i)}"# + "\n")
            if i % 50 == 49 { swarm.pump(timeout: 0.2) { false } }
        }
        // Each is either answered or closed: none hangs.
        #expect(swarm.pump(timeout: 20) { swarm.peers.allSatisfy { $0.lineCount == 1 || $0.eof } })
        let answered = swarm.peers.filter { $0.lineCount == 1 }.count
        #expect(answered > 20 && answered < 64, "\(answered) of 200 answered")
        // The loop does not spin while the listening socket has connections it cannot take.
        let cpu0 = cpuSeconds(d.pid)
        usleep(1_000_000)
        let spin = cpuSeconds(d.pid) - cpu0
        #expect(spin < 0.5, "creased used \(spin) s of CPU in 1 s, idle at its descriptor limit")
        // Those it holds still work; once they leave, newcomers are served.
        let held = swarm.peers.indices.filter { swarm[$0].lineCount == 1 }
        for i in held { swarm.send(i, flap(i) + "\n") }
        #expect(swarm.pump(timeout: 20) { held.allSatisfy { swarm[$0].lineCount == 2 } })
        for i in swarm.peers.indices { swarm.hangUp(i) }
        #expect(try pollUntil { try d.stats()["clients"]?.int == 1 }, "every peer that hung up is gone")
        try d.expectServing("descriptor exhaustion")
        report("fd limit 64, 200 connections", d, "\(answered) answered, \(200 - answered) closed, \(String(format: "%.2f", spin)) s CPU in 1 s at the limit")
    }

    @Test func oneByteAtATimeWritersDoNotHoldUpOthers() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let writers = 32
        let swarm = try Swarm(d.socketPath, count: writers)
        for i in 0..<writers {
            swarm.send(i, flap(3 * i) + "\n" + flap(3 * i + 1) + "\r\n" + #"{"cmd":"sync","id":"s\#(i)"}"# + "\n")
        }
        let bystander = try Client(d.socketPath)
        var worst = 0.0
        var finished = false
        while !finished {
            // Trickle: every writer sends one byte per round, for a while.
            finished = swarm.pump(timeout: 0.2, writeChunk: 1) { swarm.peers.allSatisfy { $0.lineCount == 3 } }
            let t0 = monotonicSeconds()
            _ = try bystander.request(#"{"cmd":"hello"}"#)
            worst = max(worst, monotonicSeconds() - t0)
        }
        for i in 0..<writers {
            let ids = swarm[i].lines.compactMap { parseJSON($0)?["id"] }
            #expect(ids == [.number(Double(3 * i)), .number(Double(3 * i + 1)), .string("s\(i)")])
        }
        #expect(worst < 1, "a bystander waited \(worst) s")
        #expect(try d.stats()["events"] == .number(Double(2 * writers)))
        try d.expectServing("one-byte writers")
        report("one-byte writers", d, "\(writers) writers, bystander worst \(Int(worst * 1000)) ms")
    }

    @Test func aNeverReadingSubscriberBeside64StreamingOnesIsDropped() throws {
        raiseOpenFileLimit(to: 1024)
        let d = try DaemonProcess(arguments: ["--no-trace", "--max-queue-bytes", "262144"])
        // Peers 0..<64 stream, 64 never reads, 65 publishes.
        let swarm = try Swarm(d.socketPath, count: 66, keepLines: false)
        let stuck = 64, pub = 65
        swarm[stuck].reading = false
        swarm.send(stuck, #"{"cmd":"subscribe","topics":["layout","diagnostics","stats"]}"# + "\n")
        for i in 0..<64 { swarm.send(i, #"{"cmd":"subscribe","topics":["layout"]}"# + "\n") }
        // The reply and the current layout.
        #expect(swarm.pump(timeout: 10) { (0..<64).allSatisfy { swarm[$0].lineCount == 2 } })
        let publishesBefore = try d.stats()["publishes"]?.int ?? 0
        var sent = 0
        var dropped = false
        while !dropped && sent < 20_000 {
            swarm.send(pub, (sent..<sent + 100).map(flap).joined(separator: "\n") + "\n")
            sent += 100
            #expect(swarm.pump(timeout: 20) { swarm[pub].lineCount == sent })
            dropped = swarm[stuck].eof
        }
        #expect(dropped, "the non-reader was not dropped after \(sent) events")
        swarm.send(pub, #"{"cmd":"sync","id":"sync"}"# + "\n")
        #expect(swarm.pump(timeout: 10) { swarm[pub].lineCount == sent + 1 })
        let sync = try #require(swarm[pub].lastLine.flatMap(parseJSON))
        let stats = try d.stats()
        let publishes = (stats["publishes"]?.int ?? 0) - publishesBefore
        // Every streaming subscriber got every layout published, the last one the synced one.
        #expect(swarm.pump(timeout: 20) { (0..<64).allSatisfy { swarm[$0].lineCount == 2 + publishes } })
        for i in 0..<64 { #expect(swarm[i].lastLine.flatMap(parseJSON)?["digest"] == sync["digest"]) }
        #expect(stats["subscribers"] == .number(64))
        #expect(stats["dropped"] == .number(1))
        #expect(stats["lastDropReason"]?.str?.contains("not reading") == true)
        #expect(d.peakRSSMiB < 128)
        report("never-reading subscriber + 64 readers", d, "dropped after \(sent) events; \(publishes) layouts reached all 64")
    }

    @Test func linesAtAndOverTheLimit() throws {
        ignoreSIGPIPE()
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let limit = 64 * 1024
        func padded(_ json: String, to length: Int) -> String {
            // Whitespace inside the object keeps it one valid JSON line.
            String(json.dropLast()) + String(repeating: " ", count: length - json.utf8.count) + "}"
        }
        let atLimit = padded(#"{"event":"hinge","angle":90,"id":"at"}"#, to: limit)
        #expect(atLimit.utf8.count == limit)
        let c = try Client(d.socketPath)
        #expect(try c.request(atLimit)["id"] == .string("at"))
        // A CR before the newline is not part of the line.
        #expect(try c.request(padded(#"{"event":"hinge","angle":91,"id":"cr"}"#, to: limit - 1) + "\r")["id"] == .string("cr"))

        let over = try Client(d.socketPath)
        over.sendLine(padded(#"{"event":"hinge","angle":92,"id":"over"}"#, to: limit + 1))
        #expect(try over.readJSON()["error"]?["code"] == .string("lineTooLong"))
        #expect(over.drainToEOF().eof)

        // A megabyte with no newline at all: cut off at the limit, not buffered.
        let endless = try Client(d.socketPath)
        endless.send([UInt8](repeating: UInt8(ascii: "["), count: 1 << 20))
        #expect(try endless.readJSON()["error"]?["code"] == .string("lineTooLong"))
        #expect(endless.drainToEOF().eof)

        // 200 clients each holding a partial line just under the limit: memory is
        // bounded by clients times the limit, and every line completes.
        let swarm = try Swarm(d.socketPath, count: 200, keepLines: false)
        let rssBefore = d.rssMiB
        for i in 0..<200 { swarm.send(i, String(padded(flap(i), to: limit - 10).dropLast())) }
        #expect(swarm.pump(timeout: 20) { swarm.peers.allSatisfy { $0.outbox.isEmpty } })
        // Measured once the daemon holds them all: it has read every byte sent.
        let sentBytes = 200 * (limit - 11)
        #expect(try pollUntil { (try d.stats()["bytesIn"]?.int ?? 0) >= sentBytes }, "the daemon read the partial lines")
        let held = d.rssMiB - rssBefore
        for i in 0..<200 { swarm.send(i, "}\n") }
        #expect(swarm.pump(timeout: 20) { swarm.peers.allSatisfy { $0.lineCount == 1 } })
        #expect(swarm.peers.allSatisfy { $0.lastLine.flatMap(parseJSON)?["ok"] == .bool(true) })
        #expect(held < 64, "200 partial lines of 64 KiB held \(held) MiB")
        #expect(try d.stats()["oversizedLines"] == .number(2))
        try d.expectServing("lines at and over the limit")
        #expect(d.peakRSSMiB < 128)
        report("64 KiB lines", d, "200 partial 64 KiB lines held \(Int(held)) MiB")
    }

    @Test func invalidUTF8IsRejectedAndTheConnectionGoesOn() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let c = try Client(d.socketPath)
        let bad: [[UInt8]] = [
            [0xFF, 0xFE, 0xFD],
            Array(#"{"event":"select","tab":""#.utf8) + [0xC0, 0xAF] + Array(#""}"#.utf8),        // overlong '/'
            Array(#"{"event":"select","tab":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),  // a surrogate
            Array(#"{"event":"select","tab":""#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8),  // past U+10FFFF
            Array(#"{"event":"select","tab":""#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8),        // truncated
            Array(#"{"event":"hinge","angle":90,"id":""#.utf8) + [0x80] + Array(#""}"#.utf8),     // a lone continuation byte
            Array(#"{"event":"hinge","angle":90}"#.utf8) + [0x00],
            Array(#"{"ev"#.utf8) + [0xFF] + Array(#"ent":"hinge","angle":90}"#.utf8),
        ]
        for line in bad {
            c.send(line + [0x0A])
            let r = try c.readJSON()
            #expect(r["ok"] == .bool(false), "\(line)")
            #expect(r["error"]?["code"] == .string("badJSON"), "\(line): \(r)")
        }
        // A comment may hold anything; valid multi-byte text in ids is echoed intact.
        c.send([UInt8(ascii: "#"), 0xFF, 0xC0, 0x0A])
        let r = try c.request(#"{"event":"hinge","angle":90,"id":"caf\u00e9 ✓ 😀"}"#)
        #expect(r["id"] == .string("café ✓ 😀"))
        #expect(r["seq"] == .number(1))
        #expect(try d.stats()["rejected"] == .number(Double(bad.count)))
        try d.expectServing("invalid UTF-8")
        report("invalid UTF-8", d)
    }

    @Test func jsonNestedDeepIsRefusedWithoutExhaustingTheStack() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let c = try Client(d.socketPath)
        // 32,000 deep fits in one line; the parser stops at its depth limit.
        for (open, close) in [("[", "]"), (#"{"a":"#, "}")] {
            let depth = 60_000 / (open.utf8.count + 1)
            let r = try c.request(String(repeating: open, count: depth) + String(repeating: close, count: depth))
            #expect(r["error"]?["code"] == .string("badJSON"))
            #expect(r["error"]?["message"]?.str?.contains("nesting deeper") == true, "\(r)")
        }
        // Inside an event and inside an app event's manifest.
        let deepID = #"{"event":"hinge","angle":9,"id":"# + String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000) + "}"
        #expect(try c.request(deepID)["error"]?["code"] == .string("badJSON"))
        // 100,000 deep is 200 KB: over the line limit, the connection is closed.
        let big = try Client(d.socketPath)
        big.sendLine(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000))
        #expect(try big.readJSON()["error"]?["code"] == .string("lineTooLong"))
        try d.expectServing("deep nesting")

        // 100,000 deep as an app file: a clear error at start, a failure status.
        let file = "\(d.dir)/deep.json"
        try Data((#"{"name":"deep","root":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}").utf8)
            .write(to: URL(fileURLWithPath: file))
        let refused = try DaemonProcess(arguments: ["--no-trace", "--app", file], waitUntilReady: false)
        let status = refused.waitForExit(timeout: 20)
        #expect(status != nil && status != 0)
        #expect(refused.log().contains("nesting deeper"), "\(refused.log())")
        report("nested JSON", d)
    }

    @Test func extremeNumbers() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let c = try Client(d.socketPath)
        for line in [#"{"event":"hinge","angle":1e400,"id":1}"#, #"{"event":"hinge","angle":-1e400}"#,
                     #"{"event":"hinge","angle":90,"id":1e400}"#, #"{"event":"hinge","angle":90,"ts":1e999999999}"#] {
            let r = try c.request(line)
            #expect(r["error"]?["code"] == .string("badJSON"), "\(line): \(r)")
            #expect(r["error"]?["message"]?.str?.contains("out of range") == true, "\(line): \(r)")
        }
        for (line, field) in [(#"{"event":"hinge","angle":1e308,"id":2}"#, "angle"),
                              (#"{"event":"liveActivities","count":1e300,"id":3}"#, "count"),
                              (#"{"event":"hinge","angle":90,"ts":1e19,"id":4}"#, "ts"),
                              (#"{"event":"liveActivities","count":0.5,"id":5}"#, "count")] {
            let r = try c.request(line)
            #expect(r["ok"] == .bool(false), "\(line)")
            #expect(r["error"]?["field"] == .string(field), "\(line): \(r)")
        }
        // -0 is zero; a tiny number underflows to zero; a 300-digit angle in range is fine.
        let zero = try c.request(#"{"event":"hinge","angle":-0,"id":-0}"#)
        #expect(zero["ok"] == .bool(true))
        #expect(zero["changed"] == .bool(false))
        #expect(zero["id"]?.double == 0)
        #expect(try c.request(#"{"event":"hinge","angle":1e-400,"id":6}"#)["ok"] == .bool(true))
        #expect(try c.request(#"{"event":"liveActivities","count":-0,"id":7}"#)["ok"] == .bool(true))
        let long = "9" + String(repeating: "0", count: 300) + "e-299"
        #expect(try c.request(#"{"event":"hinge","angle":\#(long),"id":8}"#)["ok"] == .bool(true))
        try d.expectServing("extreme numbers")
        report("1e400 and -0", d)
    }

    @Test func aTenMegabyteManifest() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        // As an app event: one 10 MB line, refused at 64 KiB, never buffered whole.
        let manifest = bigManifest(bytes: 10 << 20)
        let swarm = try Swarm(d.socketPath, count: 1)
        swarm.send(0, #"{"event":"app","id":"big","manifest":"# + manifest + "}\n")
        #expect(swarm.pump(timeout: 20) { swarm[0].eof })
        #expect(swarm[0].lastLine.flatMap(parseJSON)?["error"]?["code"] == .string("lineTooLong"))
        try d.expectServing("a 10 MB app event")
        #expect(d.peakRSSMiB < 64, "peak \(d.peakRSSMiB) MiB")

        // As an app file: loaded (or refused) in bounded time.
        let file = "\(d.dir)/big.json"
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: file))
        let t0 = monotonicSeconds()
        let big = try DaemonProcess(arguments: ["--no-trace", "--app", file], waitUntilReady: false)
        try big.waitForSocket(timeout: 60)
        let startup = monotonicSeconds() - t0
        let hello = try Client(big.socketPath).request(#"{"cmd":"hello"}"#, timeout: 20)
        #expect(hello["app"] == .string("big"))
        let layout = try Client(big.socketPath).request(#"{"cmd":"layout"}"#, timeout: 20)
        #expect(layout["layout"]?["bars"] != nil)
        #expect(big.peakRSSMiB < 512, "peak \(big.peakRSSMiB) MiB")
        report("10 MB manifest", d, "app event refused at 64 KiB; as --app it loads in \(String(format: "%.1f", startup)) s, peak RSS \(Int(big.peakRSSMiB)) MiB")
    }

    @Test func anObjectWithThousandsOfKeysDoesNotStallTheLoop() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        // 6,000 distinct keys in a 59 KB line, ten times. A parser that compares
        // each key with every earlier one spends seconds per line.
        let keys = (0..<6_000).map { #""k\#($0)":0"# }.joined(separator: ",")
        let line = #"{"event":"hinge","angle":1,"# + keys + "}"
        let c = try Client(d.socketPath)
        let t0 = monotonicSeconds()
        c.send(Array(repeating: line, count: 10).joined(separator: "\n") + "\n")
        for _ in 0..<10 { #expect(try c.readJSON(timeout: 60)["error"]?["code"] == .string("unknownField")) }
        let elapsed = monotonicSeconds() - t0
        #expect(elapsed < 5, "ten 6,000-key lines took \(elapsed) s")
        try d.expectServing("many keys")
        report("6,000-key objects", d, "10 lines in \(Int(elapsed * 1000)) ms")
    }

    @Test func disconnectsMidLineAndMidReply() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let sub = try Client(d.socketPath)
        _ = try sub.request(#"{"cmd":"subscribe","topics":["layout"]}"#)
        let pub = try Client(d.socketPath)
        var rssAfterWarmup = 0.0
        for round in 0..<300 {
            // Half a line, then gone.
            let half = try Client(d.socketPath)
            half.send(#"{"event":"hinge","angle":4"#)
            half.close()
            // 200 layouts asked for (about 550 KB, more than the socket buffer holds),
            // one read, then gone: the daemon's queued writes meet a closed socket.
            let rude = try Client(d.socketPath)
            rude.send(String(repeating: #"{"cmd":"layout"}"# + "\n", count: 200))
            #expect(rude.readLine() != nil)
            rude.close()
            // A subscriber that leaves while a push is on its way.
            let leaver = try Client(d.socketPath)
            _ = try leaver.request(#"{"cmd":"subscribe","topics":["layout","diagnostics"]}"#)
            _ = try pub.request(flap(round))
            leaver.close()
            _ = sub.readAvailable(quiet: 0)
            if round == 50 { rssAfterWarmup = d.rssMiB }
        }
        // Only the publisher's events were applied: no half line was.
        let sync = try pub.request(#"{"cmd":"sync"}"#)
        #expect(sync["seq"] == .number(300))
        var clients = -1
        try pollUntil {
            clients = try d.stats()["clients"]?.int ?? -1
            return clients == 3
        }
        #expect(clients == 3, "sub, pub and the stats client; \(clients) counted")
        // Swift may end a value's lifetime after its last use: `sub` must stay connected
        // through the count above, not close when the loop last reads it.
        withExtendedLifetime(sub) {}
        let growth = d.rssMiB - rssAfterWarmup
        #expect(growth < 8, "RSS grew \(growth) MiB over 250 rounds")
        try d.expectServing("disconnects")
        report("disconnects mid-line and mid-reply", d, "900 rude clients, RSS growth after warm-up \(String(format: "%.1f", growth)) MiB")
    }

    @Test func aFloodOfHello() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        // One client that floods and never reads: dropped when its queue passes the limit.
        let flood = try Swarm(d.socketPath, count: 1)
        flood[0].reading = false
        flood.send(0, String(repeating: #"{"cmd":"hello","id":1}"# + "\n", count: 200_000))
        let bystander = try Client(d.socketPath)
        var worst = 0.0
        let deadline = monotonicSeconds() + 30
        while !flood[0].eof && monotonicSeconds() < deadline {
            flood.pump(timeout: 0.05) { flood[0].eof }
            let t0 = monotonicSeconds()
            _ = try bystander.request(#"{"cmd":"hello"}"#, timeout: 10)
            worst = max(worst, monotonicSeconds() - t0)
        }
        #expect(flood[0].eof, "the flooder was not dropped")
        #expect(try bystander.request(#"{"cmd":"stats"}"#)["stats"]?["dropped"] == .number(1))
        #expect(worst < 1, "the bystander waited \(worst) s")
        // Twenty clients that read get every answer. Each keeps at most 1,000 hellos
        // in flight (about 250 KB of replies): one that sent all 5,000 at once and read
        // slower than the daemon answers could pass the 1 MiB queue limit and be
        // dropped like the flooder (docs/hardening.md).
        let readers = try Swarm(d.socketPath, count: 20, keepLines: false)
        for round in 1...5 {
            for i in 0..<20 { readers.send(i, String(repeating: #"{"cmd":"hello","id":\#(i)}"# + "\n", count: 1_000)) }
            #expect(readers.pump(timeout: 60) { readers.peers.allSatisfy { $0.lineCount == round * 1_000 } })
        }
        #expect(try d.stats()["dropped"] == .number(1))
        try d.expectServing("a hello flood")
        #expect(d.peakRSSMiB < 128)
        report("hello flood", d, "non-reader dropped, 100,000 hellos answered to 20 readers, bystander worst \(Int(worst * 1000)) ms")
    }
}

/// A valid manifest of about `bytes` bytes: one tab per 120 KB, each with a
/// navigation stack whose screens carry items with long titles, under 10,000 ids.
func bigManifest(bytes: Int) -> String {
    let title = String(repeating: "t", count: 2000)
    var tabs: [String] = []
    var size = 0
    var n = 0
    while size < bytes {
        var items: [String] = []
        for k in 0..<60 { items.append(#"{"id":"i\#(n)-\#(k)","title":"\#(title)"}"#) }
        let tab = #"{"id":"tab\#(n)","title":"Tab \#(n)","content":{"kind":"navigationStack","id":"s\#(n)","screens":[{"id":"scr\#(n)","toolbar":[\#(items.joined(separator: ","))]}]}}"#
        size += tab.utf8.count
        tabs.append(tab)
        n += 1
    }
    return #"{"name":"big","root":{"kind":"tabView","id":"tabs","tabs":[\#(tabs.joined(separator: ","))]}}"#
}
