/// One line after the header. Which member a line has says what it is:
///
///     {"seq":12,"t":48211904,"client":3,"event":{"event":"hinge","angle":91.5,"ts":77},"digest":"…","latencyNs":41250}
///     {"seq":13,"t":48900000,"client":3,"load":{"profile":{…},"app":{…},"state":{…}},"digest":"…"}
///     {"seq":12,"t":48300000,"mark":"label"}
///     {"seq":12,"batch":[9,12]}                       events 9…12 were published as one layout
///     {"seq":12,"layout":{…}}                        the layout after seq 12 (--trace-layouts)
///     {"seq":40,"t":…,"gap":{"lost":27,"reason":"…"},"state":{…},"digest":"…"}
///     {"seq":12,"t":…,"client":4,"frame":{"kind":"flash","t":…,"refSeq":11,"frame":127}}
///     {"seq":12,"t":…,"client":4,"observe":{"cmd":"observe",…},"verdict":"stale","layoutSeq":12,"matchedSeq":9,"differences":[…]}
///     {"seq":12,"t":…,"client":4,"observe":{"cmd":"observe",…},"observedAs":{"view":"pageSource","layout":"…","digest":"…"},"verdict":"match",…}
///
/// `t` is monotonic nanoseconds since the run began; `seq` counts applied events.
/// The rare records are boxed (`indirect`): a replay copies each record it reads, and an
/// observation inline made every hinge record as large as a look.
public enum TraceRecord: Sendable, Equatable {
    case event(TraceEvent)
    case mark(seq: Int, t: UInt64, label: String)
    case batch(first: Int, last: Int)
    /// The layout line as recorded, re-encoded canonically (equal to what the engine prints).
    case layout(seq: Int, json: [UInt8])
    /// Records were lost (a full disk, a failed write); writing resumed at `seq` with this state.
    indirect case gap(TraceGap)
    /// A `load` command: profile, app and state replaced at once, one seq past the last.
    indirect case load(TraceLoad)
    /// A rig's observation of the device and the verdict the daemon gave it.
    indirect case observation(TraceObservation)
    /// A frame of the device's screen a rig's frame judge flagged, at the engine's `seq`.
    indirect case frame(seq: Int, t: UInt64, client: Int?, verdict: FrameVerdict)

    /// The layout digest an event or load record says it left.
    public var recordedDigest: UInt64? {
        switch self {
        case .event(let e): e.digest
        case .load(let l): l.digest
        case .mark, .batch, .layout, .gap, .observation, .frame: nil
        }
    }

    /// The seq the engine is at after this record: every record names one.
    public var seq: Int {
        switch self {
        case .event(let e): e.seq
        case .load(let l): l.seq
        case .mark(let seq, _, _): seq
        case .batch(_, let last): last
        case .layout(let seq, _): seq
        case .gap(let g): g.seq
        case .observation(let o): o.seq
        case .frame(let seq, _, _, _): seq
        }
    }

    /// The seq of a record that moves the engine on by one (an event or a load).
    public var appliedSeq: Int? {
        switch self {
        case .event(let e): e.seq
        case .load(let l): l.seq
        case .mark, .batch, .layout, .gap, .observation, .frame: nil
        }
    }
}

public struct TraceObservation: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    public var client: Int?
    /// The `observe` command as the rig sent it.
    public var request: ObserveRequest
    public var result: ConformanceResult
    /// When the screen was read (its `capturedAt`), on the trace's clock as `t`.
    public var captured: ClosedRange<UInt64>?
    /// The record kept the look as a view of a layout, not whole: `request.observed` is the
    /// look only once `isResolved` (a replay rebuilt it, `resolve(_:)`).
    public var observedAs: ObservedReference?
    public private(set) var isResolved: Bool

    public init(seq: Int, t: UInt64, client: Int?, request: ObserveRequest, result: ConformanceResult, captured: ClosedRange<UInt64>? = nil,
                observedAs: ObservedReference? = nil) {
        self.seq = seq
        self.t = t
        self.client = client
        self.request = request
        self.result = result
        self.captured = captured
        self.observedAs = observedAs
        isResolved = observedAs == nil
    }

    /// The look rebuilt from the layouts `tracker` keeps; false (and unchanged) when it cannot be.
    public mutating func resolve(_ tracker: ConformanceTracker) -> Bool {
        guard !isResolved, let reference = observedAs else { return true }
        guard let observed = tracker.resolve(reference) else { return false }
        request.observed = observed
        isResolved = true
        return true
    }

    /// The same look, recorded whole: what a record written where its layout may differ
    /// (a minimized repro) must be. Only a resolved look can be.
    public var whole: TraceObservation {
        precondition(isResolved, "an observation kept as a reference is recorded whole only once resolved")
        var o = self
        o.observedAs = nil
        return o
    }
}

public struct TraceEvent: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    /// The daemon's number for the connection the event came from.
    public var client: Int?
    /// The event with the sender's `ts` (and `id`, if it had one).
    public var envelope: EventEnvelope
    /// The layout digest after the event.
    public var digest: UInt64
    /// The daemon's own latency for the event: from reading its line to its layout
    /// being queued to every subscriber (as its reply's `latencyUs`). Nil in traces
    /// recorded before it was written.
    public var latencyNs: UInt64?

    public init(seq: Int, t: UInt64, client: Int?, envelope: EventEnvelope, digest: UInt64, latencyNs: UInt64? = nil) {
        self.seq = seq
        self.t = t
        self.client = client
        self.envelope = envelope
        self.digest = digest
        self.latencyNs = latencyNs
    }
}

public struct TraceLoad: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    public var client: Int?
    public var profile: DeviceProfile
    public var app: App
    public var state: DeviceState
    /// The layout digest after the load.
    public var digest: UInt64
    /// The profile and app in place before the load, where known: the record writes only
    /// what the load changed (a rig's reset writes `"load":{}`, not 6 KB of profile and app).
    public var inPlace: LoadContext?

    public init(seq: Int, t: UInt64, client: Int?, engine: Engine) {
        self.init(seq: seq, t: t, client: client, profile: engine.profile, app: engine.app, state: engine.state, digest: engine.digest)
    }

    /// The load that put `engine` in place of `before`: its record leaves out what it kept.
    public init(seq: Int, t: UInt64, client: Int?, engine: Engine, replacing before: Engine) {
        self.init(seq: seq, t: t, client: client, engine: engine)
        inPlace = LoadContext(profile: before.profile, app: before.app)
    }

    public init(seq: Int, t: UInt64, client: Int?, profile: DeviceProfile, app: App, state: DeviceState, digest: UInt64) {
        self.seq = seq
        self.t = t
        self.client = client
        self.profile = profile
        self.app = app
        self.state = state
        self.digest = digest
    }

    /// Loads are equal when they put the same in place, however their records were written.
    public static func == (a: TraceLoad, b: TraceLoad) -> Bool {
        a.seq == b.seq && a.t == b.t && a.client == b.client && a.digest == b.digest && a.state == b.state && a.profile == b.profile && a.app == b.app
    }

    /// What the load put in place; `profile` in place of the recorded one (calibration).
    public func makeEngine(profile: DeviceProfile? = nil) -> Engine { Engine(profile: profile ?? self.profile, app: app, state: state, seq: seq) }

    /// `{"profile","app","state"}`: what the load put in place, the record's `load` member.
    /// A profile or app the same as the one in place, and the app's default state, are left
    /// out: a reader takes them from the records before (`LoadContext`), as the command did.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        if inPlace?.profile != profile { w.key("profile"); profile.write(to: &w) }
        if inPlace?.app != app { w.key("app"); w.value(app.source) }
        if inPlace == nil || state != DeviceState(app: app) { w.key("state"); state.write(to: &w, app: app) }
        w.endObject()
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter(capacity: 16 * 1024)
        write(to: &w)
        return w.bytes
    }
}

/// The profile and app in place at a point of a trace (the header's, then each load's):
/// what a load record that leaves them out keeps. A class: a cursor hands it to every
/// record it decodes, and copying the profile and app each time cost a replay a third.
public final class LoadContext: Sendable, Equatable {
    public let profile: DeviceProfile
    public let app: App

    public init(profile: DeviceProfile, app: App) {
        self.profile = profile
        self.app = app
    }

    public convenience init(_ header: TraceHeader) { self.init(profile: header.profile, app: header.app) }

    /// What is in place after `record`.
    public func following(_ record: TraceRecord) -> LoadContext {
        guard case .load(let l) = record else { return self }
        return LoadContext(profile: l.profile, app: l.app)
    }

    public static func == (a: LoadContext, b: LoadContext) -> Bool { a === b || (a.profile == b.profile && a.app == b.app) }
}

public struct TraceGap: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    public var lost: Int
    public var reason: String
    /// The state as written by `DeviceState.write(to:app:)`; it is read against the app of the moment.
    public var state: JSONValue
    public var digest: UInt64
}
