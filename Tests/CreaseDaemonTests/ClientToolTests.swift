#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import CreaseTestSupport
import Testing

/// `crease send`, `watch` and `stats` against a real creased.

func creaseBinary() throws -> String {
    let path = (try creasedBinary() as NSString).deletingLastPathComponent + "/crease"
    guard FileManager.default.isExecutableFile(atPath: path) else { throw HarnessError("crease was not built next to creased") }
    return path
}

/// Runs `crease ARGS` with `input` on stdin.
func crease(_ arguments: [String], socket: String, input: String? = nil) throws -> (status: Int32, out: String, err: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: try creaseBinary())
    p.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env["CREASE_SOCKET"] = socket
    p.environment = env
    let out = Pipe(), err = Pipe(), inp = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = inp
    try p.run()
    let writer = Thread {
        if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
        try? inp.fileHandleForWriting.close()
    }
    writer.start()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

@Suite(.serialized) struct ClientToolTests {
    @Test func sendPrintsEveryReplyAndExitsByOutcome() throws {
        let d = try DaemonProcess()
        let ok = try crease(["send", #"{"event":"hinge","angle":120}"#, #"{"event":"orientation","value":"landscapeLeft","id":"mine"}"#],
                            socket: d.socketPath)
        #expect(ok.status == 0, "\(ok.err)")
        let replies = ok.out.split(separator: "\n").compactMap { parseJSON(String($0)) }
        #expect(replies.count == 2)
        #expect(replies[0]["id"] == .number(1))  // added by crease send
        #expect(replies[1]["id"] == .string("mine"))
        #expect(replies.map { $0["seq"] } == [.number(1), .number(2)])

        let bad = try crease(["send", #"{"event":"hinge","angle":500}"#], socket: d.socketPath)
        #expect(bad.status == 2)
        #expect(bad.out.contains("outOfRange"))
        let away = try crease(["send", #"{"event":"pop"}"#], socket: d.dir + "/nobody.sock")
        #expect(away.status == 1)
        #expect(away.err.contains("cannot reach creased"))
    }

    @Test func sendStreamsStdinWithoutDeadlock() throws {
        let d = try DaemonProcess()
        // Far more replies than a socket buffer holds: sending and reading must interleave.
        let n = 3000
        let input = (0..<n).map { toggle($0) }.joined(separator: "\n") + "\n# done\n"
        let r = try crease(["send"], socket: d.socketPath, input: input)
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n")
        #expect(lines.count == n)
        #expect(parseJSON(String(lines.last!))?["seq"] == .number(Double(n)))
        let quiet = try crease(["send", "--quiet"], socket: d.socketPath, input: toggle(0) + "\n")
        #expect(quiet.status == 0 && quiet.out.isEmpty)
    }

    @Test func watchPrintsOneLinePerLayoutAndStatsSummarises() throws {
        let d = try DaemonProcess()
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: try creaseBinary())
        watcher.arguments = ["watch", "--count", "3", "--socket", d.socketPath]
        let out = Pipe()
        watcher.standardOutput = out
        try watcher.run()
        // Wait until the watcher is subscribed, then change the layout twice.
        let c = try Client(d.socketPath)
        try waitUntil("the watcher to subscribe") { try c.request(#"{"cmd":"stats"}"#)["stats"]?["subscribers"] == .number(1) }
        _ = try c.request(#"{"event":"hinge","angle":180,"id":1}"#)
        _ = try c.request(#"{"event":"orientation","value":"landscapeRight","id":2}"#)
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        watcher.waitUntilExit()
        #expect(watcher.terminationStatus == 0)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("#0  closed  outer  portrait") == true, "\(text)")
        #expect(lines.last?.hasPrefix("#2  fullyOpen  inner  landscapeRight") == true, "\(text)")
        #expect(lines.allSatisfy { $0.contains("items ") && $0.contains("overflow ") })

        let stats = try crease(["stats"], socket: d.socketPath)
        #expect(stats.status == 0)
        #expect(stats.out.contains("events 2"))
        #expect(stats.out.contains("p99"))
        let json = try crease(["stats", "--json"], socket: d.socketPath)
        #expect(parseJSON(json.out.trimmingCharacters(in: .whitespacesAndNewlines))?["latency"]?["count"] == .number(2))
    }
}
