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
        /// The event as one line for captions (empty for the start).
        public var eventText: String
        public var angle: Double
        public var pose: Pose
        public var orientation: Orientation
        public var keyboard: Bool
        public var pip: Bool
        public var liveActivities: Int
        public var digest: UInt64
        /// The digest differs from the one before.
        public var layoutChanged: Bool
        /// How long the event took, where the run knows.
        public var latencyNs: UInt64?
    }

    public struct Mark: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        public var label: String
    }

    /// A layout worth a frame: the first one, and each one after a change of digest.
    public struct Frame: Sendable {
        public var seq: Int
        public var t: UInt64
        public var eventText: String?
        public var layout: Layout
        public var app: App
        public var digest: UInt64
    }

    public let title: String
    public let profile: DeviceProfile
    /// The device before the first event (`event` empty), at the run's start.
    public private(set) var start: Point
    public private(set) var points: [Point] = []
    public private(set) var marks: [Mark] = []
    public private(set) var frames: [Frame] = []
    /// What the glitch checker found in the run (the timeline and the frames mark them).
    public var glitches: [Glitch] = []
    public let keepsFrames: Bool
    /// What `latencyNs` measures, as the latency panel's caption says it.
    public var latencyMeaning: String
    public var budgetNs: UInt64?

    public init(title: String, engine: Engine, t: UInt64, keepFrames: Bool, latencyMeaning: String = "latency", budgetNs: UInt64? = nil) {
        self.title = title
        profile = engine.profile
        keepsFrames = keepFrames
        self.latencyMeaning = latencyMeaning
        self.budgetNs = budgetNs
        start = TraceStory.point(engine, t: t, event: nil, changed: false, latency: nil)
        if keepFrames {
            frames.append(Frame(seq: engine.seq, t: t, eventText: nil, layout: engine.layout, app: engine.app, digest: engine.digest))
        }
    }

    /// Records the engine just after it applied `event` at time `t`.
    public mutating func record(_ engine: Engine, t: UInt64, event: Event, latencyNs: UInt64? = nil) {
        let previous = points.last?.digest ?? start.digest
        let changed = engine.digest != previous
        points.append(TraceStory.point(engine, t: t, event: event, changed: changed, latency: latencyNs))
        if changed, keepsFrames {
            frames.append(Frame(seq: engine.seq, t: t, eventText: EventLabel.text(event), layout: engine.layout, app: engine.app, digest: engine.digest))
        }
    }

    public mutating func mark(seq: Int, t: UInt64, label: String) {
        marks.append(Mark(seq: seq, t: t, label: label))
    }

    /// The last time the story knows of.
    public var end: UInt64 { max(points.last?.t ?? start.t, marks.last?.t ?? start.t) }

    static func point(_ e: Engine, t: UInt64, event: Event?, changed: Bool, latency: UInt64?) -> Point {
        let s = e.state
        return Point(seq: e.seq, t: t, eventText: event.map(EventLabel.text) ?? "",
                     angle: s.hingeAngle, pose: s.pose, orientation: s.orientation, keyboard: s.keyboardVisible,
                     pip: s.pipActive, liveActivities: s.liveActivities, digest: e.digest, layoutChanged: changed, latencyNs: latency)
    }
}
