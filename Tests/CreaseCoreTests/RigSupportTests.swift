import Testing
@testable import CreaseCore

private func decodeEvent(_ line: String) throws(InputError) -> EventEnvelope {
    guard case .event(let e) = try Wire.decode(line: Array(line.utf8)) else { throw InputError(.wrongType, "not an event") }
    return e
}

private func rejection(_ line: String) -> InputError? {
    do { _ = try decodeEvent(line); return nil } catch { return error }
}

private func json(_ text: String) throws -> JSONValue { try JSON.parse(Array(text.utf8)) }

/// The InputError `body` throws, nil when it throws none.
private func inputError(_ body: () throws -> Void) -> InputError? {
    do { try body(); return nil } catch let e as InputError { return e } catch { return nil }
}

/// The state the engine is in, as `state` writes it.
private func stateJSON(_ e: Engine) throws -> JSONValue { try JSON.parse(e.state.jsonBytes(app: e.app)) }

@Suite struct RigErrorTests {
    @Test("every range error says what it got", arguments: [
        (#"{"event":"hinge","angle":300}"#, "got 300"),
        (#"{"event":"hinge","angle":-45.5}"#, "got -45.5"),
        (#"{"event":"keyboard","visible":true,"height":2500}"#, "got 2500"),
        (#"{"event":"liveActivities","count":1001}"#, "got 1001"),
    ])
    func rangeErrorsSayWhatTheyGot(line: String, got: String) throws {
        let e = try #require(rejection(line))
        #expect(e.code == .outOfRange && e.message.hasSuffix(got), "\(e)")
    }

    @Test("range errors outside events say what they got too: commands, profiles, manifests")
    func otherRangeErrors() throws {
        let topics = try #require(inputError { _ = try Command.decode(name: "subscribe", body: try json(#"{"cmd":"subscribe","topics":[]}"#)) })
        #expect(topics.code == .outOfRange && topics.message.hasSuffix("got []"))
        #expect(inputError { _ = try DeviceProfile.decode(try json(#"{"itemLength":30}"#)) }?.message.hasSuffix("got 30") == true)
        #expect(inputError { _ = try DeviceProfile.decode(try json(#"{"outerWidth":20000}"#)) }?.message.hasSuffix("got 20000") == true)
        let bands = try #require(inputError { _ = try DeviceProfile.decode(try json(#"{"hingeHysteresis":30}"#)) })
        #expect(bands.code == .outOfRange && bands.message.contains("got 30 around thresholds"), "\(bands)")
    }

    @Test("a rejected event carries its ts; the error reply echoes line and ts beside the id")
    func rejectedEventEchoesTsAndLine() throws {
        var e = try #require(rejection(#"{"event":"hinge","angle":300,"ts":1700000000123}"#))
        #expect(e.ts == 1_700_000_000_123 && e.id == nil)
        #expect(rejection(#"{"event":"hinge","angel":3,"ts":7}"#)?.ts == 7, "a field error after ts still carries it")
        #expect(rejection(#"{"event":"hinge","angle":3,"ts":1.5}"#)?.ts == nil, "a bad ts is the error itself")
        e.line = 57
        var out: [UInt8] = []
        Reply.appendError(e, to: &out)
        let reply = try JSON.parse(out.dropLast())
        #expect(reply["line"] == .number(57) && reply["ts"] == .number(1_700_000_000_123) && reply["ok"] == .bool(false))
        #expect(reply["id"] == nil && reply["error"]?["code"] == .string("outOfRange"))
        out.removeAll()
        Reply.appendError(InputError(.badJSON, "x"), to: &out)
        #expect(String(decoding: out, as: UTF8.self) == #"{"ok":false,"error":{"code":"badJSON","message":"x"}}"# + "\n")
    }
}

@Suite struct OrientationConventionTests {
    @Test("device landscapeLeft is interface landscapeRight and back; portraits are the same; interface is the default")
    func conventions() throws {
        #expect(try decodeEvent(#"{"event":"orientation","value":"landscapeLeft","convention":"device"}"#).event == .deviceOrientation(.landscapeLeft))
        #expect(try decodeEvent(#"{"event":"orientation","value":"faceUp","convention":"device"}"#).event == .deviceOrientation(.faceUp))
        #expect(DeviceOrientation.landscapeLeft.interface == .landscapeRight && DeviceOrientation.landscapeRight.interface == .landscapeLeft)
        #expect(DeviceOrientation.portraitUpsideDown.interface == .portraitUpsideDown && DeviceOrientation.faceDown.interface == nil)
        for o in Orientation.allCases { #expect(DeviceOrientation(interface: o).interface == o) }
        let flat = try #require(rejection(#"{"event":"orientation","value":"faceUp"}"#))
        #expect(flat.code == .badValue && flat.field == "value" && flat.message.contains("convention"))
        #expect(try decodeEvent(#"{"event":"orientation","value":"landscapeLeft","convention":"interface"}"#).event == .orientation(.landscapeLeft))
        #expect(try decodeEvent(#"{"event":"orientation","value":"landscapeLeft"}"#).event == .orientation(.landscapeLeft))
        let bad = try #require(rejection(#"{"event":"orientation","value":"portrait","convention":"gravity","id":4}"#))
        #expect(bad.code == .badValue && bad.field == "convention" && bad.id == .number(4))
    }

    @Test("a trace keeps the line as sent, convention included, and replays it to the same digest")
    func tracedAsSent() throws {
        var engine = Engine(profile: .builtin, app: builtin("tabs"))
        var out = TraceHeader(daemon: "creased test", started: "x", part: 0, reason: "start", config: .object([]), layouts: false,
                              monotonicOrigin: nil, t: 0, engine: engine).encode() + [0x0A]
        let line = #"{"event":"orientation","value":"landscapeLeft","convention":"device"}"#
        try engine.apply(try decodeEvent(line).event)
        Array(line.utf8).withUnsafeBytes { TraceEncoding.appendEvent(seq: 1, t: 5, client: 1, event: $0, digest: engine.digest, to: &out) }
        #expect(String(decoding: out, as: UTF8.self).contains(line))
        let outcome = try TraceReplay.run(try TraceFile(bytes: out), verify: true)
        #expect(outcome.divergence == nil && outcome.engine.state.orientation == .landscapeRight)
    }
}

@Suite struct LoadTests {
    @Test("a load puts profile, app and state in place one seq on; state and app default sensibly")
    func loadsOneSeqOn() throws {
        var source = Engine(profile: .builtin, app: builtin("split"))
        try source.apply(.hinge(angle: 120))
        try source.apply(.inspector(presented: true))
        try source.apply(.orientation(.landscapeRight))
        var daemon = Engine(profile: .builtin, app: builtin("tabs"))
        try daemon.apply(.hinge(angle: 50))
        let request = LoadRequest(profile: source.profile, app: source.app, state: try stateJSON(source), digest: source.digest)
        var w = JSONWriter()
        request.write(to: &w, id: .string("l"))
        let decoded = try LoadRequest.decode(try JSON.parse(w.bytes))
        #expect(decoded == request)
        let loaded = try decoded.loaded(onto: daemon)
        #expect(loaded.seq == 2 && loaded.state == source.state && loaded.digest == source.digest && loaded.app.name == source.app.name)

        // The `state` reply's member, {"seq","state"}, loads as well; no app keeps the daemon's.
        let wrapped = try JSON.parse(daemon.stateJSON())
        let same = try LoadRequest(state: wrapped).loaded(onto: daemon)
        #expect(same.digest == daemon.digest && same.seq == 2 && same.app.name == "Trailhead")
        // Neither state nor app: the app's default state, as a fresh daemon has it.
        #expect(try LoadRequest().loaded(onto: daemon).digest == Engine(profile: .builtin, app: builtin("tabs")).digest)
    }

    @Test("a load whose digest is not the one asked for is refused, naming both; nothing changes")
    func wrongDigestIsRefused() throws {
        let daemon = Engine(profile: .builtin, app: builtin("tabs"))
        var open = daemon
        try open.apply(.hinge(angle: 180))
        let error = try #require(inputError { _ = try LoadRequest(state: try stateJSON(open), digest: daemon.digest).loaded(onto: daemon) })
        #expect(error.code == .digestMismatch && error.field == "digest")
        #expect(error.message.contains(Digest.hex(open.digest)) && error.message.contains(Digest.hex(daemon.digest)))
    }

    @Test("bad states are refused naming the field", arguments: [
        (#""hingeAngle":0"#, #""hingeAngle":400"#, "state.hingeAngle"),
        (#""pip":false"#, #""pip":false,"wifi":true"#, "state.wifi"),
        (#""display":"outer""#, #""display":"inner""#, "state.display"),
        (#""pose":"closed","display":"outer""#, #""pose":"fullyOpen","display":"inner""#, "state.pose"),
        (#""sheet":null"#, #""sheet":"nope""#, "state.ui.sheet"),
    ])
    func badStates(original: String, replacement: String, field: String) throws {
        let daemon = Engine(profile: .builtin, app: builtin("tabs"))
        let text = String(decoding: daemon.state.jsonBytes(app: daemon.app), as: UTF8.self)
        #expect(text.contains(original))
        let state = try JSON.parse(Array(text.replacingFirst(original, with: replacement).utf8))
        let error = inputError { _ = try LoadRequest.decode(.object([("cmd", .string("load")), ("state", state)])).loaded(onto: daemon) }
        #expect(error?.field == field, "\(String(describing: error))")
    }

    @Test("unknown members of the command are refused")
    func unknownMembers() throws {
        #expect(throws: InputError.self) { try LoadRequest.decode(try json(#"{"cmd":"load","stat":{}}"#)) }
        #expect(throws: InputError.self) { try LoadRequest.decode(try json(#"{"cmd":"load","digest":"xyz"}"#)) }
    }

    @Test("a load record round-trips, replays to its digest, is followed by events, survives a slice and shows in trace info")
    func loadRecordReplays() throws {
        var engine = Engine(profile: .builtin, app: builtin("tabs"))
        var out = TraceHeader(daemon: "creased test", started: "x", part: 0, reason: "start", config: .object([]), layouts: false,
                              monotonicOrigin: nil, t: 0, engine: engine).encode() + [0x0A]
        func event(_ ev: Event, t: UInt64) throws {
            try engine.apply(ev)
            TraceEncoding.appendEvent(TraceEvent(seq: engine.seq, t: t, client: 1, envelope: EventEnvelope(event: ev), digest: engine.digest), to: &out)
        }
        try event(.hinge(angle: 90), t: 10)
        var target = Engine(profile: .builtin, app: builtin("split"))
        try target.apply(.hinge(angle: 170))
        try target.apply(.orientation(.landscapeRight))
        engine = try LoadRequest(profile: target.profile, app: target.app, state: try stateJSON(target)).loaded(onto: engine)
        let load = TraceLoad(seq: engine.seq, t: 20, client: 2, engine: engine)
        TraceEncoding.appendLoad(load, to: &out)
        try event(.inspector(presented: true), t: 30)
        try event(.orientation(.landscapeLeft), t: 40)

        let file = try TraceFile(bytes: out)
        var cursor = file.cursor()
        _ = try cursor.next()
        #expect(try cursor.next()?.record == .load(load))
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil && outcome.engine.digest == engine.digest && outcome.engine.seq == 4)

        let slice = try TraceSlice.slice(file, from: 2, to: 4)
        let sliced = try TraceFile(bytes: slice.bytes)
        #expect(try TraceReplay.run(sliced, verify: true).engine.digest == engine.digest)
        let info = try TraceInfo.summarize(file)
        #expect(info.loads.count == 1 && info.loads[0].seq == 2 && info.loads[0].app == target.app.name && info.events == 3)

        // A load record whose state does not give its digest is a divergence.
        let tampered = String(decoding: out, as: UTF8.self).replacingFirst(#""orientation":"landscapeRight""#, with: #""orientation":"portrait""#)
        let d = try TraceReplay.run(try TraceFile(bytes: Array(tampered.utf8)), verify: true).divergence
        #expect(d?.kind == .loadDigest && d?.seq == 2)
    }
}

@Suite struct TraceLatencyAndLabelTests {
    @Test("an event record carries the daemon's latency; the fast path and the general decoder read it alike")
    func latencyField() throws {
        var out: [UInt8] = []
        let line = #"{"event":"hinge","angle":91.5,"ts":77}"#
        Array(line.utf8).withUnsafeBytes {
            TraceEncoding.appendEvent(seq: 3, t: 900, client: 2, event: $0, digest: 0xABCD, latencyNs: 41_250, to: &out)
        }
        let text = String(decoding: out.dropLast(), as: UTF8.self)
        #expect(text.hasSuffix(#","digest":"000000000000abcd","latencyNs":41250}"#))
        let fast = try #require(out.dropLast().withUnsafeBufferPointer { TraceFastPath.hingeEvent($0) })
        let general = try TraceRecord.decode(try JSON.parse(out.dropLast()))
        #expect(.event(fast) == general && fast.latencyNs == 41_250)
        // Without the field both read nil, as in traces recorded before it.
        var old: [UInt8] = []
        Array(line.utf8).withUnsafeBytes { TraceEncoding.appendEvent(seq: 3, t: 900, client: 2, event: $0, digest: 0xABCD, to: &old) }
        #expect(old.dropLast().withUnsafeBufferPointer { TraceFastPath.hingeEvent($0) }?.latencyNs == nil)
        #expect(throws: InputError.self) { try TraceRecord.decode(try json(text.replacingFirst("41250", with: "-1"))) }
    }

    @Test("trace info gives percentiles of the recorded latency next to the transport latency")
    func infoShowsBoth() throws {
        var engine = Engine(profile: .builtin, app: builtin("tabs"))
        var out = TraceHeader(daemon: "creased test", started: "x", part: 0, reason: "start", config: .object([]), layouts: false,
                              monotonicOrigin: 1_000_000, t: 0, engine: engine).encode() + [0x0A]
        for i in 1...100 {
            try engine.apply(.hinge(angle: Double(i)))
            TraceEncoding.appendEvent(TraceEvent(seq: i, t: UInt64(i * 1000), client: 1,
                                                 envelope: EventEnvelope(event: .hinge(angle: Double(i)), ts: Int64(1_000_000 + i * 1000 - 300)),
                                                 digest: engine.digest, latencyNs: UInt64(i * 10)), to: &out)
        }
        let s = try TraceInfo.summarize(try TraceFile(bytes: out))
        #expect(s.relayoutLatency == Percentiles((1...100).map { UInt64($0 * 10) }))
        #expect(s.relayoutLatency?.p50 == 500 && s.relayoutLatency?.max == 1000)
        #expect(s.transportLatency?.p50 == 300)
    }

    @Test("labels: keys are checked, order is kept, headers carry them only when there are some")
    func labels() throws {
        let l = try Label(parsing: "serial=F2LX=91")
        #expect(l.key == "serial" && l.value == "F2LX=91")
        for bad in ["noequals", "=v", "9rig=a", "rig id=a", "rig=a\u{7}b", "k=" + String(repeating: "x", count: 257),
                    String(repeating: "k", count: 65) + "=v"] {
            #expect(throws: InputError.self, "\(bad)") { try Label(parsing: bad) }
        }
        let engine = Engine(profile: .builtin, app: builtin("tabs"))
        let labels = [try Label(parsing: "rig=bench-3"), try Label(parsing: "build=27A5300"), try Label(parsing: "app.version=1.4")]
        let header = TraceHeader(daemon: "creased test", started: "x", part: 0, reason: "start", labels: labels, config: .object([]),
                                 layouts: false, monotonicOrigin: nil, t: 0, engine: engine)
        let bytes = header.encode()
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""labels":{"rig":"bench-3","build":"27A5300","app.version":"1.4"}"#))
        #expect(try TraceHeader.decode(bytes[...]) == header)
        var plain = header
        plain.labels = []
        #expect(!String(decoding: plain.encode(), as: UTF8.self).contains("labels"))
        let slice = try TraceSlice.slice(try TraceFile(bytes: try recordTraceWithLabels(labels)), from: 2, to: 3)
        #expect(try TraceFile(bytes: slice.bytes).header.labels == labels)
    }

    private func recordTraceWithLabels(_ labels: [Label]) throws -> [UInt8] {
        var engine = Engine(profile: .builtin, app: builtin("tabs"))
        var out = TraceHeader(daemon: "creased test", started: "x", part: 0, reason: "start", labels: labels, config: .object([]),
                              layouts: false, monotonicOrigin: nil, t: 0, engine: engine).encode() + [0x0A]
        for i in 1...4 {
            try engine.apply(.hinge(angle: Double(i * 40)))
            TraceEncoding.appendEvent(TraceEvent(seq: i, t: UInt64(i), client: 1, envelope: EventEnvelope(event: .hinge(angle: Double(i * 40))),
                                                 digest: engine.digest), to: &out)
        }
        return out
    }
}
