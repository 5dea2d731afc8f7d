import CreaseCore

/// What the timeline and the frames need from a run, gathered one applied event at a
/// time from the engine that replays it. Whoever replays (a trace file, an events file,
/// a test) calls `record` after each event and `mark` for each annotation; the drawings
/// are pure functions of the story.
public struct TraceStory: Sendable {
    /// The device as the timeline draws it after one event.
    public struct Point: Sendable, Equatable {
        public var seq: Int
        /// Nanoseconds on the run's clock.
        public var t: UInt64
        public var angle: Double
        public var pose: Pose
        public var orientation: Orientation
        public var keyboard: Bool
        public var pip: Bool
        public var liveActivities: Int
        public var digest: UInt64
        /// The digest differs from the one before.
        public var layoutChanged: Bool
        /// How long the event took to reach the daemon, where the run knows (`latencyMeaning`).
        public var latencyNs: UInt64?
        /// The daemon's own latency for the event (read → layout queued), where recorded.
        public var relayoutNs: UInt64?
    }

    public struct Mark: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        public var label: String
    }

    /// A rig's observation and its verdict.
    public struct Observed: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        /// Nil for a look the trace keeps as a view of a layout the replay does not give.
        public var observation: Observation?
        public var result: ConformanceResult
        /// The `observe` command's id, when it had one (a report finds its screenshot by it).
        public var id: JSONValue?
    }

    /// A layout worth a frame: the first one, each one after a change of digest, and the
    /// layout an observation was held against (with the observation drawn over it).
    public struct FrameStub: Sendable, Equatable {
        public var seq: Int
        public var verdict: Verdict?
    }

    public struct Frame: Sendable {
        public var seq: Int
        public var t: UInt64
        public var eventText: String?
        public var layout: Layout
        public var app: App
        public var digest: UInt64
        public var observed: Observed?
    }

    public let title: String
    public let profile: DeviceProfile
    /// The device before the first event (`event` empty), at the run's start.
    public private(set) var start: Point
    /// A point per event: no text, so a campaign's story costs a fixed size an event.
    public private(set) var points: [Point] = []
    /// The last event, for the caption of a frame drawn where the run stops.
    public private(set) var lastEvent: Event?
    public var lastEventText: String? { lastEvent.map(EventLabel.text) }
    public private(set) var marks: [Mark] = []
    public private(set) var frames: [Frame] = []
    /// Every frame of the run, drawn or not: its seq and, for an observation's, the verdict.
    /// What `crease report` chooses its frames from before a second replay keeps only those.
    public private(set) var frameStubs: [FrameStub] = []
    /// With `keepFrames`, the frames (indexes into `frameStubs`) kept whole; nil: all.
    public let keptFrames: Set<Int>?
    public private(set) var observations: [Observed] = []
    /// The frames of the device's screen a frame judge flagged, in the trace's order.
    public private(set) var screen: [FrameVerdict] = []
    /// What the glitch checker found in the run (the timeline and the frames mark them).
    public var glitches: [Glitch] = []
    /// The layout shifts between its published layouts, in session windows.
    public var shifts = LayoutShiftWindows()
    /// The device's layout-shift windows a frame judge measured (its `layoutShift` records).
    public var deviceShifts: [FrameVerdict] = []
    public let keepsFrames: Bool
    /// What `latencyNs` measures, as the latency panel's caption says it.
    public var latencyMeaning: String
    public var budgetNs: UInt64?

    public init(title: String, engine: Engine, t: UInt64, keepFrames: Bool, keeping kept: Set<Int>? = nil,
                latencyMeaning: String = "latency", budgetNs: UInt64? = nil) {
        self.title = title
        profile = engine.profile
        keepsFrames = keepFrames
        keptFrames = kept
        self.latencyMeaning = latencyMeaning
        self.budgetNs = budgetNs
        start = TraceStory.point(engine, t: t, event: nil, changed: false, latency: nil, relayout: nil)
        if keepsNext() {
            frames.append(Frame(seq: engine.seq, t: t, eventText: nil, layout: engine.layout, app: engine.app, digest: engine.digest, observed: nil))
        }
        frameStubs.append(FrameStub(seq: engine.seq, verdict: nil))
    }

    /// Records the engine just after it applied `event` at time `t`.
    public mutating func record(_ engine: Engine, t: UInt64, event: Event, latencyNs: UInt64? = nil, relayoutNs: UInt64? = nil) {
        let previous = points.last?.digest ?? start.digest
        let changed = engine.digest != previous
        points.append(TraceStory.point(engine, t: t, event: event, changed: changed, latency: latencyNs, relayout: relayoutNs))
        lastEvent = event
        if changed {
            if keepsNext() {
                frames.append(Frame(seq: engine.seq, t: t, eventText: EventLabel.text(event), layout: engine.layout, app: engine.app,
                                    digest: engine.digest, observed: nil))
            }
            frameStubs.append(FrameStub(seq: engine.seq, verdict: nil))
        }
    }

    /// Records an observation judged against the engine's current layout.
    public mutating func observe(_ engine: Engine, t: UInt64, observation: Observation?, result: ConformanceResult, id: JSONValue? = nil) {
        let o = Observed(seq: engine.seq, t: t, observation: observation, result: result, id: id)
        observations.append(o)
        if keepsNext() {
            frames.append(Frame(seq: engine.seq, t: t, eventText: "observe: \(result.verdict.rawValue)", layout: engine.layout, app: engine.app,
                                digest: engine.digest, observed: o))
        }
        frameStubs.append(FrameStub(seq: engine.seq, verdict: result.verdict))
    }

    /// Whether the frame about to be made is kept whole.
    private func keepsNext() -> Bool { keepsFrames && (keptFrames?.contains(frameStubs.count) ?? true) }

    /// Records a frame judge's verdict on the device's screen.
    public mutating func flag(_ verdict: FrameVerdict) { screen.append(verdict) }

    public mutating func mark(seq: Int, t: UInt64, label: String) {
        marks.append(Mark(seq: seq, t: t, label: label))
    }

    /// The last time the story knows of.
    public var end: UInt64 { max(points.last?.t ?? start.t, marks.last?.t ?? start.t, observations.last?.t ?? start.t) }

    static func point(_ e: Engine, t: UInt64, event: Event?, changed: Bool, latency: UInt64?, relayout: UInt64?) -> Point {
        let s = e.state
        return Point(seq: e.seq, t: t,
                     angle: s.hingeAngle, pose: s.pose, orientation: s.orientation, keyboard: s.keyboardVisible,
                     pip: s.pipActive, liveActivities: s.liveActivities, digest: e.digest, layoutChanged: changed, latencyNs: latency,
                     relayoutNs: relayout)
    }
}
