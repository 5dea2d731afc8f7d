// libFuzzer harness: the command decoder (Command.decode) and the replies built
// from what it returns.
//
// Built by scripts/fuzz against CreaseCore compiled with the fuzzer and address
// sanitizer instrumentation.
//
// Input: byte 0 picks the command name (one of Command.names, an unknown name, or
// the line's own "cmd", decoded by Wire as the daemon reads it); the rest is one NDJSON line.
// Checked on every input, besides "no crash, no sanitizer report":
// - an error carries the message's id and becomes one line of valid JSON;
// - subscribe names at least one topic, and no decoded topic list repeats one;
// - mark's label is the line's "label";
// - the ok reply the daemon builds for each command is one line of valid JSON
//   that echoes the id.

import CreaseCore

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("FuzzCommand: \(message())") }
}

private func checkLine(_ out: [UInt8], id: JSONValue?, what: String) {
    check(out.last == 0x0A && out.dropLast().firstIndex(of: 0x0A) == nil, "\(what) is not one line")
    let v: JSONValue
    do { v = try JSON.parse(out.dropLast()) } catch {
        fatalError("FuzzCommand: \(what) is not JSON: \(String(decoding: out, as: UTF8.self))")
    }
    check(v["id"] == id, "\(what) lost the id")
}

/// The ok reply for a decoded command, shaped as the daemon shapes it.
private func okReply(_ command: Command, id: JSONValue?) -> [UInt8] {
    var out: [UInt8] = []
    Reply.appendOK(id: id, to: &out) { w in
        w.key("seq"); w.int(0)
        switch command {
        case .subscribe(let topics), .unsubscribe(let topics):
            w.key("topics"); w.beginArray()
            for t in topics { w.string(t.rawValue) }
            w.endArray()
        case .mark(let label):
            w.key("label"); w.string(label)
        case .clock:
            w.key("now"); w.int(0)
        case .hello, .layout, .state, .stats, .sync, .trace, .load, .observe, .frame:
            break
        }
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommand(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let selector = Int(data[0]) % (Command.names.count + 2)
    let line = UnsafeRawBufferPointer(start: data + 1, count: size - 1)

    let name: String
    let body: JSONValue
    let command: Command
    if selector == Command.names.count + 1 {
        // As the daemon reads it: Wire decides whether this is a command at all, and decodes it.
        let inbound: Inbound
        do throws(InputError) {
            inbound = try Wire.decode(line: line)
        } catch {
            var out: [UInt8] = []
            Reply.appendError(error, to: &out)
            checkLine(out, id: error.id, what: "Wire error reply")
            return 0
        }
        switch inbound {
        case .ignorable, .event:
            return 0
        case .invalidCommand(_, let error):
            check(error.id == (try? JSON.parse(line))?["id"], "the error lost the message's id")
            var out: [UInt8] = []
            Reply.appendError(error, to: &out)
            checkLine(out, id: error.id, what: "error reply")
            return 0
        case .command(let c, let id):
            guard let b = try? JSON.parse(line) else { fatalError("FuzzCommand: Wire decoded a command from a line that is not JSON") }
            check(id == b["id"], "Wire's id is not the body's id")
            name = c.name
            body = b
            command = c
        }
    } else {
        guard let b = try? JSON.parse(line) else { return 0 }
        name = selector < Command.names.count ? Command.names[selector] : "no-such-command"
        body = b
        do throws(InputError) {
            command = try Command.decode(name: name, body: body)
        } catch {
            check(error.id == body["id"], "the error lost the message's id")
            var out: [UInt8] = []
            Reply.appendError(error, to: &out)
            checkLine(out, id: error.id, what: "error reply")
            return 0
        }
    }
    check(Command.names.contains(name), "an unknown command \"\(name)\" decoded")
    switch command {
    case .subscribe(let topics):
        check(!topics.isEmpty, "subscribe decoded with no topic")
        check(Set(topics.map(\.rawValue)).count == topics.count, "subscribe repeats a topic")
    case .unsubscribe(let topics):
        check(Set(topics.map(\.rawValue)).count == topics.count, "unsubscribe repeats a topic")
    case .mark(let label):
        check(body["label"] == .string(label), "mark's label is not the line's label")
    case .frame(let verdict):
        // As the trace writes it, a frame record reads back to the same verdict.
        var record: [UInt8] = []
        TraceEncoding.appendFrame(seq: verdict.refSeq, t: verdict.t, client: 1, verdict: verdict, to: &record)
        let again = try? record.dropLast().withUnsafeBufferPointer { try TraceRecord.decode($0) }
        check(again == .frame(seq: verdict.refSeq, t: verdict.t, client: 1, verdict: verdict), "a frame verdict does not read back from its record")
    case .load(let request):
        // What decoded is what the line holds: a digest only when it named one.
        check((request.digest != nil) == ((body["digest"] ?? .null) != .null), "load's digest is not the line's")
        // A state load takes is one the events could make: its own encoding loads again to the
        // same layout, a rotation lock holds what its rule says, and nothing pending is dated
        // after the load.
        let base = Engine(profile: .builtin, app: BuiltinApps.app(named: "tabs")!)
        if let loaded = try? request.loaded(onto: base, now: 1_000_000_000) {
            let state = loaded.state
            if state.rotationLock {
                check(InterfaceOrientationRule.resolve(state, supported: loaded.app.supportedOrientations) == state.orientation,
                      "a loaded rotation lock holds another orientation than its rule")
            }
            check((state.pendingOrientation?.since ?? 0) <= 1_000_000_000, "a loaded pending orientation is dated after the load")
            let again = LoadRequest(profile: loaded.profile, app: loaded.app, state: try? JSON.parse(state.jsonBytes(app: loaded.app)))
            check((try? again.loaded(onto: base, now: 1_000_000_000))?.digest == loaded.digest, "a loaded state does not load again to its layout")
        }
    case .observe(let request):
        // What decoded writes back (as a trace record holds it) as a command that decodes and
        // writes the same bytes again (frames are written to two decimals, so compare bytes).
        check(request.tolerance >= 0 && request.tolerance <= ObserveRequest.maxTolerance, "observe's tolerance is out of range")
        let written = request.jsonBytes()
        guard let again = try? JSON.parse(written), let decoded = try? ObserveRequest.decode(again) else {
            fatalError("FuzzCommand: observe re-encoded does not decode: \(String(decoding: written, as: UTF8.self))")
        }
        check(decoded.jsonBytes() == written, "observe does not survive its own encoding")
    case .clock:
        check(name == "clock", "clock decoded from the command \"\(name)\"")
    case .hello, .layout, .state, .stats, .sync, .trace:
        break
    }
    checkLine(okReply(command, id: body["id"]), id: body["id"], what: "ok reply")
    return 0
}
