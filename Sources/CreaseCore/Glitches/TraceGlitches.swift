extension TraceHeader {
    /// The time from the sender's `ts` to the daemon reading the event, when the sender
    /// stamped it from the daemon's monotonic clock (as `crease gen` and rigs on the same
    /// machine do). A `ts` further than 10 s from the daemon's clock is taken to be from
    /// another clock. `trace info`, the timeline, the Chrome export and `overBudget` read it.
    public func transportLatency(_ e: TraceEvent) -> UInt64? {
        guard let ts = e.envelope.ts, let origin = monotonicOrigin else { return nil }
        let delay = Int64(truncatingIfNeeded: origin &+ e.t) &- ts
        return delay >= 0 && delay < 10_000_000_000 ? UInt64(delay) : nil
    }

    /// The daemon's latency budget from `config.budgetUs`, if it has one.
    public var budgetNs: UInt64? {
        guard case .number(let us)? = config["budgetUs"], us >= 0, us < 1e12 else { return nil }
        return UInt64(us * 1000)
    }
}

/// Checks a run as it is replayed: after each applied event, the event and (if the daemon
/// published it) the layout go to a `GlitchChecker`. Whoever replays (a trace file, a
/// candidate of the minimizer, the timeline) calls `applied` after each event.
public struct RunGlitches: Sendable {
    public private(set) var checker: GlitchChecker
    /// Every glitch so far, in the order found.
    public private(set) var glitches: [Glitch] = []
    /// The layout shifts between consecutive published layouts, in session windows.
    public private(set) var shifts = LayoutShiftWindows()
    /// The device's own layout-shift windows, as a frame judge measured them (its `layoutShift` records).
    public private(set) var deviceShifts: [FrameVerdict] = []
    private var lastPublished: Layout
    private let header: TraceHeader

    /// Starts at the header's state and checks its layout. A nil budget in `options` takes the trace's.
    public init(header: TraceHeader, engine: Engine, options: GlitchOptions) {
        var o = options
        if o.budgetNs == nil { o.budgetNs = header.budgetNs }
        self.header = header
        lastPublished = engine.layout
        checker = GlitchChecker(options: o, app: engine.app)
        glitches = checker.check(layout: engine.layout, seq: engine.seq, t: header.initialT, digest: engine.digest)
    }

    /// After `engine` applied `e`. `published`: false for events inside a recorded batch
    /// before its last, whose layouts the daemon never sent.
    @discardableResult
    public mutating func applied(_ e: TraceEvent, engine: Engine, published: Bool) -> [Glitch] {
        // The daemon's own read-to-queued time where the trace has it (the budget is the
        // daemon's); older traces only have the sender's time to the read.
        let latency = e.latencyNs ?? header.transportLatency(e)
        var found = checker.check(event: CheckedEvent(seq: e.seq, t: e.t, event: e.envelope.event, latencyNs: latency))
        if case .app = e.envelope.event { checker.use(app: engine.app) }
        if published {
            found += checker.check(layout: engine.layout, seq: engine.seq, t: e.t, digest: engine.digest)
            shifts.add(seq: engine.seq, t: e.t, score: LayoutShift.score(from: lastPublished, to: engine.layout))
            lastPublished = engine.layout
        }
        glitches += found
        return found
    }

    /// The session windows above `options.layoutShift`, as `layoutShift` glitches (none when
    /// it is nil). Windows close as the run goes on, so they are asked for at its end.
    public func layoutShiftGlitches(_ options: GlitchOptions) -> [Glitch] {
        guard let threshold = options.layoutShift else { return [] }
        return shifts.windows.filter { $0.score > threshold }.map { w in
            Glitch(kind: .layoutShift, subject: "layout", firstSeq: w.fromSeq, lastSeq: w.toSeq, firstT: w.firstT, lastT: w.lastT,
                   message: "controls moved under the user: a layout-shift score of \(LayoutShift.text(w.score)) over seq \(w.fromSeq)…\(w.toSeq), "
                       + "above \(LayoutShift.text(threshold))")
        }.filter { !options.ignores($0) }
    }

    /// The engine was reset to a recorded state (a gap or a load).
    public mutating func resumed(engine: Engine, t: UInt64) {
        lastPublished = engine.layout   // a jump, not a shift
        checker.replaced(app: engine.app)
        glitches += checker.check(layout: engine.layout, seq: engine.seq, t: t, digest: engine.digest)
    }

    public mutating func verdict(_ v: NonMatchVerdict) {
        glitches += checker.check(verdict: v)
    }

    /// A frame judge's verdict on the device's screen, recorded at `seq` and `t`.
    public mutating func screen(_ v: FrameVerdict, seq: Int, t: UInt64) {
        guard v.kind.flags else { return measured(v, seq: seq, t: t) }
        let what = switch v.kind {
        case .flash: "a flash on the device's screen"
        case .unexpectedMotion: "motion on the device's screen the model did not make"
        case .lateRelayout: "the device showed the layout \(Int(v.relayoutMs ?? 0)) ms after the model"
        case .layoutShift: preconditionFailure("a layout-shift window is a measurement, not a flagged frame")
        }
        glitches.append(Glitch(kind: .screen, subject: v.kind.rawValue, firstSeq: v.refSeq, lastSeq: seq, firstT: v.t, lastT: max(t, v.t),
                               message: "\(what) (frame \(v.frame), about seq \(v.refSeq))"))
    }

    /// The device's own layout-shift window: kept beside the model's, and a glitch only
    /// above `--layout-shift`, as the model's windows are.
    private mutating func measured(_ v: FrameVerdict, seq: Int, t: UInt64) {
        deviceShifts.append(v)
        guard let threshold = checker.options.layoutShift, let score = v.score, score > threshold else { return }
        let glitch = Glitch(kind: .layoutShift, subject: "device", firstSeq: v.refSeq, lastSeq: seq, firstT: v.fromT ?? v.t, lastT: max(t, v.t),
                            message: "controls moved on the device's screen: a layout-shift score of \(LayoutShift.text(score)) measured by the "
                                + "frame judge up to frame \(v.frame), above \(LayoutShift.text(threshold))")
        if !checker.options.ignores(glitch) { glitches.append(glitch) }
    }
}

/// `crease trace glitches`: a trace file replayed (without verifying) and checked, each
/// layout the daemon published (the last of each recorded batch, every other event's).
public enum TraceGlitches {
    public struct Report: Sendable {
        public var glitches: [Glitch]
        public var events: Int
        /// Layouts checked: the initial one and one per published event.
        public var layouts: Int
        /// The layout shifts between them, in session windows.
        public var shifts: LayoutShiftWindows
    }

    public static func check(_ file: TraceFile, options: GlitchOptions) throws(TraceError) -> Report {
        var published = try PublishedLayouts(file)
        var replayer = TraceReplayer(header: file.header, verify: false)
        var run = RunGlitches(header: file.header, engine: replayer.engine, options: options)
        var cursor = file.cursor()
        var events = 0, layouts = 1
        while let traced = try cursor.next() {
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw TraceError("seq \(d.seq) cannot be applied: \(error)", line: traced.line, offset: traced.offset)
            }
            switch traced.record {
            case .event(let e):
                events += 1
                let shown = published.contains(e.seq)
                if shown { layouts += 1 }
                run.applied(e, engine: replayer.engine, published: shown)
            case .gap(let g):
                layouts += 1
                run.resumed(engine: replayer.engine, t: g.t)
            case .load(let l):
                layouts += 1
                run.resumed(engine: replayer.engine, t: l.t)
            case .observation(let o):
                if o.result.verdict != .match { run.verdict(NonMatchVerdict(o.result, t: o.t)) }
            case .frame(let seq, let t, _, let verdict):
                run.screen(verdict, seq: seq, t: t)
            case .mark, .batch, .layout:
                break
            }
        }
        return Report(glitches: run.glitches + run.layoutShiftGlitches(options), events: events, layouts: layouts, shifts: run.shifts)
    }
}

/// Which events' layouts a daemon published: all but those inside a recorded batch before its last.
public struct PublishedLayouts: Sendable {
    private let batches: [ClosedRange<Int>]
    private var next = 0

    public init(_ file: TraceFile) throws(TraceError) { batches = try TraceReplay.batches(file) }

    /// Asked in ascending seq order.
    public mutating func contains(_ seq: Int) -> Bool {
        while next < batches.count, batches[next].upperBound < seq { next += 1 }
        return !(next < batches.count && batches[next].contains(seq) && seq < batches[next].upperBound)
    }
}
