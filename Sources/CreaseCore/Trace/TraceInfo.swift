/// `crease trace info`: what a trace holds, computed by replaying it (without verifying).
public struct TraceSummary: Sendable {
    public var header: TraceHeader
    public var records = 0
    public var events = 0
    /// Count per event type, in the order of `Event.names`; types that never occur are left out.
    public var eventsByType: [(name: String, count: Int)] = []
    public var marks: [(seq: Int, t: UInt64, label: String)] = []
    public var batches = 0
    public var batchedEvents = 0
    public var largestBatch = 0
    public var layoutRecords = 0
    /// Observations by verdict, in the order of `Verdict.allCases`.
    public var observations = [Int](repeating: 0, count: Verdict.allCases.count)
    /// Frame verdicts recorded by a rig's frame judge, by `FrameVerdict.Kind.allCases`.
    public var frames = [Int](repeating: 0, count: FrameVerdict.Kind.allCases.count)
    public var gaps: [(seq: Int, lost: Int, reason: String)] = []
    public var appReplacements: [(seq: Int, name: String)] = []
    /// `load` records: the seq and the app each put in place.
    public var loads: [(seq: Int, app: String)] = []
    public var firstSeq: Int?
    public var lastSeq: Int?
    /// `t` of the header and of the last record.
    public var startT: UInt64
    public var endT: UInt64
    public var durationNs: UInt64 { endT - startT }
    /// Each pose and display the layout went through, with the seq and t where it began.
    public var poseTimeline: [PosePhase] = []
    /// Each interface orientation the layout went through (with the device orientation the
    /// state held then: nil where the rig set the interface directly).
    public var orientationTimeline: [OrientationPhase] = []
    /// Time between consecutive events as the daemon read them.
    public var interArrival: Percentiles?
    /// The sender's clock against the daemon's: (daemon read time − sender ts), where the
    /// sender used the daemon's monotonic clock (the header's `monotonicOrigin`) —
    /// `crease gen --to` and `crease replay --to` do.
    public var transportLatency: Percentiles?
    /// The daemon's own latency per event as recorded (read → layout queued), where the trace holds it.
    public var relayoutLatency: Percentiles?
    public var cutWarning: String?

    public struct OrientationPhase: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        public var orientation: Orientation
        public var device: DeviceOrientation?
        public var locked: Bool
    }

    public struct PosePhase: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        public var pose: Pose
        public var display: Display
    }
}

/// Nearest-rank percentiles of a set of nanosecond durations.
public struct Percentiles: Sendable, Equatable {
    public var count: Int
    public var min: UInt64
    public var p50: UInt64
    public var p99: UInt64
    public var max: UInt64

    public init?(_ values: [UInt64]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        func rank(_ p: Double) -> UInt64 { sorted[Swift.min(sorted.count - 1, Swift.max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))] }
        count = sorted.count
        min = sorted[0]
        p50 = rank(0.5)
        p99 = rank(0.99)
        max = sorted[sorted.count - 1]
    }
}


public enum TraceInfo {
    public static func summarize(_ file: TraceFile) throws(TraceError) -> TraceSummary {
        let header = file.header
        var s = TraceSummary(header: header, startT: header.initialT, endT: header.initialT)
        s.cutWarning = file.cutWarning
        var counts = [Int](repeating: 0, count: Event.names.count)
        var gapsNs: [UInt64] = []
        var latencies: [UInt64] = []
        var relayouts: [UInt64] = []
        var previousT: UInt64?
        var replayer = TraceReplayer(header: header, verify: false)
        var pose = replayer.engine.layout.device.pose
        var display = replayer.engine.layout.device.display
        s.poseTimeline.append(.init(seq: header.initialSeq, t: header.initialT, pose: pose, display: display))
        var orientation = replayer.engine.state.orientation
        s.orientationTimeline.append(.init(seq: header.initialSeq, t: header.initialT, orientation: orientation,
                                           device: replayer.engine.state.deviceOrientation, locked: replayer.engine.state.rotationLock))
        func notePose(seq: Int, t: UInt64) {
            let device = replayer.engine.layout.device
            if device.pose != pose || device.display != display {
                pose = device.pose
                display = device.display
                s.poseTimeline.append(.init(seq: seq, t: t, pose: pose, display: display))
            }
            let state = replayer.engine.state
            if state.orientation != orientation {
                orientation = state.orientation
                s.orientationTimeline.append(.init(seq: seq, t: t, orientation: orientation, device: state.deviceOrientation, locked: state.rotationLock))
            }
        }
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            s.records += 1
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw TraceError("seq \(d.seq) cannot be applied: \(error)", line: traced.line, offset: traced.offset)
            }
            switch traced.record {
            case .event(let e):
                s.events += 1
                if s.firstSeq == nil { s.firstSeq = e.seq }
                s.lastSeq = e.seq
                s.endT = e.t
                if let i = Event.names.firstIndex(of: e.envelope.event.name) { counts[i] += 1 }
                if let p = previousT { gapsNs.append(e.t - p) }
                previousT = e.t
                if let delay = header.transportLatency(e) { latencies.append(delay) }
                if let l = e.latencyNs { relayouts.append(l) }
                if case .app(let app) = e.envelope.event { s.appReplacements.append((e.seq, app.name)) }
                notePose(seq: e.seq, t: e.t)
            case .load(let l):
                s.lastSeq = l.seq
                s.endT = l.t
                s.loads.append((l.seq, l.app.name))
                notePose(seq: l.seq, t: l.t)
            case .mark(let seq, let t, let label):
                s.marks.append((seq, t, label))
                s.endT = max(s.endT, t)
            case .batch(let first, let last):
                s.batches += 1
                s.batchedEvents += last - first + 1
                s.largestBatch = max(s.largestBatch, last - first + 1)
            case .layout:
                s.layoutRecords += 1
            case .frame(_, let t, _, let verdict):
                s.frames[FrameVerdict.Kind.allCases.firstIndex(of: verdict.kind)!] += 1
                s.endT = max(s.endT, t)
            case .observation(let o):
                s.observations[Verdict.allCases.firstIndex(of: o.result.verdict)!] += 1
                s.endT = max(s.endT, o.t)
            case .gap(let g):
                s.gaps.append((g.seq, g.lost, g.reason))
                s.endT = max(s.endT, g.t)
                previousT = nil
            }
        }
        s.eventsByType = zip(Event.names, counts).filter { $0.1 > 0 }.map { ($0.0, $0.1) }
        s.interArrival = Percentiles(gapsNs)
        s.transportLatency = Percentiles(latencies)
        s.relayoutLatency = Percentiles(relayouts)
        return s
    }
}
