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
            guard (try? e.apply(gen.next(), at: gen.time)) != nil else { continue }
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
        #expect(TraceMinimize.run(header: h, steps: [.event(pushed[1])], glitches: GlitchOptions()) == nil)
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

    // MARK: shrinking values and a device mismatch

    @Test func anAngleShrinksToTheWholeNumberNearestTheThresholdThatStillHolds() {
        var tried: [Double] = []
        let kept = StepValueShrinks.towards(160, from: 178.3) { (a: Double) -> Bool in
            tried.append(a)
            return a >= 163.5
        }
        #expect(kept == 164, "tried \(tried)")
        #expect(tried.first == 160, "the threshold itself first")
        #expect(tried.count <= 6, "bisection: \(tried)")
        // Nothing simpler holds: nil, and the value stays.
        #expect(StepValueShrinks.towards(160, from: 178.3) { (a: Double) -> Bool in a == 178.3 } == nil)
        // Only the rounding holds.
        #expect(StepValueShrinks.towards(0, from: 291.4) { (h: Double) -> Bool in h == 291 } == 291)
    }

    @Test func eachKindOfValueShrinksTowardItsSimplest() {
        let profile = DeviceProfile()
        #expect(StepValueShrinks.shrink(.hinge(angle: 93.7), profile: profile) { (_: Event) in true } == .hinge(angle: 160))
        #expect(StepValueShrinks.shrink(.hinge(angle: 31.2), profile: profile) { (_: Event) in true } == .hinge(angle: 20))
        #expect(StepValueShrinks.shrink(.keyboard(visible: true, height: 301.5), profile: profile) { (_: Event) in true }
                == .keyboard(visible: true, height: nil))
        #expect(StepValueShrinks.shrink(.keyboard(visible: true, height: 301.5), profile: profile) { (e: Event) in
            if case .keyboard(_, let h?) = e { return h >= 250 }
            return false
        } == .keyboard(visible: true, height: 250))
        #expect(StepValueShrinks.shrink(.liveActivities(count: 3), profile: profile) { (e: Event) in e != .liveActivities(count: 0) }
                == .liveActivities(count: 1))
        #expect(StepValueShrinks.shrink(.motion(Gravity(x: 0.93, y: -0.31, z: 0.12)), profile: profile) { (_: Event) in true }
                == .motion(Gravity(x: 1, y: 0, z: 0)))
        #expect(StepValueShrinks.shrink(.pop, profile: profile) { (_: Event) in true } == nil)
    }

    @Test func aRampIsAMonotonicRunOfHingeReadingsAndLosesItsMiddle() {
        let steps = Self.events([.hinge(angle: 10), .hinge(angle: 11), .hinge(angle: 12), .hinge(angle: 13), .hinge(angle: 12),
                                 .hinge(angle: 11), .hinge(angle: 20), .pop, .hinge(angle: 1), .hinge(angle: 2)]).map(TraceStep.event)
        #expect(TraceShrinker.ramps(steps) == [0..<4, 3..<6], "up to the turn at 13, down from it to 11; two readings are no ramp")
        let kept = TraceShrinker.rampEndpoints(steps) { (_: [TraceStep]) in true }
        #expect(kept.compactMap { if case .hinge(let a)? = $0.event?.envelope.event { a } else { nil } } == [10, 13, 11, 20, 1, 2])
        // When dropping every middle loses the property, ramps go one at a time.
        let firstNeeded = TraceShrinker.rampEndpoints(steps) { (c: [TraceStep]) in c.count >= 9 }
        #expect(firstNeeded.count == 9, "only the second ramp's middle goes")
    }

    /// A device that keeps reporting the closed phone's vertical bar while the hinge opens part
    /// way (where the bar is horizontal), among noise: a 1 kHz ramp, keyboards, activities and observations
    /// that match. Shrunk, it is one round angle and the one observation.
    static func mismatchingRun() -> [TraceStep] {
        var steps: [TraceStep] = []
        var t: UInt64 = 3_217_000
        func event(_ e: Event) {
            steps.append(.event(TraceEvent(seq: 0, t: t, client: 1, envelope: EventEnvelope(event: e, ts: Int64(t)), digest: 0)))
            t += 1_000_000
        }
        func observe(_ axis: Axis) {
            steps.append(.observation(TraceObservation(seq: 0, t: t, client: 2, request: ObserveRequest(observed: Observation(barAxis: axis)),
                                                       result: ConformanceResult(verdict: .match, seq: 0, layoutSeq: 0, matchedSeq: nil, differences: []))))
        }
        observe(.vertical)
        event(.keyboard(visible: true, height: 301.5))
        event(.keyboard(visible: false, height: nil))
        event(.liveActivities(count: 2))
        for i in 0...60 { event(.hinge(angle: 10 + Double(i) + (i % 2 == 0 ? 0.37 : -0.21))) }
        t += 900_000_000
        observe(.vertical)
        event(.liveActivities(count: 0))
        return steps
    }

    @Test func aDeviceMismatchShrinksToTheObservationAndTheRoundAngleThatMakeIt() throws {
        let h = Self.header()
        let steps = Self.mismatchingRun()
        let target = GlitchTarget(kind: .mismatch, subject: "barAxis")
        let shows = target.holds(header: h, steps: steps)
        #expect(shows)
        var phases: [TraceShrinker.Phase] = []
        let result = TraceShrinker.shrink(steps, profile: h.profile, origin: h.initialT, progress: { phases.append($0.phase) }) { (c: [TraceStep]) -> Bool in
            target.holds(header: h, steps: c)
        }
        #expect(target.holds(header: h, steps: result))
        #expect(result.count == 2, "\(result)")
        guard result.count == 2, case .event(let e) = result[0], case .hinge(let angle) = e.envelope.event, case .observation = result[1] else {
            Issue.record("not a hinge and an observation: \(result)")
            return
        }
        #expect(angle == angle.rounded() && angle >= 23 && angle < 163, "a whole angle that opens the hinge part way: \(result)")
        #expect(result.allSatisfy { $0.t % 1_000_000_000 == 0 }, "times on the 1 s grid: \(result.map(\.t))")
        #expect(e.envelope.ts == nil, "the sender's stamp is not needed")
        #expect(phases.contains(.ramps) && phases.contains(.values))
        // Written out, it replays with --verify and the observation is judged a mismatch.
        let file = try TraceFile(bytes: try #require(TraceMinimize.encode(header: h, steps: result)))
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil && outcome.observationsChecked == 1)
        let kept = try TraceMinimize.steps(file, observations: true)
        guard case .observation(let o)? = kept.last else { Issue.record("no observation kept"); return }
        #expect(o.result.verdict == .mismatch && o.seq == h.initialSeq + 1)
    }

    @Test func aMismatchDoesNotShrinkToAStaleVerdict() {
        let h = Self.header()
        let target = GlitchTarget(kind: .mismatch, subject: nil)
        let steps = Self.mismatchingRun()
        let shows = target.holds(header: h, steps: steps)
        #expect(shows)
        // Moments after the hinge opened, the device may still show the closed layout: stale, not a mismatch.
        let opened = TraceStep.event(TraceEvent(seq: 0, t: 1_000_000, client: 1, envelope: EventEnvelope(event: .hinge(angle: 50)), digest: 0))
        let soon = TraceStep.observation(TraceObservation(seq: 0, t: 2_000_000, client: 2,
                                                          request: ObserveRequest(observed: Observation(barAxis: .vertical)),
                                                          result: ConformanceResult(verdict: .match, seq: 0, layoutSeq: 0, matchedSeq: nil, differences: [])))
        #expect(TraceMinimize.run(header: h, steps: [opened, soon]).map { run in
            run.steps.contains { if case .observation(let o) = $0 { o.result.verdict == .stale } else { false } }
        } == true)
        #expect(!target.holds(header: h, steps: [opened, soon]))
        // A stale look is a target of its own kind.
        #expect(GlitchTarget(kind: .stale, subject: "barAxis").holds(header: h, steps: [opened, soon]))
    }

    // MARK: repros that survive hardware (issue 38)

    @Test("resolving a mismatch target pins its subject and the original's differences: a candidate that mismatches otherwise does not hold")
    func aMinimizedMismatchIsTheSameMismatch() throws {
        let h = Self.header()
        let steps = Self.mismatchingRun()
        guard case .target(let target) = GlitchTarget.resolve(kind: .mismatch, subject: nil, header: h, steps: steps) else {
            Issue.record("the run's one mismatch is not resolved")
            return
        }
        #expect(target.subject == "barAxis")
        #expect(target.signature == [GlitchTarget.MismatchPoint(path: "barAxis", observed: .string("vertical"))])
        #expect(target.holds(header: h, steps: steps))
        // The same observation and subject, other values seen: not this mismatch.
        var other = target
        other.signature = [GlitchTarget.MismatchPoint(path: "barAxis", observed: .string("horizontal"))]
        #expect(!other.holds(header: h, steps: steps))
        // Shrunk, the repro shows exactly the original's differences.
        let result = TraceShrinker.shrink(steps, profile: h.profile, origin: h.initialT) { (c: [TraceStep]) -> Bool in target.holds(header: h, steps: c) }
        let run = try #require(TraceMinimize.run(header: h, steps: result))
        let verdicts = run.steps.compactMap { step -> ConformanceResult? in if case .observation(let o) = step { o.result } else { nil } }
        #expect(verdicts.contains { $0.verdict == .mismatch && GlitchTarget.MismatchPoint.of($0) == target.signature })
    }

    @Test("without a subject, a kind the trace shows for several subjects is ambiguous and names them; one it does not show is absent")
    func anAmbiguousOrAbsentTargetIsRefused() {
        let h = Self.header()
        var steps = Self.mismatchingRun()
        // Part way open the bar is horizontal: a vertical bar's side is not on screen either.
        steps.append(.observation(TraceObservation(seq: 0, t: steps.last!.t + 1_000_000_000, client: 2,
                                                   request: ObserveRequest(observed: Observation(verticalBarSide: .some(.left))),
                                                   result: ConformanceResult(verdict: .match, seq: 0, layoutSeq: 0, matchedSeq: nil, differences: []))))
        guard case .ambiguous(let subjects) = GlitchTarget.resolve(kind: .mismatch, subject: nil, header: h, steps: steps) else {
            Issue.record("two subjects mismatch, and no subject was given")
            return
        }
        #expect(subjects == ["barAxis", "verticalBarSide"])
        if case .target(let t) = GlitchTarget.resolve(kind: .mismatch, subject: "verticalBarSide", header: h, steps: steps) {
            #expect(t.subject == "verticalBarSide" && t.signature?.map(\.path) == ["verticalBarSide"])
        } else {
            Issue.record("a named subject is resolved")
        }
        guard case .absent = GlitchTarget.resolve(kind: .mismatch, subject: "items", header: h, steps: steps) else {
            Issue.record("a subject that does not mismatch is absent")
            return
        }
        guard case .absent = GlitchTarget.resolve(kind: .flapping, subject: nil, header: h, steps: steps) else {
            Issue.record("a glitch kind the run does not show is absent")
            return
        }
    }

    @Test("with a rig's hinge tolerance, a hinge angle shrinks no closer to what decides it than the tolerance (past 20° with 1° becomes 21°)")
    func hingeAnglesKeepTheRigsToleranceFromThresholds() {
        let profile = DeviceProfile.builtin
        let threshold = profile.partialOpenThreshold
        // The property: the hinge is past the partly open threshold.
        let past = { (e: Event) -> Bool in if case .hinge(let a) = e { a >= threshold } else { false } }
        #expect(StepValueShrinks.shrink(.hinge(angle: 61.37), profile: profile, holds: past) == .hinge(angle: threshold.rounded()))
        #expect(StepValueShrinks.shrink(.hinge(angle: 61.37), profile: profile, hingeTolerance: 1, holds: past) == .hinge(angle: threshold.rounded() + 1))
        #expect(StepValueShrinks.shrink(.hinge(angle: 61.37), profile: profile, hingeTolerance: 2.5, holds: past) == .hinge(angle: threshold.rounded() + 3))
        // An angle already inside the tolerance has nothing robust to shrink to: kept as it is.
        #expect(StepValueShrinks.shrink(.hinge(angle: threshold + 0.4), profile: profile, hingeTolerance: 1, holds: past) == nil)
    }

    @Test("a load of the state the trace began in (a rig's reset) starts the steps afresh; a load of another state is still refused")
    func aResetLoadStartsTheStepsAfresh() throws {
        let h = Self.header()
        var bytes = h.encode() + [0x0A]
        let before = TraceEvent(seq: 1, t: 1_000_000, client: 1, envelope: EventEnvelope(event: .hinge(angle: 90)), digest: 0)
        TraceEncoding.appendEvent(before, to: &bytes)
        let start = h.makeEngine()
        TraceEncoding.appendLoad(TraceLoad(seq: 2, t: 2_000_000, client: 1, engine: start), to: &bytes)
        let after = TraceEvent(seq: 3, t: 3_000_000, client: 1, envelope: EventEnvelope(event: .keyboard(visible: true, height: nil)), digest: 0)
        TraceEncoding.appendEvent(after, to: &bytes)
        let steps = try TraceMinimize.steps(try TraceFile(bytes: bytes), observations: false)
        #expect(steps.compactMap(\.event).map(\.envelope.event) == [.keyboard(visible: true, height: nil)])
        // Loaded somewhere else: no subset of events reaches it.
        var opened = start
        _ = try opened.apply(.hinge(angle: 120))
        var other = h.encode() + [0x0A]
        TraceEncoding.appendLoad(TraceLoad(seq: 1, t: 2_000_000, client: 1, engine: opened), to: &other)
        #expect(throws: TraceError.self) { try TraceMinimize.steps(try TraceFile(bytes: other), observations: false) }
    }
}
