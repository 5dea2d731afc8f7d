import CreaseCore

/// A real run of the daemon's core, as `creased --record-inputs FILE` writes it: JSON
/// Lines, a header, then in order every input the core took (with the time it was given),
/// the gauges the shell sampled among them, and after each time the shell performed them, the
/// actions it decided, as text. `replay` feeds the inputs to a fresh core and says where its actions differ: the core's decisions are a
/// function of what it was told.
///
/// ```
/// {"recording":"creased core","startNs":…,"logLevel":"info","config":{…},"engine":{trace header}}
/// {"at":…,"in":"line","client":1,"readNs":…,"hex":"7b226576…"}
/// {"actions":["write 1: {\"ok\":true,…}\n","record(…)"]}
/// ```
public enum DaemonRecording {
    // MARK: Writing

    public static func header(core: DaemonCore, logLevel: LogLevel) -> [UInt8] {
        var w = JSONWriter(capacity: 16 * 1024)
        w.beginObject()
        w.key("recording"); w.string("creased core")
        w.key("startNs"); w.int(Int(core.startNs))
        w.key("logLevel"); w.string(logLevel.name)
        let c = core.config
        w.key("config"); w.beginObject()
        w.key("daemonName"); w.string(c.daemonName)
        w.key("budgetUs"); w.int(Int(c.budgetUs))
        w.key("socketActivated"); w.bool(c.socketActivated)
        w.key("lineLimit"); w.int(c.lineLimit)
        w.key("settleNs"); w.int(Int(c.settleNs))
        w.key("readersPerUid"); w.int(min(c.readersPerUid, Int(Int32.max)))
        w.key("readersTotal"); w.int(min(c.readersTotal, Int(Int32.max)))
        w.key("labels"); Label.write(c.labels, to: &w)
        w.endObject()
        let engineHeader = TraceHeader(daemon: c.daemonName, started: "", part: 0, reason: "recording", config: .object([]),
                                       layouts: false, monotonicOrigin: nil, t: 0, engine: core.engine)
        w.key("engine"); w.raw(engineHeader.encode())
        w.endObject()
        return w.bytes
    }

    public static func input(_ input: DaemonInput, at now: UInt64) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("at"); w.int(Int(truncatingIfNeeded: now))
        switch input {
        case .connected(let client, let peer):
            w.key("in"); w.string("connected"); w.key("client"); w.int(client)
            w.key("peer")
            if let peer {
                w.beginObject()
                w.key("pid"); w.int(Int(peer.pid)); w.key("uid"); w.int(Int(peer.uid)); w.key("gid"); w.int(Int(peer.gid))
                w.key("groups"); w.beginArray(); for g in peer.groups { w.int(Int(g)) }; w.endArray()
                w.endObject()
            } else {
                w.null()
            }
        case .line(let bytes, let client, let readNs):
            w.key("in"); w.string("line"); w.key("client"); w.int(client); w.key("readNs"); w.int(Int(truncatingIfNeeded: readNs))
            w.key("hex"); w.string(hex(bytes))
        case .lineHandled: w.key("in"); w.string("lineHandled")
        case .endOfInput(let client, let n):
            w.key("in"); w.string("endOfInput"); w.key("client"); w.int(client); w.key("unterminatedBytes"); w.int(n)
        case .lineTooLong(let client, let n):
            w.key("in"); w.string("lineTooLong"); w.key("client"); w.int(client); w.key("length"); w.int(n)
        case .dropped(let client, let reason):
            w.key("in"); w.string("dropped"); w.key("client"); w.int(client); w.key("reason"); w.string(reason)
        case .closed(let client): w.key("in"); w.string("closed"); w.key("client"); w.int(client)
        case .bytesRead(let n): w.key("in"); w.string("bytesRead"); w.key("n"); w.int(n)
        case .bytesWritten(let n): w.key("in"); w.string("bytesWritten"); w.key("n"); w.int(n)
        case .endOfIteration: w.key("in"); w.string("endOfIteration")
        case .repliesSent: w.key("in"); w.string("repliesSent")
        case .durable(let seq, let awaited):
            w.key("in"); w.string("durable"); w.key("seq"); w.int(seq); w.key("awaitedRecords"); w.int(awaited)
        case .listening(let activated, let perUid, let total):
            w.key("in"); w.string("listening"); w.key("socketActivated"); w.bool(activated)
            w.key("readersPerUid"); w.int(min(perUid, Int(Int32.max))); w.key("readersTotal"); w.int(min(total, Int(Int32.max)))
        case .statsTick: w.key("in"); w.string("statsTick")
        case .metricsTick: w.key("in"); w.string("metricsTick")
        case .gauges(let g):
            w.key("in"); w.string("gauges"); w.key("residentKiB"); w.int(g.residentKiB)
            w.key("logDroppedLines"); w.int(Int(truncatingIfNeeded: g.logDroppedLines))
            w.key("trace"); if let t = g.trace { t.write(to: &w) } else { w.null() }
        case .rotateTrace(let reason): w.key("in"); w.string("rotateTrace"); w.key("reason"); w.string(reason)
        case .traceReopened(let path, let client, let id):
            w.key("in"); w.string("traceReopened"); w.key("client"); w.int(client)
            w.key("path"); if let path { w.string(path) } else { w.null() }
            w.key("id"); if let id { w.value(id) } else { w.null() }
        case .traceMode(let mode):
            w.key("in"); w.string("traceMode")
            switch mode {
            case .off: w.key("recording"); w.bool(false)
            case .recording(let layouts, let wait):
                w.key("recording"); w.bool(true); w.key("layouts"); w.bool(layouts); w.key("repliesWaitForDisk"); w.bool(wait)
            }
        case .traceClosed: w.key("in"); w.string("traceClosed")
        case .shutdown(let reason): w.key("in"); w.string("shutdown"); w.key("reason"); w.string(reason)
        }
        w.endObject()
        return w.bytes
    }

    public static func actions(_ actions: DaemonActions) -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject(); w.key("actions"); w.beginArray()
        for i in actions.list.indices { w.string(actions.text(at: i)) }
        w.endArray(); w.endObject()
        return w.bytes
    }

    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Replaying

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// What a replay found: how many inputs and performs it went through, and
    /// the first perform whose actions differ from the recording's (nil: none).
    public struct Outcome {
        public var inputs = 0
        public var performs = 0
        public var difference: String?
    }

    /// Feeds a recording's inputs to a fresh core made from its header and
    /// `policy` (the access rules the daemon ran with: they are not recorded), comparing its
    /// actions with the recorded ones at every perform.
    public static func replay(_ text: [UInt8], policy: AccessPolicy) throws(Failure) -> Outcome {
        var lines = text.split(separator: 0x0A, omittingEmptySubsequences: true).makeIterator()
        guard let first = lines.next() else { throw Failure(description: "an empty recording") }
        let header = try parse(first, line: 1)
        guard header["recording"] == .string("creased core") else { throw Failure(description: "line 1 is not a recording's header") }
        let engine: Engine
        do {
            var w = JSONWriter(capacity: 16 * 1024)
            w.value(header["engine"] ?? .null)
            engine = try TraceHeader.decode(ArraySlice(w.bytes)).makeEngine()
        } catch {
            throw Failure(description: "the recording's engine: \(error)")
        }
        let config = header["config"] ?? .null
        func int(_ v: JSONValue?, _ what: String) throws(Failure) -> Int {
            guard let n = wholeNumber(v) else { throw Failure(description: "\(what) is not a whole number") }
            return n
        }
        var labels: [Label] = []
        if case .object(let members)? = config["labels"] {
            for (k, v) in members {
                guard case .string(let s) = v, let label = try? Label(key: k, value: s) else { throw Failure(description: "the header's label \(k)") }
                labels.append(label)
            }
        }
        guard case .string(let daemonName)? = config["daemonName"], case .string(let levelName)? = header["logLevel"],
              let level = LogLevel(name: levelName) else { throw Failure(description: "the header lacks daemonName or logLevel") }
        var cfg = DaemonCore.Config(daemonName: daemonName, budgetUs: UInt64(try int(config["budgetUs"], "budgetUs")),
                                    socketActivated: config["socketActivated"] == .bool(true), policy: policy,
                                    lineLimit: try int(config["lineLimit"], "lineLimit"), labels: labels,
                                    settleNs: UInt64(try int(config["settleNs"], "settleNs")))
        cfg.readersPerUid = try int(config["readersPerUid"], "readersPerUid")
        cfg.readersTotal = try int(config["readersTotal"], "readersTotal")
        var core = DaemonCore(engine: engine, config: cfg, startNs: UInt64(try int(header["startNs"], "startNs")))
        var actions = DaemonActions(logThreshold: level)
        var outcome = Outcome()
        var number = 1
        while let line = lines.next() {
            number += 1
            let record = try parse(line, line: number)
            if case .array(let expected)? = record["actions"] {
                outcome.performs += 1
                let got = actions.list.indices.map { actions.text(at: $0) }
                let want = expected.map { v -> String in if case .string(let s) = v { s } else { "" } }
                if got != want, outcome.difference == nil {
                    let i = zip(got, want).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(got.count, want.count)
                    outcome.difference = "line \(number), action \(i): recorded \(i < want.count ? want[i] : "nothing"); replayed \(i < got.count ? got[i] : "nothing")"
                }
                actions.removeAll()
            } else if record["stopped"] != nil {
                break
            } else {
                outcome.inputs += 1
                let at = UInt64(truncatingIfNeeded: try int(record["at"], "line \(number): at"))
                try withInput(record, line: number) { (input: DaemonInput) in core.handle(input, at: at, into: &actions) }
            }
        }
        return outcome
    }

    /// A whole number as the recording wrote it; `Int.max` (nothing awaited, all durable) reads back as itself.
    private static func wholeNumber(_ v: JSONValue?) -> Int? {
        guard case .number(let n)? = v, n == n.rounded() else { return nil }
        if n >= 9.2e18 { return Int.max }
        guard abs(n) < 9.0e15 else { return nil }
        return Int(n)
    }

    private static func parse(_ line: ArraySlice<UInt8>, line number: Int) throws(Failure) -> JSONValue {
        do { return try JSON.parse(Array(line)) } catch { throw Failure(description: "line \(number): \(error.message)") }
    }

    private static func withInput(_ r: JSONValue, line: Int, _ body: (DaemonInput) -> Void) throws(Failure) {
        func int(_ key: String) throws(Failure) -> Int {
            guard let n = wholeNumber(r[key]) else { throw Failure(description: "line \(line): \(key)") }
            return n
        }
        func string(_ key: String) throws(Failure) -> String {
            guard case .string(let s)? = r[key] else { throw Failure(description: "line \(line): \(key)") }
            return s
        }
        let kind = try string("in")
        switch kind {
        case "connected":
            var peer: PeerCredentials?
            if let p = r["peer"], case .object = p {
                guard case .number(let pid)? = p["pid"], case .number(let uid)? = p["uid"], case .number(let gid)? = p["gid"] else {
                    throw Failure(description: "line \(line): peer")
                }
                var groups: [UInt32] = []
                if case .array(let gs)? = p["groups"] { for g in gs { if case .number(let n) = g { groups.append(UInt32(n)) } } }
                peer = PeerCredentials(pid: Int32(pid), uid: UInt32(uid), gid: UInt32(gid), groups: groups)
            }
            body(.connected(client: try int("client"), peer: peer))
        case "line":
            let bytes = try unhex(try string("hex"), line: line)
            let client = try int("client"), readNs = UInt64(truncatingIfNeeded: try int("readNs"))
            bytes.withUnsafeBytes { body(.line($0, client: client, readNs: readNs)) }
        case "lineHandled": body(.lineHandled)
        case "endOfInput": body(.endOfInput(client: try int("client"), unterminatedBytes: try int("unterminatedBytes")))
        case "lineTooLong": body(.lineTooLong(client: try int("client"), length: try int("length")))
        case "dropped": body(.dropped(client: try int("client"), reason: try string("reason")))
        case "closed": body(.closed(client: try int("client")))
        case "bytesRead": body(.bytesRead(try int("n")))
        case "bytesWritten": body(.bytesWritten(try int("n")))
        case "endOfIteration": body(.endOfIteration)
        case "repliesSent": body(.repliesSent)
        case "durable": body(.durable(seq: try int("seq"), awaitedRecords: try int("awaitedRecords")))
        case "listening":
            body(.listening(socketActivated: r["socketActivated"] == .bool(true), readersPerUid: try int("readersPerUid"),
                            readersTotal: try int("readersTotal")))
        case "statsTick": body(.statsTick)
        case "metricsTick": body(.metricsTick)
        case "gauges":
            var trace: TraceFigures?
            if let t = r["trace"], t != .null { trace = try traceFigures(t, line: line) }
            body(.gauges(SampledGauges(residentKiB: try int("residentKiB"), logDroppedLines: UInt64(try int("logDroppedLines")), trace: trace)))
        case "rotateTrace": body(.rotateTrace(reason: try string("reason")))
        case "traceReopened":
            let path: String? = if case .string(let s)? = r["path"] { s } else { nil }
            let id: JSONValue? = r["id"] == .null ? nil : r["id"]
            body(.traceReopened(path: path, client: try int("client"), id: id))
        case "traceMode":
            if r["recording"] == .bool(true) {
                body(.traceMode(.recording(layouts: r["layouts"] == .bool(true), repliesWaitForDisk: r["repliesWaitForDisk"] == .bool(true))))
            } else {
                body(.traceMode(.off))
            }
        case "traceClosed": body(.traceClosed)
        case "shutdown": body(.shutdown(reason: try string("reason")))
        default: throw Failure(description: "line \(line): unknown input \"\(kind)\"")
        }
    }

    private static func traceFigures(_ t: JSONValue, line: Int) throws(Failure) -> TraceFigures {
        func int(_ key: String) throws(Failure) -> Int {
            guard let n = wholeNumber(t[key]) else { throw Failure(description: "line \(line): trace.\(key)") }
            return n
        }
        guard case .string(let file)? = t["file"], case .string(let fsync)? = t["fsync"] else {
            throw Failure(description: "line \(line): trace.file or trace.fsync")
        }
        let failure: String? = if case .string(let e)? = t["error"] { e } else { nil }
        let removed: TraceFigures.Removed? = t["removedFiles"] == nil ? nil : .init(files: try int("removedFiles"), bytes: try int("removedBytes"))
        return TraceFigures(file: file, failure: failure, fsync: fsync, records: try int("records"), bytes: try int("bytes"),
                            lost: try int("lost"), gaps: try int("gaps"), files: try int("files"), removed: removed)
    }

    private static func unhex(_ s: String, line: Int) throws(Failure) -> [UInt8] {
        let digits = Array(s.utf8)
        guard digits.count % 2 == 0 else { throw Failure(description: "line \(line): hex of odd length") }
        func nibble(_ c: UInt8) throws(Failure) -> UInt8 {
            switch c {
            case 48...57: return c - 48
            case 97...102: return c - 87
            default: throw Failure(description: "line \(line): not hex")
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            out.append(try nibble(digits[i]) << 4 | nibble(digits[i + 1]))
            i += 2
        }
        return out
    }
}
