import Testing
@testable import CreaseCore

private let ms: UInt64 = 1_000_000

/// Issue 37: a campaign's trace grew by about 8 KB per look. A look that is exactly a view
/// of the layout it agrees with is kept as a reference to that layout; a mismatch, and
/// anything else a rig saw, whole. Replay rebuilds every kept look and judges it again.
@Suite struct CompactLookTests {
    /// The session of `ConformanceTraceTests` recorded both ways, plus a page-source look.
    func session(compact: Bool) throws -> RecordingDaemon {
        var d = RecordingDaemon()
        d.compact = compact
        let closedLayout = d.engine.layout
        d.observe(Observation(describing: closedLayout), at: 10 * ms)             // match, complete view
        try d.event(.hinge(angle: 180), at: 100 * ms)
        let open = d.engine.layout
        d.observe(PageSourceView.observation(of: closedLayout), at: 150 * ms)     // stale, page-source view
        d.observe(PageSourceView.observation(of: open), at: 300 * ms)             // match, page-source view
        var moved = Observation(describing: open)
        moved.items![0].frame!.x += 1                                              // within the tolerance: a match, not a view
        d.observe(moved, at: 310 * ms)
        moved.items![0].frame!.x += 40
        d.observe(moved, at: 320 * ms)                                             // mismatch
        try d.event(.orientation(.landscapeLeft), at: 400 * ms)
        d.observe(Observation(describing: open), at: 1000 * ms)                   // mismatch (stuck)
        d.observe(Observation(barAxis: d.engine.layout.barAxis), at: 1010 * ms)   // match: partial
        return d
    }

    func looks(_ file: TraceFile) throws -> [TraceObservation] {
        var out: [TraceObservation] = []
        var cursor = file.cursor()
        while let r = try cursor.next() { if case .observation(let o) = r.record { out.append(o) } }
        return out
    }

    @Test func aLookThatIsExactlyAViewOfItsLayoutIsKeptAsAReferenceAndEverythingElseWhole() throws {
        let d = try session(compact: true)
        #expect(d.results.map(\.verdict) == [.match, .stale, .match, .match, .mismatch, .mismatch, .match])
        let kept = try looks(try d.file())
        #expect(kept.map { $0.observedAs?.view } == [.complete, .pageSource, .pageSource, nil, nil, nil, nil])
        #expect(kept.map(\.isResolved) == [false, false, false, true, true, true, true])
        // The stale look refers to the layout it shows, the closed one.
        #expect(kept[1].observedAs?.layout == kept[0].observedAs?.layout)
        // The matches, each a look of the whole screen, are what shrinks.
        let whole = try looks(try session(compact: false).file())
        let matches = [0, 2]
        let compactBytes = try lookBytes(try d.file(), matches), wholeBytes = try lookBytes(try session(compact: false).file(), matches)
        #expect(compactBytes * 3 < wholeBytes, "compact \(compactBytes) bytes, whole \(wholeBytes)")
        #expect(whole.allSatisfy { $0.observedAs == nil })
    }

    /// The bytes of the observation records at these indexes (in record order).
    func lookBytes(_ file: TraceFile, _ indexes: [Int]) throws -> Int {
        var cursor = file.cursor()
        var i = 0, bytes = 0
        while let r = try cursor.next() {
            guard case .observation = r.record else { continue }
            if indexes.contains(i) { bytes += r.length }
            i += 1
        }
        return bytes
    }

    @Test func aReplayRebuildsEveryKeptLookAndReproducesEveryVerdict() throws {
        let d = try session(compact: true)
        let file = try d.file()
        var replayer = TraceReplayer(header: file.header, verify: true)
        var cursor = file.cursor()
        var rebuilt: [Observation] = []
        while let r = try cursor.next() {
            #expect(try replayer.apply(r) == nil)
            if case .observation = r.record, let o = replayer.lastObservation {
                #expect(o.isResolved)
                rebuilt.append(o.request.observed)
            }
        }
        #expect(replayer.observationsChecked == 7 && replayer.observationsUnchecked == 0)
        // What the replay rebuilt is exactly what the rig sent.
        let whole = try looks(try session(compact: false).file())
        #expect(rebuilt == whole.map(\.request.observed))
        // A tampered verdict on a kept look is still found.
        let text = String(decoding: d.bytes, as: UTF8.self).replacingFirst(#""verdict":"stale""#, with: #""verdict":"match""#)
        let outcome = try TraceReplay.run(try TraceFile(bytes: Array(text.utf8)), verify: true)
        guard case .verdict(let recorded, let replayed)? = outcome.divergence?.kind else { Issue.record("\(String(describing: outcome.divergence))"); return }
        #expect(recorded.verdict == .match && replayed.verdict == .stale)
    }

    @Test func aKeptLookRoundTripsThroughItsRecord() throws {
        var cursor = try session(compact: true).file().cursor()
        var seen = 0
        while let r = try cursor.next() {
            guard case .observation(let o) = r.record, o.observedAs != nil else { continue }
            seen += 1
            var again: [UInt8] = []
            TraceEncoding.appendRecord(r.record, to: &again)
            #expect(try again.dropLast().withUnsafeBufferPointer { try TraceRecord.decode($0) } == r.record)
            #expect(try JSON.parse(again)["observe"]?["observed"] == nil)
        }
        #expect(seen == 3)
    }

    /// A reference to a layout the replay never makes current (a trace of other rules, or a
    /// tampered digest) is named, never judged as an empty observation that matches anything.
    @Test func aLookOfALayoutTheReplayDoesNotGiveIsADivergenceNamingIt() throws {
        let d = try session(compact: true)
        let reference = try #require(try looks(try d.file())[2].observedAs)
        let text = String(decoding: d.bytes, as: UTF8.self)
            .replacingFirst(#""layout":"\#(Digest.hex(reference.layout))""#, with: #""layout":"00000000000000ff""#)
        let outcome = try TraceReplay.run(try TraceFile(bytes: Array(text.utf8)), verify: true)
        let divergence = try #require(outcome.divergence)
        #expect(divergence.kind == .unresolved(ObservedReference(view: .pageSource, layout: 0xff, digest: reference.digest)))
        #expect(divergence.summary.contains("pageSource view of layout 00000000000000ff"), "\(divergence.summary)")
        // The readers that need the look whole say why they cannot use it.
        let file = try TraceFile(bytes: Array(text.utf8))
        #expect(throws: TraceError.self) { _ = try TraceMinimize.steps(file, observations: true) }
        // A view this build computes otherwise than the recording one (its digest) is not rebuilt either.
        let otherView = String(decoding: d.bytes, as: UTF8.self)
            .replacingFirst(#""digest":"\#(Digest.hex(reference.digest))""#, with: #""digest":"00000000000000ff""#)
        #expect(try TraceReplay.run(try TraceFile(bytes: Array(otherView.utf8)), verify: true).divergence?.kind
                    == .unresolved(ObservedReference(view: .pageSource, layout: reference.layout, digest: 0xff)))
    }

    @Test func theResolvingCursorHandsReadersEveryLookWhole() throws {
        let file = try session(compact: true).file()
        var cursor = file.resolvingCursor()
        var rebuilt: [Observation] = []
        while let r = try cursor.next() {
            if case .observation(let o) = r.record {
                #expect(o.isResolved)
                rebuilt.append(o.request.observed)
            }
        }
        #expect(rebuilt == (try looks(try session(compact: false).file())).map(\.request.observed))
        // A minimized repro records its looks whole: its layouts are not the trace's.
        let steps = try TraceMinimize.steps(file, observations: true)
        for case .observation(let o) in steps { #expect(o.observedAs == nil && o.isResolved) }
    }

    @Test func onlyAnExactViewIsAReference() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        try e.apply(.present(sheet: "trailInfo"))
        let layout = e.layout
        #expect(ObservedReference.of(Observation(describing: layout), layout: layout, layoutDigest: e.digest)?.view == .complete)
        #expect(ObservedReference.of(PageSourceView.observation(of: layout), layout: layout, layoutDigest: e.digest)?.view == .pageSource)
        var partial = PageSourceView.observation(of: layout)
        partial.complete = false
        #expect(ObservedReference.of(partial, layout: layout, layoutDigest: e.digest) == nil)
        var reordered = PageSourceView.observation(of: layout)
        reordered.items!.reverse()
        #expect(ObservedReference.of(reordered, layout: layout, layoutDigest: e.digest) == nil)
        let reference = try #require(ObservedReference.of(PageSourceView.observation(of: layout), layout: layout, layoutDigest: e.digest))
        #expect(reference.resolve(in: layout) == PageSourceView.observation(of: layout))
        #expect(reference.digest == PageSourceView.classDigest(of: layout))
    }

    /// Issue 37's figure: a tour's looks, one per page-source class, each kept as a reference.
    @Test func aTourOfLooksIsKeptInAFractionOfTheBytes() throws {
        var compact = RecordingDaemon(), whole = RecordingDaemon()
        compact.compact = true
        let events: [Event] = [.hinge(angle: 30), .hinge(angle: 100), .orientation(.landscapeLeft), .keyboard(visible: true, height: nil),
                               .hinge(angle: 180), .orientation(.portrait), .keyboard(visible: false, height: nil), .hinge(angle: 0)]
        for (i, event) in events.enumerated() {
            let t = UInt64(i + 1) * 1000 * ms
            try compact.event(event, at: t)
            try whole.event(event, at: t)
            compact.observe(PageSourceView.observation(of: compact.engine.layout), at: t + 600 * ms)
            whole.observe(PageSourceView.observation(of: whole.engine.layout), at: t + 600 * ms)
        }
        #expect(compact.results == whole.results && compact.results.allSatisfy { $0.verdict == .match })
        let all = Array(0..<events.count)
        let compactBytes = try lookBytes(try compact.file(), all), wholeBytes = try lookBytes(try whole.file(), all)
        #expect(compactBytes * 3 < wholeBytes, "compact \(compactBytes) bytes, whole \(wholeBytes)")
        #expect(try TraceReplay.run(try compact.file(), verify: true).observationsChecked == events.count)
    }
}
