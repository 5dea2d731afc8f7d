import Testing
@testable import CreaseCore

private let ms: UInt64 = 1_000_000

private func observe(_ json: String) throws -> ObserveRequest {
    try ObserveRequest.decode(try JSON.parse(Array(json.utf8)))
}

private func decodeError(_ json: String) -> InputError? {
    do { _ = try observe(json); return nil } catch { return error as? InputError }
}

/// The default state (closed, outer display, portrait: a vertical bar on the right).
private func closed() throws -> Engine { try engine(builtin("tabs"), []) }

@Suite struct ObservationDecodingTests {
    @Test func aFullObservationRoundTrips() throws {
        var e = try closed()
        try e.apply(.present(sheet: "trailInfo"))
        let request = ObserveRequest(observed: Observation(describing: e.layout), tolerance: 3.5, ts: 1_700_000_123_000_000, id: .number(7))
        let decoded = try ObserveRequest.decode(try JSON.parse(request.jsonBytes()))
        #expect(decoded == request)
        #expect(decoded.observed.sheet?.value != nil)
    }

    @Test func nullMeansTheRigSawNothingThereAndAbsentMeansNotCompared() throws {
        let r = try observe(#"{"cmd":"observe","observed":{"sheet":null,"tabBar":null,"verticalBarSide":null,"items":[{"id":"downloads","badge":null}]}}"#)
        #expect(r.observed.sheet == Seen.none && r.observed.tabBar == Seen.none && r.observed.verticalBarSide == Seen.none)
        #expect(r.observed.items?.first?.badge == Seen.none)
        #expect(r.observed.barAxis == nil && r.observed.overflow == nil && r.observed.columns == nil && !r.observed.complete)
        #expect(r.tolerance == 2)
    }

    @Test("bad input is refused with the field named by its path and the command's id", arguments: [
        (#"{"cmd":"observe","id":"o","observed":{"items":[{"id":"a"},{"id":"b","colour":"red"}]}}"#, "unknownField", "observed.items[1].colour"),
        (#"{"cmd":"observe","id":"o","observed":{"items":[{"id":"a","frame":{"x":1,"y":2,"w":"3","h":4}}]}}"#, "wrongType", "observed.items[0].frame.w"),
        (#"{"cmd":"observe","id":"o","observed":{"items":[{"id":"a","frame":{"x":1,"y":2,"w":-3,"h":4}}]}}"#, "outOfRange", "observed.items[0].frame.w"),
        (#"{"cmd":"observe","id":"o","observed":{"items":[{"frame":{"x":1,"y":2,"w":3,"h":4}}]}}"#, "missingField", "observed.items[0].id"),
        (#"{"cmd":"observe","id":"o","observed":{"barAxis":"diagonal"}}"#, "badValue", "observed.barAxis"),
        (#"{"cmd":"observe","id":"o","observed":{"sheet":{"axis":"vertical","placement":"trailing"}}}"#, "unknownField", "observed.sheet.placement"),
        (#"{"cmd":"observe","id":"o","observed":{"columns":[{"id":"note","verticalBarEdge":"left"}]}}"#, "badValue", "observed.columns[0].verticalBarEdge"),
        (#"{"cmd":"observe","id":"o","observed":{"overflow":["share",3]}}"#, "wrongType", "observed.overflow[1]"),
        (#"{"cmd":"observe","id":"o","observed":{"complete":true}}"#, "missingField", "observed.items"),
        (#"{"cmd":"observe","id":"o","observed":{"surprise":1}}"#, "unknownField", "observed.surprise"),
        (#"{"cmd":"observe","id":"o","observed":{},"tolerance":-1}"#, "outOfRange", "tolerance"),
        (#"{"cmd":"observe","id":"o","observed":{},"ts":1.5}"#, "wrongType", "ts"),
        (#"{"cmd":"observe","id":"o"}"#, "missingField", "observed"),
        (#"{"cmd":"observe","id":"o","observed":[]}"#, "wrongType", "observed"),
        (#"{"cmd":"observe","id":"o","observed":{},"extra":true}"#, "unknownField", "extra"),
    ])
    func refused(json: String, code: String, field: String) {
        let e = decodeError(json)
        #expect(e?.code.rawValue == code, "\(String(describing: e))")
        #expect(e?.field == field, "\(String(describing: e))")
        #expect(e?.id == .string("o"))
    }
}

@Suite struct ComparatorTests {
    @Test func anObservationBuiltFromTheLayoutMatchesIt() throws {
        for events in [[], Pose_.innerPortrait, Pose_.innerLandscape, [Event.present(sheet: "trailInfo")], Pose_.partlyOpenLandscape] {
            let l = try engine(builtin("tabs"), events).layout
            #expect(Conformance.differences(Observation(describing: l), tolerance: 0, layout: l).isEmpty, "\(events)")
            #expect(Conformance.matches(Observation(describing: l), tolerance: 0, layout: l))
        }
        let split = try engine(builtin("split"), Pose_.innerLandscape).layout
        #expect(Conformance.matches(Observation(describing: split), tolerance: 0, layout: split))
    }

    @Test func aFrameMovedBeyondTheToleranceIsNamedByItsItemAndField() throws {
        let l = try closed().layout
        var o = Observation(describing: l)
        let i = try #require(o.items?.firstIndex { $0.id == "downloads" })
        let y = try #require(o.items?[i].frame?.y)
        o.items![i].frame!.y += 18
        let d = Conformance.differences(o, tolerance: 2, layout: l)
        #expect(d == [ConformanceDifference(path: "items[downloads].frame.y", expected: .number(y), observed: .number(y + 18))])
        #expect(d.first?.subject == "items[downloads]")
        // Within the tolerance on every edge it matches.
        o.items![i].frame!.y = y + 2   // the top and the bottom edge move by 2
        #expect(Conformance.matches(o, tolerance: 2, layout: l))
        #expect(!Conformance.matches(o, tolerance: 1.5, layout: l))
    }

    @Test func anEdgeMovedByTwoSmallChangesNamesTheFieldsThatChanged() throws {
        let l = try closed().layout
        var o = Observation(describing: l)
        let i = try #require(o.items?.firstIndex { $0.id == "search" })
        let f = try #require(o.items?[i].frame)
        o.items![i].frame = Rect(x: f.x + 1.5, y: f.y, w: f.w + 1.5, h: f.h)   // the right edge moves by 3
        let d = Conformance.differences(o, tolerance: 2, layout: l)
        #expect(d.map(\.path) == ["items[search].frame.x", "items[search].frame.w"])
    }

    @Test func aPartialObservationComparesOnlyWhatItGives() throws {
        let l = try closed().layout
        #expect(Conformance.matches(Observation(barAxis: .vertical), tolerance: 2, layout: l))
        #expect(Conformance.differences(Observation(barAxis: .horizontal), tolerance: 2, layout: l)
                == [ConformanceDifference(path: "barAxis", expected: .string("vertical"), observed: .string("horizontal"))])
        // One item, its shows only: nothing else about it or any other item is compared.
        let partial = Observation(items: [ObservedItem(id: "search", shows: .title)])
        #expect(Conformance.differences(partial, tolerance: 2, layout: l).map(\.path) == ["items[search].shows"])
        #expect(Conformance.matches(Observation(items: [ObservedItem(id: "search", axis: .vertical)]), tolerance: 2, layout: l))
    }

    @Test func completeFindsMissingItemsAndAnyObservationFindsUnexpectedOnes() throws {
        let l = try closed().layout
        var o = Observation(describing: l)
        o.items!.removeAll { $0.id == "sort" }
        #expect(Conformance.differences(o, tolerance: 2, layout: l).map(\.path) == ["items[sort]"])
        let missing = try #require(Conformance.differences(o, tolerance: 2, layout: l).first)
        #expect(missing.observed == .null && missing.expected["axis"] == .string("vertical"))
        o.complete = false
        #expect(Conformance.matches(o, tolerance: 2, layout: l))
        o.items!.append(ObservedItem(id: "ghost", frame: Rect(x: 1, y: 2, w: 3, h: 4)))
        o.items!.append(ObservedItem(id: "search"))
        #expect(Conformance.differences(o, tolerance: 2, layout: l).map(\.path) == ["items[ghost]", "items[search#2]"])
    }

    @Test func thousandsOfUnexpectedItemsAreEachNamedOnce() throws {
        let l = try closed().layout
        let many = (0..<6000).map { ObservedItem(id: "ghost\($0 % 3000)") }
        let d = Conformance.differences(Observation(items: many), tolerance: 2, layout: l)
        #expect(d.count == 6000)
        #expect(d[0].path == "items[ghost0#1]" && d[3000].path == "items[ghost0#2]")
    }

    @Test func overflowTabBarSheetBadgeAndColumnsUseReadablePaths() throws {
        let l = try closed().layout
        let o = Observation(verticalBarSide: .some(.left), items: [ObservedItem(id: "downloads", badge: Seen.none)],
                            overflow: ["share", "extra"], tabBar: .some(.compressed), sheet: .some(ObservedSheet(axis: .vertical)),
                            columns: [ObservedColumn(id: "note")])
        let d = Conformance.differences(o, tolerance: 2, layout: l)
        #expect(d.map(\.path) == ["verticalBarSide", "items[downloads].badge", "overflow[layoutToggle]", "overflow[locate]",
                                  "overflow[settings]", "overflow[recent]", "overflow[extra]", "tabBar", "sheet", "columns[note]"])
        #expect(d[1].expected == .number(3) && d[1].observed == .null)
        let split = try engine(builtin("split"), Pose_.innerLandscape).layout
        let edge = Conformance.differences(Observation(columns: [ObservedColumn(id: "folders"), ObservedColumn(id: "noteList"),
                                                                 ObservedColumn(id: "note", verticalBarEdge: .some(.leading))]),
                                           tolerance: 2, layout: split)
        #expect(edge == [ConformanceDifference(path: "columns[note].verticalBarEdge", expected: .string("trailing"), observed: .string("leading"))])
    }
}

@Suite struct ConformanceTrackerTests {
    /// The closed layout at seq 0, then unfolded (seq 1) at t = 1 s.
    func unfolded(window: UInt64 = ConformanceTracker.defaultWindowNs) throws -> (ConformanceTracker, before: Layout, after: Layout) {
        var e = try closed()
        var tracker = ConformanceTracker(layout: e.layout, digest: e.digest, seq: 0, t: 0, windowNs: window)
        let before = e.layout
        try e.apply(.hinge(angle: 180))
        tracker.publish(layout: e.layout, digest: e.digest, seq: 1, t: 1000 * ms)
        return (tracker, before, e.layout)
    }

    @Test func theCurrentLayoutMatches() throws {
        var (tracker, _, after) = try unfolded()
        let r = tracker.observe(ObserveRequest(observed: Observation(describing: after)), seq: 1, t: 1001 * ms).result
        #expect(r == ConformanceResult(verdict: .match, seq: 1, layoutSeq: 1, matchedSeq: 1, differences: []))
    }

    @Test func thePreviousLayoutRightAfterAChangeIsStaleAndAfterTheWindowAMismatch() throws {
        var (tracker, before, after) = try unfolded()
        let old = ObserveRequest(observed: Observation(describing: before))
        let stale = tracker.observe(old, seq: 1, t: 1100 * ms).result
        #expect(stale.verdict == .stale && stale.matchedSeq == 0 && stale.layoutSeq == 1)
        #expect(stale.differences == Conformance.differences(old.observed, tolerance: 2, layout: after))
        #expect(!stale.differences.isEmpty)
        // Still within the window of the stale run's start: stale.
        #expect(tracker.observe(old, seq: 1, t: 1500 * ms).result.verdict == .stale)
        // Past it: the old layout has left the window, and the run has lasted too long.
        let late = tracker.observe(old, seq: 1, t: 1601 * ms).result
        #expect(late.verdict == .mismatch)
        #expect(late.differences == stale.differences)
    }

    @Test func aStaleRunLongerThanTheWindowIsAMismatchEvenWhileTheOldLayoutKeepsComingBack() throws {
        // The layout flaps between closed and open every 300 ms; the device is stuck closed
        // and the rig only looks while it should be open. Each look alone is stale.
        var e = try closed()
        let closedLayout = e.layout, closedDigest = e.digest
        try e.apply(.hinge(angle: 180))
        let openLayout = e.layout, openDigest = e.digest
        var tracker = ConformanceTracker(layout: closedLayout, digest: closedDigest, seq: 0, t: 0)
        let stuck = ObserveRequest(observed: Observation(describing: closedLayout))
        var verdicts: [Verdict] = []
        for k in 0..<6 {
            let t = UInt64(k) * 600 * ms
            tracker.publish(layout: openLayout, digest: openDigest, seq: 2 * k + 1, t: t + 300 * ms)
            verdicts.append(tracker.observe(stuck, seq: 2 * k + 1, t: t + 400 * ms).result.verdict)
            tracker.publish(layout: closedLayout, digest: closedDigest, seq: 2 * k + 2, t: t + 600 * ms)
        }
        #expect(verdicts == [.stale, .mismatch, .mismatch, .mismatch, .mismatch, .mismatch])
        // A match ends the run.
        #expect(tracker.observe(stuck, seq: 12, t: 3601 * ms).result.verdict == .match)
        tracker.publish(layout: openLayout, digest: openDigest, seq: 13, t: 3700 * ms)
        #expect(tracker.observe(stuck, seq: 13, t: 3750 * ms).result.verdict == .stale)
    }

    @Test func somethingNoLayoutShowedIsAMismatchAtOnce() throws {
        var (tracker, _, _) = try unfolded()
        let r = tracker.observe(ObserveRequest(observed: Observation(barAxis: .vertical, tabBar: .some(.compressed))), seq: 1, t: 1001 * ms).result
        #expect(r.verdict == .mismatch && r.matchedSeq == nil)
        #expect(r.differences.map(\.path) == ["barAxis", "tabBar"])
    }

    @Test func theWindowIsAParameter() throws {
        var (tracker, before, _) = try unfolded(window: 50 * ms)
        #expect(tracker.observe(ObserveRequest(observed: Observation(describing: before)), seq: 1, t: 1040 * ms).result.verdict == .stale)
        #expect(tracker.observe(ObserveRequest(observed: Observation(describing: before)), seq: 1, t: 1060 * ms).result.verdict == .mismatch)
        #expect(ConformanceTracker.windowNs(config: .object([("settleMs", .number(250))])) == 250 * ms)
        #expect(ConformanceTracker.windowNs(config: .object([])) == 500 * ms)
    }

    @Test func memoryIsBoundedByTheCapacityAndTheWindow() throws {
        var e = try closed()
        var tracker = ConformanceTracker(layout: e.layout, digest: e.digest, seq: 0, t: 0)
        // A 1 kHz flap: every event a new layout.
        for seq in 1...5000 {
            try e.apply(.hinge(angle: seq % 2 == 0 ? 0 : 180))
            tracker.publish(layout: e.layout, digest: e.digest, seq: seq, t: UInt64(seq) * ms)
            #expect(tracker.keptLayouts <= ConformanceTracker.capacity)
        }
        // Slow changes age out once they are older than a late capture could reach back (10 s).
        for seq in 5001...5010 {
            try e.apply(.hinge(angle: seq % 2 == 0 ? 0 : 180))
            tracker.publish(layout: e.layout, digest: e.digest, seq: seq, t: UInt64(seq) * 20_000 * ms)
        }
        #expect(tracker.keptLayouts == 2)
    }
}

/// Issue 26: "the verdict is match when the observation agrees with a layout that was
/// current at some moment of the capture, stale when it agrees with one current within the
/// settle window before it, mismatch otherwise."
@Suite struct CaptureTimeTests {
    /// Closed until 1 s, unfolded from 1 s on (a 500 ms window).
    func unfolded() throws -> (ConformanceTracker, Layout, Layout) {
        var e = try closed()
        var tracker = ConformanceTracker(layout: e.layout, digest: e.digest, seq: 0, t: 0)
        let before = e.layout
        try e.apply(.hinge(angle: 180))
        tracker.publish(layout: e.layout, digest: e.digest, seq: 1, t: 1000 * ms)
        return (tracker, before, e.layout)
    }

    @Test("a page source captured before an unfold and delivered 0.8 s later is a match at its capture time, a mismatch without it")
    func aLateCaptureIsJudgedWhenItWasTaken() throws {
        var (tracker, before, _) = try unfolded()
        let seen = ObserveRequest(observed: Observation(describing: before))
        var arrival = tracker
        #expect(arrival.observe(seen, seq: 1, t: 1700 * ms).result.verdict == .mismatch, "judged at arrival: the false verdict")
        let r = tracker.observe(seen, seq: 1, t: 1700 * ms, captured: (900 * ms)...(950 * ms)).result
        #expect(r == ConformanceResult(verdict: .match, seq: 1, layoutSeq: 0, matchedSeq: 0, differences: []))
    }

    @Test("a capture that spans a change matches either layout; after it, only the new one matches")
    func aCaptureAcrossAChange() throws {
        var (tracker, before, after) = try unfolded()
        let old = ObserveRequest(observed: Observation(describing: before)), new = ObserveRequest(observed: Observation(describing: after))
        let span = (800 * ms)...(1200 * ms)
        #expect(tracker.observe(old, seq: 1, t: 1300 * ms, captured: span).result.matchedSeq == 0)
        let r = tracker.observe(new, seq: 1, t: 1300 * ms, captured: span).result
        #expect(r.verdict == .match && r.matchedSeq == 1 && r.layoutSeq == 1)
        // Captured wholly after the unfold: the old layout is stale within the window, then a mismatch.
        let stale = tracker.observe(old, seq: 1, t: 1300 * ms, captured: (1100 * ms)...(1250 * ms)).result
        #expect(stale.verdict == .stale && stale.matchedSeq == 0 && stale.layoutSeq == 1 && !stale.differences.isEmpty)
        var fresh = try unfolded().0
        #expect(fresh.observe(old, seq: 1, t: 1700 * ms, captured: (1600 * ms)...(1650 * ms)).result.verdict == .mismatch)
    }

    @Test("a capture's end after it arrived counts as the arrival: a clock offset's error cannot reach a layout not yet shown")
    func aCaptureCannotEndInTheFuture() throws {
        var (tracker, before, after) = try unfolded()
        // Received at 900 ms, before the unfold: the end (1,500 ms, a wrong offset) counts as 900.
        let r = tracker.observe(ObserveRequest(observed: Observation(describing: after)), seq: 0, t: 900 * ms, captured: (850 * ms)...(1500 * ms)).result
        #expect(r.verdict != .match)
        #expect(tracker.observe(ObserveRequest(observed: Observation(describing: before)), seq: 0, t: 900 * ms, captured: (850 * ms)...(1500 * ms)).result.verdict == .match)
    }

    @Test("capturedAt is a time or [start, end], recorded as sent and read back", arguments: [
        (#"{"cmd":"observe","id":"o","observed":{},"capturedAt":[5,4]}"#, "badValue"),
        (#"{"cmd":"observe","id":"o","observed":{},"capturedAt":[1,2,3]}"#, "badValue"),
        (#"{"cmd":"observe","id":"o","observed":{},"capturedAt":-1}"#, "wrongType"),
        (#"{"cmd":"observe","id":"o","observed":{},"capturedAt":1.5}"#, "wrongType"),
        (#"{"cmd":"observe","id":"o","observed":{},"capturedAt":"now"}"#, "wrongType"),
    ])
    func decoding(json: String, code: String) throws {
        let e = decodeError(json)
        #expect(e?.code.rawValue == code && e?.field == "capturedAt" && e?.id == .string("o"), "\(String(describing: e))")
        #expect(try observe(#"{"cmd":"observe","observed":{},"capturedAt":42}"#).capturedAt == 42...42)
        let pair = try observe(#"{"cmd":"observe","observed":{},"capturedAt":[40,45]}"#)
        let back = try ObserveRequest.decode(try JSON.parse(pair.jsonBytes()))
        #expect(pair.capturedAt == 40...45 && back == pair)
    }

    @Test("the trace records the capture on its own clock, and replay --verify judges it the same way")
    func replayJudgesTheCapture() throws {
        var d = RecordingDaemon()
        let closedLayout = d.engine.layout
        try d.event(.hinge(angle: 180), at: 1000 * ms)
        #expect(d.observe(Observation(describing: closedLayout), at: 1800 * ms, captured: (900 * ms)...(950 * ms)).verdict == .match)
        #expect(d.observe(Observation(describing: closedLayout), at: 1800 * ms, captured: (1700 * ms)...(1750 * ms)).verdict == .mismatch)
        let text = String(decoding: d.bytes, as: UTF8.self)
        #expect(text.contains(#""captured":[900000000,950000000]"#))
        let outcome = try TraceReplay.run(try d.file(), verify: true)
        #expect(outcome.divergence == nil && outcome.observationsChecked == 2)
        // Without the capture a replay would judge the first one a mismatch: the record's captured is what it reads.
        let stripped = text.replacingOccurrences(of: #""captured":[900000000,950000000],"#, with: "")
        let diverged = try TraceReplay.run(try TraceFile(bytes: Array(stripped.utf8)), verify: true)
        #expect(diverged.divergence != nil)
    }
}

/// Records a trace the way the daemon does: each event, and each observation judged by
/// the daemon's tracker at the time it is read.
struct RecordingDaemon {
    var engine: Engine
    var tracker: ConformanceTracker
    var bytes: [UInt8]
    var results: [ConformanceResult] = []
    /// Keep looks that are exactly a view of their layout as references, as creased does by default.
    var compact = false

    init(app: App = builtin("tabs"), settleMs: Double = 500, part: Int = 0, reason: String = "start", start: Engine? = nil, t: UInt64 = 0) {
        engine = start ?? Engine(profile: .builtin, app: app)
        let config = JSONValue.object([("budgetUs", .number(1000)), ("settleMs", .number(settleMs))])
        tracker = ConformanceTracker(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: t,
                                     windowNs: ConformanceTracker.windowNs(config: config))
        bytes = TraceHeader(daemon: "creased test", started: "2026-01-01T00:00:00.000Z", part: part, reason: reason, config: config,
                            layouts: false, monotonicOrigin: nil, t: t, engine: engine).encode()
        bytes.append(0x0A)
    }

    mutating func event(_ event: Event, at t: UInt64) throws {
        if try engine.apply(event, at: Int64(t)) { tracker.publish(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: t) }
        TraceEncoding.appendEvent(TraceEvent(seq: engine.seq, t: t, client: 1, envelope: EventEnvelope(event: event), digest: engine.digest), to: &bytes)
    }

    @discardableResult
    mutating func observe(_ observation: Observation, at t: UInt64, tolerance: Double = 2, captured: ClosedRange<UInt64>? = nil) -> ConformanceResult {
        let request = ObserveRequest(observed: observation, tolerance: tolerance, ts: Int64(t), id: .string("o\(results.count)"), capturedAt: captured)
        let judged = tracker.observe(request, seq: engine.seq, t: t, captured: captured)
        let result = judged.result
        var recorded = TraceObservation(seq: engine.seq, t: t, client: 2, request: request, result: result, captured: captured)
        if compact { recorded.observedAs = tracker.reference(for: observation, judged) }
        TraceEncoding.appendObservation(recorded, to: &bytes)
        results.append(result)
        return result
    }

    func file() throws -> TraceFile { try TraceFile(bytes: bytes) }
}

@Suite struct ConformanceTraceTests {
    /// A rig session: the device follows a fold with some lag, gets stuck once, and shows a wrong frame once.
    func session() throws -> RecordingDaemon {
        var d = RecordingDaemon()
        let closedLayout = d.engine.layout
        d.observe(Observation(describing: closedLayout), at: 10 * ms)
        try d.event(.hinge(angle: 180), at: 100 * ms)
        let open = d.engine.layout
        d.observe(Observation(describing: closedLayout), at: 150 * ms)     // stale
        d.observe(Observation(describing: open), at: 300 * ms)             // match
        var moved = Observation(describing: open)
        moved.items![0].frame!.x += 40
        d.observe(moved, at: 320 * ms)                                     // mismatch
        try d.event(.orientation(.landscapeLeft), at: 400 * ms)
        d.observe(Observation(describing: open), at: 450 * ms)             // stale
        d.observe(Observation(describing: open), at: 1000 * ms)            // mismatch (stuck)
        d.observe(Observation(barAxis: d.engine.layout.barAxis), at: 1010 * ms)   // match: partial
        return d
    }

    @Test func theSessionGivesEveryVerdict() throws {
        #expect(try session().results.map(\.verdict) == [.match, .stale, .match, .mismatch, .stale, .mismatch, .match])
    }

    @Test func anObservationRecordRoundTrips() throws {
        let d = try session()
        var cursor = try d.file().cursor()
        var decoded: [ConformanceResult] = []
        while let r = try cursor.next() {
            guard case .observation(let o) = r.record else { continue }
            decoded.append(o.result)
            var again: [UInt8] = []
            TraceEncoding.appendRecord(r.record, to: &again)
            #expect(try again.dropLast().withUnsafeBufferPointer { try TraceRecord.decode($0) } == r.record)
        }
        #expect(decoded == d.results)
    }

    @Test func aReplayReproducesEveryVerdict() throws {
        let file = try session().file()
        var replayer = TraceReplayer(header: file.header, verify: true)
        var cursor = file.cursor()
        while let r = try cursor.next() { #expect(try replayer.apply(r) == nil) }
        #expect(replayer.observationsChecked == 7 && replayer.observationsUnchecked == 0)
        #expect(try TraceReplay.run(file, verify: true).divergence == nil)
    }

    @Test func aTamperedVerdictIsADivergence() throws {
        let text = String(decoding: try session().bytes, as: UTF8.self)
        let tampered = text.replacingFirst(#""verdict":"stale""#, with: #""verdict":"match""#)
        let outcome = try TraceReplay.run(try TraceFile(bytes: Array(tampered.utf8)), verify: true)
        let d = try #require(outcome.divergence)
        guard case .verdict(let recorded, let replayed) = d.kind else { Issue.record("\(d.kind)"); return }
        #expect(recorded.verdict == .match && replayed.verdict == .stale)
        #expect(d.summary.contains("observation") && d.summary.contains("stale"))
        // Without --verify the record is only applied.
        #expect(try TraceReplay.run(try TraceFile(bytes: Array(tampered.utf8)), verify: false).divergence == nil)
    }

    /// Issue 37: each non-match is a glitch of its verdict's kind: a stale look is `stale`,
    /// never counted as a `mismatch`.
    @Test func everyNonMatchIsAGlitchOfItsVerdictsKind() throws {
        let d = try session()
        let report = try TraceGlitches.check(try d.file(), options: GlitchOptions())
        let found = report.glitches.filter { $0.kind == .mismatch || $0.kind == .stale }
        let nonMatches = d.results.filter { $0.verdict != .match }
        #expect(found.map(\.firstSeq) == nonMatches.map(\.seq))
        #expect(found.map(\.kind.rawValue) == nonMatches.map(\.verdict.rawValue))
        #expect(found.map(\.subject) == nonMatches.map { $0.differences.first?.subject ?? "layout" })
        #expect(found.first?.kind == .stale && found.first?.message.contains("stale against seq 1 (the device shows seq 0)") == true,
                "\(found.first?.message ?? "")")
        #expect(nonMatches.contains { $0.verdict == .stale } && nonMatches.contains { $0.verdict == .mismatch })
    }

    @Test func aSliceKeepsItsObservationsAndVerifies() throws {
        let file = try session().file()
        let slice = try TraceSlice.slice(file, from: 2, to: 2)
        let sliced = try TraceFile(bytes: slice.bytes)
        let outcome = try TraceReplay.run(sliced, verify: true)
        #expect(outcome.divergence == nil)
        // The three observations after the rotation: the stale one (and the run it began)
        // depend on layouts before the slice; the partial match does not.
        #expect(outcome.observationsChecked + outcome.observationsUnchecked == 3)
        #expect(outcome.observationsChecked >= 1)
    }

    @Test func aFileThatBeginsMidRunChecksOnlyWhatItCanKnow() throws {
        // A rotated part begins just after a fold; the device is still closed. The stale
        // verdict depends on a layout from before the file: not checkable, not a divergence.
        var e = try closed()
        let closedLayout = e.layout
        try e.apply(.hinge(angle: 180))
        var d = RecordingDaemon(part: 1, reason: "size", start: e, t: 1000 * ms)
        var tracker = ConformanceTracker(layout: closedLayout, digest: Engine(profile: .builtin, app: builtin("tabs")).digest, seq: 0, t: 0)
        tracker.publish(layout: e.layout, digest: e.digest, seq: 1, t: 990 * ms)
        d.tracker = tracker   // the daemon's tracker knows the run before the file
        #expect(d.observe(Observation(describing: closedLayout), at: 1050 * ms).verdict == .stale)
        #expect(d.observe(Observation(describing: e.layout), at: 2000 * ms).verdict == .match)
        var replayer = TraceReplayer(header: try d.file().header, verify: true)
        var cursor = try d.file().cursor()
        while let r = try cursor.next() { #expect(try replayer.apply(r) == nil) }
        #expect(replayer.observationsUnchecked == 1 && replayer.observationsChecked == 1)
    }
}
