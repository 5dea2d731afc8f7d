import Testing
@testable import CreaseCore

/// Delta debugging as a pure function, the layout decoder it relies on for outside layouts,
/// and the trace pieces of `crease trace minimize`.
@Suite struct MinimizeTests {
    @Test func ddminFindsThePairThatMattersAmongAHundred() {
        var tests = 0
        let result = DeltaDebugging.minimize(Array(0..<100)) { (c: [Int]) -> Bool in
            tests += 1
            return c.contains(17) && c.contains(63)
        }
        #expect(result == [17, 63])
        #expect(tests < 200, "\(tests) tests")
    }

    @Test func ddminIsOneMinimalAndKeepsOrder() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<50 {
            let needed = (0..<Int(rng.next() % 4 + 1)).map { _ in Int(rng.next() % 60) }
            let test: ([Int]) -> Bool = { c in needed.allSatisfy(c.contains) }
            let result = DeltaDebugging.minimize(Array(0..<60), test: test)
            #expect(test(result))
            #expect(result == result.sorted())
            for i in result.indices {
                var fewer = result
                fewer.remove(at: i)
                #expect(!test(fewer), "removing \(result[i]) from \(result) still passes")
            }
        }
    }

    @Test func ddminTriesTheEmptyListFirstAndLeavesAFailingListAlone() {
        #expect(DeltaDebugging.minimize([1, 2, 3]) { (_: [Int]) in true } == [])
        #expect(DeltaDebugging.minimize([1, 2, 3]) { (_: [Int]) in false } == [1, 2, 3])
        #expect(DeltaDebugging.split(10, into: 3) == [0..<3, 3..<6, 6..<10])
    }

    @Test func ddminReportsProgressAndPassesErrorsThrough() {
        struct Stop: Error {}
        var sizes: [Int] = []
        _ = DeltaDebugging.minimize(Array(0..<64), progress: { sizes.append($0.size) }) { (c: [Int]) in c.contains(5) }
        #expect(sizes.last == 1 && sizes == sizes.sorted(by: >=))
        #expect(throws: Stop.self) { try DeltaDebugging.minimize([1, 2]) { (_: [Int]) throws(Stop) -> Bool in throw Stop() } }
    }

    // MARK: layouts read back

    /// Values read back are the printed ones (to 1/100 pt), so the bytes are what must agree.
    @Test("a layout line reads back to the same bytes", arguments: BuiltinApps.names)
    func layoutsReadBack(app name: String) throws {
        let a = builtin(name)
        var gen = RandomEvents(seed: 99, app: a)
        var e = Engine(profile: .builtin, app: a)
        for _ in 0..<400 {
            guard (try? e.apply(gen.next())) != nil else { continue }
            let line = try Layout.decodeLine(try JSON.parse(e.layoutJSON()))
            #expect(line.seq == e.seq && line.digest == Digest.hex(e.digest))
            #expect(Layout.assemble(seq: e.seq, digest: e.digest, body: line.layout.encodeBody()) == e.layoutJSON())
        }
    }

    @Test func aLayoutWithAnUnknownOrMissingMemberIsRefusedByName() throws {
        let text = String(decoding: Engine(app: builtin("tabs")).layoutJSON(), as: UTF8.self)
        func error(_ s: String) -> InputError? {
            do { _ = try Layout.decodeLine(try JSON.parse(Array(s.utf8))) } catch let e as InputError { return e } catch { return nil }
            return nil
        }
        #expect(error(text.replacing(#""barAxis""#, with: #""barAxes""#, maxReplacements: 1))?.field == "barAxes")
        #expect(error(text.replacing(#""w":466"#, with: #""w":"wide""#, maxReplacements: 1))?.field == "device.window.w")
        #expect(error(text.replacing(#""pose":"closed""#, with: #""pose":"ajar""#, maxReplacements: 1))?.field == "device.pose")
        #expect(error(text.replacing(#""shows":"title""#, with: #""shows":"none""#, maxReplacements: 1))?.field == "bars[0].items[0].shows")
    }

    // MARK: trace pieces

    static func header(_ app: App = builtin("tabs")) -> TraceHeader {
        TraceHeader(daemon: "test", started: "2026-11-30T00:00:00Z", part: 0, reason: "start", config: .object([("budgetUs", .number(1000))]),
                    layouts: false, monotonicOrigin: nil, t: 0, engine: Engine(app: app))
    }

    static func events(_ list: [Event]) -> [TraceEvent] {
        list.enumerated().map { TraceEvent(seq: $0.offset + 1, t: UInt64($0.offset) * 1_000_000, client: 1, envelope: EventEnvelope(event: $0.element), digest: 0) }
    }

    @Test func aCandidateIsASelfContainedTraceThatVerifies() throws {
        let h = Self.header()
        let all = Self.events([.hinge(angle: 90), .orientation(.landscapeLeft), .keyboard(visible: true, height: nil), .hinge(angle: 0)])
        let bytes = try #require(TraceMinimize.encode(header: h, events: [all[1], all[3]]))
        let file = try TraceFile(bytes: bytes)
        #expect(file.header.reason == "minimize" && file.header.initialState == h.initialState)
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil && outcome.eventsApplied == 2)
        // An event that cannot apply without the ones removed makes no candidate.
        let pushed = Self.events([.push(screen: "trailDetail"), .pop])
        #expect(TraceMinimize.encode(header: h, events: [pushed[1]]) == nil)
        #expect(TraceMinimize.glitches(header: h, events: [pushed[1]], options: GlitchOptions()) == nil)
    }

    @Test func divergingFromAnotherBuildShrinksToTheEventThatReachesTheState() throws {
        // The other build laid out the fully open pose differently: its trace records other digests there.
        let h = Self.header()
        var engine = h.makeEngine()
        var other = h.encode() + [0x0A]
        let angles: [Double] = [10, 40, 90, 120, 150, 170, 175, 120, 60, 5]
        for (i, a) in angles.enumerated() {
            try engine.apply(.hinge(angle: a))
            let digest = engine.state.pose == .fullyOpen ? ~engine.digest : engine.digest
            TraceEncoding.appendEvent(TraceEvent(seq: i + 1, t: UInt64(i) * 1_000, client: 1, envelope: EventEnvelope(event: .hinge(angle: a)), digest: digest),
                                      to: &other)
        }
        let digests = try OtherBuildDigests(other: try TraceFile(bytes: other), header: h)
        let events = Self.events(angles.map { .hinge(angle: $0) })
        #expect(digests.diverges(header: h, events: events))
        #expect(!digests.diverges(header: h, events: Array(events.prefix(5))))
        let minimal = DeltaDebugging.minimize(events) { digests.diverges(header: h, events: $0) }
        #expect(minimal.count == 1, "\(minimal)")
        #expect(minimal.allSatisfy { $0.envelope.event == .hinge(angle: 170) || $0.envelope.event == .hinge(angle: 175) }, "one event that opens the hinge fully")
    }
}
