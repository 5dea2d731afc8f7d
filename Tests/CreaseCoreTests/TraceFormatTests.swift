import Testing
@testable import CreaseCore

/// Builds a trace in memory the way the daemon's writer does: a header, then per event
/// its record (and its layout when it changed, with `layouts`), a mark and a batch.
func recordTrace(app: App = BuiltinApps.app(named: "tabs")!, events: [Event], layouts: Bool = false,
                 ts: Bool = true, start: Engine? = nil) throws -> [UInt8] {
    var engine = start ?? Engine(profile: .builtin, app: app)
    var out = TraceHeader(daemon: "creased test", started: "2026-01-01T00:00:00.000Z", part: 0, reason: "start",
                          config: .object([("budgetUs", .number(1000))]), layouts: layouts, monotonicOrigin: 1_000_000,
                          t: 0, engine: engine).encode()
    out.append(0x0A)
    for (i, event) in events.enumerated() {
        let before = engine.digest
        try engine.apply(event)
        var w = JSONWriter()
        event.write(to: &w, ts: ts ? Int64(1_000_000 + i * 1000) : nil)
        w.bytes.withUnsafeBytes {
            TraceEncoding.appendEvent(seq: engine.seq, t: UInt64(i * 1000 + 500), client: 1, event: $0, digest: engine.digest, to: &out)
        }
        if layouts, engine.digest != before { TraceEncoding.appendLayout(seq: engine.seq, layout: engine.layoutJSON(), to: &out) }
        if i == 2 { TraceEncoding.appendMark(seq: engine.seq, t: UInt64(i * 1000 + 700), label: "a \"quoted\" mark", to: &out) }
        if i == 4 { TraceEncoding.appendBatch(first: 4, last: 5, to: &out) }
    }
    return out
}

let sampleEvents: [Event] = [
    .hinge(angle: 10), .hinge(angle: 25.5), .hinge(angle: 91.37), .orientation(.landscapeLeft), .keyboard(visible: true, height: nil),
    .liveActivities(count: 2), .hinge(angle: 170), .select(tab: "plan"), .splitView(.left), .layoutDirection(.rtl),
    .hinge(angle: 3), .select(tab: "browse"), .present(sheet: "trailInfo"),
]

@Suite struct TraceFormatTests {
    @Test func headerRoundTripsAndRebuildsTheEngine() throws {
        var engine = Engine(profile: .builtin, app: BuiltinApps.app(named: "split")!)
        try engine.apply(.hinge(angle: 120))
        try engine.apply(.inspector(presented: true))
        let header = TraceHeader(daemon: "creased 9", started: "x", part: 3, reason: "size", config: .object([]), layouts: true,
                                 monotonicOrigin: 12_345_678_901_234, t: 42, engine: engine)
        let decoded = try TraceHeader.decode(header.encode()[...])
        #expect(decoded == header)
        #expect(decoded.makeEngine().layoutJSON() == engine.layoutJSON())
        #expect(decoded.initialSeq == 2 && decoded.initialT == 42 && decoded.part == 3)
    }

    @Test func unknownVersionIsRefusedClearly() throws {
        var header = try recordTrace(events: [])
        let text = String(decoding: header, as: UTF8.self).replacingFirst(#""version":4"#, with: #""version":5"#)
        header = Array(text.utf8)
        #expect(throws: TraceError("trace format version 5 is not supported: this crease reads versions 1, 2, 3 and 4", line: 1, offset: 0)) {
            try TraceFile(bytes: header)
        }
        #expect(throws: TraceError.self) { try TraceFile(bytes: Array(#"{"event":"hinge","angle":3}"#.utf8) + [0x0A]) }
        do {
            _ = try TraceFile(bytes: Array(#"{"crease":"trace","version":1,"#.utf8))
            Issue.record("a header without its newline must be refused")
        } catch {
            #expect(error.message.contains("incomplete"))
        }
    }

    @Test("version-1, -2 and -3 traces hold FNV-1a, crease64 and crease64x4 digests, and they still verify; version 4 holds crease64v")
    func olderTracesVerifyWithTheirDigests() throws {
        let v1Start = Engine(profile: .builtin, app: builtin("tabs"), digestAlgorithm: .fnv1a64)
        let v1 = try TraceFile(bytes: try recordTrace(events: sampleEvents, layouts: true, start: v1Start))
        #expect(v1.header.version == 1 && v1.header.digestAlgorithm == .fnv1a64)
        #expect(v1.header.initialDigest == Digest.fnv1a(v1Start.body))
        let replayed = try TraceReplay.run(v1, verify: true)
        #expect(replayed.divergence == nil, "\(replayed.divergence?.summary ?? "")")
        #expect(replayed.eventsApplied == sampleEvents.count)
        #expect(replayed.engine.digest == Digest.fnv1a(replayed.engine.body))

        var bodies = [replayed.engine.body], digests = [replayed.engine.digest]
        for (version, algorithm) in [(2, DigestAlgorithm.crease64), (3, .crease64x4)] {
            let start = Engine(profile: .builtin, app: builtin("tabs"), digestAlgorithm: algorithm)
            let file = try TraceFile(bytes: try recordTrace(events: sampleEvents, layouts: true, start: start))
            #expect(file.header.version == version && file.header.digestAlgorithm == algorithm)
            let again = try TraceReplay.run(file, verify: true)
            #expect(again.divergence == nil && again.engine.digest == algorithm.digest(again.engine.body), "version \(version)")
            bodies.append(again.engine.body)
            digests.append(again.engine.digest)
        }

        let v4 = try TraceFile(bytes: try recordTrace(events: sampleEvents, layouts: true))
        #expect(v4.header.version == TraceHeader.currentVersion && v4.header.digestAlgorithm == .crease64v)
        let v4Replayed = try TraceReplay.run(v4, verify: true)
        #expect(v4Replayed.divergence == nil && v4Replayed.engine.digest == Digest.crease64v(v4Replayed.engine.body))
        // The same layouts, byte for byte: only the digest differs.
        #expect(bodies.allSatisfy { $0 == v4Replayed.engine.body })
        #expect(Set(digests + [v4Replayed.engine.digest]).count == 4)

        // An older version's header over crease64v records diverges at its initial digest.
        for older in ["1", "2", "3"] {
            let relabeled = String(decoding: try recordTrace(events: sampleEvents), as: UTF8.self)
                .replacingFirst(#""version":4"#, with: #""version":\#(older)"#)
            let wrong = try TraceReplay.run(try TraceFile(bytes: Array(relabeled.utf8)), verify: true)
            #expect(wrong.divergence?.kind == .initialDigest)
        }

        // A slice of a version-1 trace stays version 1 and verifies.
        let slice = try TraceSlice.slice(v1, from: 3, to: 8)
        let sliced = try TraceFile(bytes: slice.bytes)
        #expect(sliced.header.version == 1)
        #expect(try TraceReplay.run(sliced, verify: true).divergence == nil)
    }

    @Test("an event record at its widest, and without its optional fields, byte for byte")
    func eventRecordBytes() {
        let line = Array(" {\"event\":\"hinge\",\"angle\":90}\r\n".utf8)   // the whitespace around it is dropped
        var out: [UInt8] = []
        line.withUnsafeBytes {
            TraceEncoding.appendEvent(seq: .max, t: .max, client: .max, event: $0, digest: .max, latencyNs: .max, to: &out)
        }
        #expect(String(decoding: out, as: UTF8.self)
                == #"{"seq":9223372036854775807,"t":18446744073709551615,"client":9223372036854775807,"event":{"event":"hinge","angle":90},"digest":"ffffffffffffffff","latencyNs":18446744073709551615}"# + "\n")
        out = [0x41]   // appends after what is there
        line.withUnsafeBytes { TraceEncoding.appendEvent(seq: 0, t: 0, client: nil, event: $0, digest: 0xAB, to: &out) }
        #expect(String(decoding: out, as: UTF8.self)
                == #"A{"seq":0,"t":0,"event":{"event":"hinge","angle":90},"digest":"00000000000000ab"}"# + "\n")
    }

    @Test("an event record's length, counted without writing it, is the length written, at every digit count")
    func eventRecordLengthMatchesTheRecord() {
        let line = Array(" {\"event\":\"hinge\",\"angle\":90}\n".utf8)
        let trimmed = line.count - 2
        // Every power of ten and its neighbours, where the digit count changes, and the extremes.
        var unsigned: [UInt64] = [0, .max, .max - 1]
        var power: UInt64 = 1
        for _ in 0..<20 {
            unsigned += [power - 1, power, power + 1]
            if power > UInt64.max / 10 { break }
            power *= 10
        }
        let signed: [Int] = unsigned.map { Int(truncatingIfNeeded: $0 & UInt64(Int.max)) } + [-1, -10, -999, .min]
        for (i, u) in unsigned.enumerated() {
            let s = signed[(i * 7) % signed.count], c = signed[(i * 3 + 1) % signed.count]
            for client in [c, nil] as [Int?] {
                for latency in [u, nil] as [UInt64?] {
                    var out: [UInt8] = []
                    line.withUnsafeBytes { TraceEncoding.appendEvent(seq: s, t: u, client: client, event: $0, digest: u, latencyNs: latency, to: &out) }
                    #expect(TraceEncoding.eventRecordLength(seq: s, t: u, client: client, eventBytes: trimmed, latencyNs: latency) == out.count,
                            "seq \(s), t \(u), client \(String(describing: client)), latency \(String(describing: latency))")
                }
            }
        }
    }

    @Test func everyRecordKindRoundTrips() throws {
        let engine = try { () throws in var e = Engine(profile: .builtin, app: BuiltinApps.app(named: "tabs")!); try e.apply(.hinge(angle: 90)); return e }()
        let records: [TraceRecord] = [
            .event(TraceEvent(seq: 7, t: 123, client: 2, envelope: EventEnvelope(event: .keyboard(visible: true, height: 300), ts: -5, id: .string("k")), digest: 0xdead_beef)),
            .event(TraceEvent(seq: 8, t: 124, client: nil, envelope: EventEnvelope(event: .pop), digest: 1)),
            .mark(seq: 8, t: 125, label: "line\nbreak \"q\""),
            .batch(first: 3, last: 8),
            .layout(seq: 8, json: engine.layoutJSON()),
            .gap(TraceGap(seq: 9, t: 130, lost: 4, reason: "write: No space left on device",
                          state: try JSON.parse(engine.state.jsonBytes(app: engine.app)), digest: engine.digest)),
            .frame(seq: 9, t: 140, client: 3, verdict: FrameVerdict(kind: .flash, t: 131, refSeq: 8, frame: 127,
                                                                   region: Rect(x: 8, y: 37.5, w: 653, h: 40))),
            .frame(seq: 9, t: 141, client: nil, verdict: FrameVerdict(kind: .lateRelayout, t: 135, refSeq: 9, frame: 130, relayoutMs: 412.5)),
        ]
        for r in records {
            var bytes: [UInt8] = []
            TraceEncoding.appendRecord(r, to: &bytes)
            #expect(bytes.last == 0x0A)
            #expect(bytes.dropLast().contains(0x0A) == false, "one record, one line")
            let decoded = try bytes.dropLast().withUnsafeBufferPointer { try TraceRecord.decode($0) }
            #expect(decoded == r)
        }
    }

    @Test func hingeFastPathAgreesWithTheGeneralDecoder() throws {
        var rng = CreaseCore.SplitMix64(seed: 9)
        var lines: [String] = [
            #"{"seq":1,"t":0,"client":0,"event":{"event":"hinge","angle":0},"digest":"0000000000000000"}"#,
            #"{"seq":12,"t":99,"client":3,"event":{"event":"hinge","angle":180,"ts":-42},"digest":"ABCDEFabcdef0123"}"#,
            #"{"seq":12,"t":99,"client":3,"event":{"event":"hinge","angle":1e2,"ts":7},"digest":"abcdefabcdef0123"}"#,
        ]
        for i in 0..<200 {
            let angle = (rng.unit() * 18000).rounded() / 100
            lines.append(#"{"seq":\#(i + 1),"t":\#(rng.next() >> 20),"client":\#(i % 5),"event":{"event":"hinge","angle":\#(angle),"ts":\#(rng.next() >> 12)},"digest":"\#(Digest.hex(rng.next()))"}"#)
        }
        for line in lines {
            let bytes = Array(line.utf8)
            let fast = bytes.withUnsafeBufferPointer { TraceFastPath.hingeEvent($0) }
            let general = try TraceRecord.decode(try JSON.parse(bytes))
            #expect(fast != nil, "\(line)")
            #expect(fast.map(TraceRecord.event) == general, "\(line)")
        }
        // Shapes the fast path leaves to the general decoder, which must then decide.
        let declined = [
            #"{"seq":1,"t":0,"client":0,"event":{"event":"hinge","angle":-0},"digest":"0000000000000000"}"#,
            #"{"seq":1,"t":0,"client":0,"event":{"event":"hinge","angle":9,"id":4},"digest":"0000000000000000"}"#,
            #"{"seq":01,"t":0,"client":0,"event":{"event":"hinge","angle":9},"digest":"0000000000000000"}"#,
            #"{"seq":1,"t":0,"client":0,"event":{"event":"hinge","angle":180.5},"digest":"0000000000000000"}"#,
            #"{"seq":1,"t":0,"client":0,"event":{"event":"hinge","angle":9},"digest":"000000000000000"}"#,
            #"{"seq":1,"t":0,"client":0,"event":{"event":"hinge","angle":9},"digest":"0000000000000000"} "#,
        ]
        for line in declined {
            #expect(Array(line.utf8).withUnsafeBufferPointer { TraceFastPath.hingeEvent($0) } == nil, "\(line)")
        }
        let negativeZero = try TraceRecord.decode(try JSON.parse(Array(declined[0].utf8)))
        #expect(negativeZero == .event(TraceEvent(seq: 1, t: 0, client: 0, envelope: EventEnvelope(event: .hinge(angle: 0)), digest: 0)))
        // 180.5 is an encoder's overshoot: the full decoder takes it (the engine clamps it);
        // past any tolerance a profile may have, it is refused.
        #expect(try TraceRecord.decode(try JSON.parse(Array(declined[3].utf8))) == .event(TraceEvent(seq: 1, t: 0, client: 0, envelope: EventEnvelope(event: .hinge(angle: 180.5)), digest: 0)))
        #expect(throws: InputError.self) { try TraceRecord.decode(try JSON.parse(Array(declined[3].utf8.map { $0 }).replacing(Array("180.5".utf8), with: Array("300".utf8)))) }
    }

    @Test func aRecordedTraceVerifies() throws {
        let file = try TraceFile(bytes: try recordTrace(events: sampleEvents, layouts: true))
        #expect(file.cut == nil)
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil)
        #expect(outcome.eventsApplied == sampleEvents.count)
        #expect(outcome.engine.layoutJSON() == (try engine(builtin("tabs"), sampleEvents)).layoutJSON())
    }

    @Test func aTraceCutAtEveryByteOfItsLastRecordsReplaysToItsLastCompleteRecord() throws {
        let bytes = try recordTrace(events: sampleEvents)
        // Line starts, and how many events are complete once each line is.
        var lineEnds: [(end: Int, events: Int)] = []
        var events = 0
        for (i, b) in bytes.enumerated() where b == 0x0A {
            let start = (lineEnds.last?.end ?? 0)
            if bytes[start..<i].starts(with: Array(#"{"seq":"#.utf8)), String(decoding: bytes[start..<i], as: UTF8.self).contains(#","event":"#) { events += 1 }
            lineEnds.append((i + 1, events))
        }
        let firstCut = lineEnds[lineEnds.count - 5].end
        for cut in firstCut...bytes.count {
            let file = try TraceFile(bytes: Array(bytes[..<cut]))
            let complete = lineEnds.last { $0.end <= cut }!
            let outcome = try TraceReplay.run(file, verify: true)
            #expect(outcome.divergence == nil)
            #expect(outcome.eventsApplied == complete.events, "cut at \(cut)")
            if cut == complete.end {
                #expect(file.cut == nil)
            } else {
                #expect(file.cut?.offset == complete.end, "cut at \(cut)")
                #expect(file.cutWarning?.contains("byte \(complete.end)") == true)
            }
        }
    }

    @Test func aDamagedLineInTheMiddleIsAnErrorNamingItsLine() throws {
        var lines = String(decoding: try recordTrace(events: sampleEvents), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[4] = String(lines[4].prefix(30))
        let text = lines.joined(separator: "\n")
        let file = try TraceFile(bytes: Array(text.utf8))
        let offset = lines[0..<4].reduce(0) { $0 + $1.utf8.count + 1 }
        #expect(throws: TraceError.self) { try TraceReplay.run(file, verify: true) }
        do { _ = try TraceReplay.run(file, verify: true) } catch {
            #expect(error.line == 5)
            #expect(error.offset == offset)
        }
    }

    @Test func verifyReportsTheFirstDivergenceWithTheLayoutDifference() throws {
        // Seq 4 turned the device to landscape; claim it was turned upside down instead:
        // the replay then lays out a portrait screen where the trace recorded a landscape one.
        let text = String(decoding: try recordTrace(events: sampleEvents, layouts: true), as: UTF8.self)
        let tampered = text.replacingFirst(#""value":"landscapeLeft""#, with: #""value":"portraitUpsideDown""#)
        let line = tampered.split(separator: "\n").firstIndex { $0.contains("portraitUpsideDown") }! + 1
        let outcome = try TraceReplay.run(try TraceFile(bytes: Array(tampered.utf8)), verify: true)
        let d = try #require(outcome.divergence)
        #expect(d.kind == .digest)
        #expect(d.seq == 4)
        #expect(d.line == line)
        #expect(d.event.map { String(decoding: $0, as: UTF8.self) } == #"{"event":"orientation","value":"portraitUpsideDown"}"#)
        #expect(d.differences.contains { $0.path == "device.orientation" && $0.expected == #""landscapeLeft""# && $0.actual == #""portraitUpsideDown""# })
        // Without recorded layouts the divergence is found all the same, with no field list.
        let bare = String(decoding: try recordTrace(events: sampleEvents), as: UTF8.self)
            .replacingFirst(#""value":"landscapeLeft""#, with: #""value":"portraitUpsideDown""#)
        let plain = try #require(try TraceReplay.run(try TraceFile(bytes: Array(bare.utf8)), verify: true).divergence)
        #expect(plain.seq == 4 && plain.differences.isEmpty)
    }

    @Test func aHeaderWhoseStateGivesAnotherLayoutIsCaught() throws {
        let text = String(decoding: try recordTrace(events: sampleEvents), as: UTF8.self)
        let tampered = text.replacingFirst(#""orientation":"portrait""#, with: #""orientation":"landscapeLeft""#)
        let outcome = try TraceReplay.run(try TraceFile(bytes: Array(tampered.utf8)), verify: true)
        #expect(outcome.divergence?.kind == .initialDigest)
    }

    @Test func aGapRecordResumesFromItsState() throws {
        let app = builtin("tabs")
        // The run applied all sample events; the trace lost events 5…8 and marks the gap with the state after 8.
        var live = Engine(profile: .builtin, app: app)
        var bytes = try recordTrace(events: Array(sampleEvents[0..<4]))
        for e in sampleEvents[0..<8] { try live.apply(e) }
        TraceEncoding.appendGap(engine: live, t: 9000, lost: 4, reason: "write: No space left on device", to: &bytes)
        for (i, e) in sampleEvents[8...].enumerated() {
            try live.apply(e)
            TraceEncoding.appendEvent(TraceEvent(seq: live.seq, t: UInt64(9001 + i), client: 1, envelope: EventEnvelope(event: e), digest: live.digest), to: &bytes)
        }
        let outcome = try TraceReplay.run(try TraceFile(bytes: bytes), verify: true)
        #expect(outcome.divergence == nil)
        #expect(outcome.engine.digest == live.digest)
        #expect(outcome.eventsApplied == sampleEvents.count - 4)
    }

    @Test func aSliceIsSelfContainedAndKeepsTheDigests() throws {
        let original = try TraceFile(bytes: try recordTrace(events: sampleEvents, layouts: true))
        let sliced = try TraceSlice.slice(original, from: 5, to: 9)
        #expect(sliced.events == 5)
        let file = try TraceFile(bytes: sliced.bytes)
        #expect(file.header.initialSeq == 4)
        #expect(file.header.reason == "slice")
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil)
        #expect(outcome.engine.layoutJSON() == (try engine(builtin("tabs"), Array(sampleEvents[0..<9]))).layoutJSON())
        // The batch [4, 5] began before the slice: it is cut to its part, which is a single event, so dropped.
        #expect(!String(decoding: sliced.bytes, as: UTF8.self).contains(#""batch""#))
        #expect(throws: TraceError.self) { try TraceSlice.slice(original, from: 0, to: 3) }
        #expect(throws: TraceError.self) { try TraceSlice.slice(original, from: 40, to: 50) }
    }

    @Test func diffFindsTheFirstDivergence() throws {
        let a = try TraceFile(bytes: try recordTrace(events: sampleEvents))
        #expect(try TraceDiff.compare(a, a).identical)
        var changed = sampleEvents
        changed[6] = .hinge(angle: 100)
        let b = try TraceFile(bytes: try recordTrace(events: changed))
        let c = try TraceDiff.compare(a, b)
        let p = try #require(c.divergence)
        #expect(p.kind == .event)
        #expect(p.seqA == 7 && p.seqB == 7)
        #expect(c.eventsCompared == 6)
        #expect(p.layoutDifferences.contains { $0.path == "device.pose" })
        let shorter = try TraceFile(bytes: try recordTrace(events: Array(sampleEvents.prefix(5))))
        #expect(try TraceDiff.compare(a, shorter).divergence?.kind == .bEnded)
    }

    @Test func infoCountsAndFollowsThePose() throws {
        let s = try TraceInfo.summarize(try TraceFile(bytes: try recordTrace(events: sampleEvents, layouts: true)))
        #expect(s.events == sampleEvents.count)
        #expect(s.eventsByType.first! == ("hinge", 5))
        #expect(s.marks.map(\.label) == [#"a "quoted" mark"#])
        #expect(s.batches == 1 && s.largestBatch == 2)
        #expect(s.poseTimeline.map(\.pose) == [.closed, .partiallyOpen, .fullyOpen, .closed])
        #expect(s.interArrival?.p50 == 1000)
        // ts = origin + t − 500 + … : the recorder stamps each event 500 ns + i·… before it is read.
        #expect(s.transportLatency != nil)
    }

    @Test func chromeExportIsTraceEventJSON() throws {
        let bytes = try ChromeExport.export(try TraceFile(bytes: try recordTrace(events: sampleEvents)))
        let value = try JSON.parse(bytes)
        guard case .array(let events)? = value["traceEvents"] else { Issue.record("no traceEvents"); return }
        let poses = events.filter { $0["tid"] == .number(2) && $0["ph"] == .string("X") }.compactMap { $0["name"] }
        #expect(poses == [.string("closed"), .string("partiallyOpen"), .string("fullyOpen"), .string("closed")])
        #expect(events.contains { $0["name"] == .string(#"a "quoted" mark"#) })
        #expect(events.filter { $0["tid"] == .number(1) }.count == sampleEvents.count + 1)
    }

    /// `crease gen --seconds 3600` once built the whole stream before its first byte: streamed
    /// in chunks, every scenario gives the same events and looks as generated whole.
    @Test func aStreamedScenarioEqualsTheWholeOne() {
        for scenario in GenScenario.allCases {
            let whole = EventGenerator.generateWithLooks(scenario, seed: 9, rateHz: 800, seconds: 0.7)
            var events: [GeneratedEvent] = [], looks: [GeneratedLook] = []
            var chunks = 0
            EventGenerator.stream(scenario, seed: 9, rateHz: 800, seconds: 0.7, chunk: 37) { e, l in
                #expect(e.count <= 37)
                events += e
                looks += l
                chunks += 1
            }
            #expect(events == whole.events && looks == whole.looks, "\(scenario)")
            #expect(chunks >= whole.events.count / 37, "\(scenario)")
        }
    }

    @Test func theGeneratorIsDeterministicAndEveryScenarioApplies() throws {
        for scenario in GenScenario.allCases {
            let a = EventGenerator.generate(scenario, seed: 5, rateHz: 500, seconds: 0.5)
            #expect(a == EventGenerator.generate(scenario, seed: 5, rateHz: 500, seconds: 0.5), "\(scenario)")
            #expect(a != EventGenerator.generate(scenario, seed: 6, rateHz: 500, seconds: 0.5), "\(scenario)")
            #expect(zip(a, a.dropFirst()).allSatisfy { $0.offsetNs <= $1.offsetNs })
            var e = Engine(profile: .builtin, app: builtin("tabs"))
            for g in a { try e.apply(g.event, at: Int64(g.offsetNs)) }
        }
        // The IMU scenario turns the interface to landscape and back, flat and locked in between.
        let imu = EventGenerator.generate(.imu, seed: 21, rateHz: 500, seconds: 4)
        var turning = Engine(profile: .builtin, app: builtin("tabs"))
        var orientations: [Orientation] = [turning.state.orientation]
        for g in imu {
            try turning.apply(g.event, at: Int64(g.offsetNs))
            if turning.state.orientation != orientations.last { orientations.append(turning.state.orientation) }
        }
        #expect(orientations == [.portrait, .landscapeRight, .portrait, .landscapeRight])
        // Noise around the thresholds crosses them but the pose does not flap.
        let unfold = EventGenerator.generate(.unfold, seed: 1, rateHz: 1000, seconds: 2)
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        var poses: [Pose] = [e.layout.device.pose]
        for g in unfold {
            try e.apply(g.event)
            if e.layout.device.pose != poses.last { poses.append(e.layout.device.pose) }
        }
        #expect(poses == [.closed, .partiallyOpen, .fullyOpen])
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        let bytes = Array(utf8), t = Array(target.utf8)
        guard t.count <= bytes.count, let i = (0...(bytes.count - t.count)).first(where: { bytes[$0..<($0 + t.count)].elementsEqual(t) }) else { return self }
        return String(decoding: bytes[..<i] + Array(replacement.utf8) + bytes[(i + t.count)...], as: UTF8.self)
    }
}
