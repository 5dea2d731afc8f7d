/// What can go wrong on screen over a run of layouts (docs/glitches.md describes each).
public enum GlitchKind: String, Sendable, CaseIterable, Equatable {
    /// The layout keeps going back to layouts it showed moments before.
    case flapping
    /// Something appears for a moment and is gone again, or vanishes for a moment.
    case flash
    /// A declared item is in no bar and no overflow menu.
    case lostItem
    /// An item, custom bar or floating button overlaps a reserved region or the vertical bar.
    case occluded
    /// An item, custom bar or floating button leaves the app's window.
    case offscreen
    /// The vertical bar changes side or edge with nothing in between that can move it.
    case sideJump
    /// An event took longer than the latency budget.
    case overBudget
    /// A conformance verdict of `mismatch`: the device showed what no layout of the
    /// settle window explains.
    case mismatch
    /// A conformance verdict of `stale`: the device still showed a layout replaced within
    /// the settle window (catching up). Reported apart, and not a failure unless asked.
    case stale
    /// Controls moved under the user: a session window of layout shifts scored above
    /// `--layout-shift` (`LayoutShift`; off unless asked).
    case layoutShift
    /// The device's screen did what the model did not: a frame judge's verdict recorded in
    /// the trace (`frame` records; subject `flash`, `unexpectedMotion` or `lateRelayout`).
    case screen

    /// The glitch a verdict other than `match` is (nil for a match).
    public init?(verdict: Verdict) {
        switch verdict {
        case .match: return nil
        case .stale: self = .stale
        case .mismatch: self = .mismatch
        }
    }

    /// Its place in `allCases`, for counters kept in arrays.
    public var index: Int {
        switch self {
        case .flapping: 0
        case .flash: 1
        case .lostItem: 2
        case .occluded: 3
        case .offscreen: 4
        case .sideJump: 5
        case .overBudget: 6
        case .mismatch: 7
        case .stale: 8
        case .layoutShift: 9
        case .screen: 10
        }
    }
}

/// One glitch: what, about whom, when (the seqs and times of the layouts or events that
/// show it), and a sentence for a person.
public struct Glitch: Sendable, Equatable {
    public var kind: GlitchKind
    /// What the glitch is about: an item, bar, region or sheet id, a region kind, an event
    /// name (overBudget), `layout` (flapping).
    public var subject: String
    public var firstSeq: Int
    public var lastSeq: Int
    /// Nanoseconds on the run's clock.
    public var firstT: UInt64
    public var lastT: UInt64
    public var message: String

    public init(kind: GlitchKind, subject: String, firstSeq: Int, lastSeq: Int, firstT: UInt64, lastT: UInt64, message: String) {
        self.kind = kind
        self.subject = subject
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.firstT = firstT
        self.lastT = lastT
        self.message = message
    }

    /// `{"kind":…,"subject":…,"seq":[first,last],"t":[first,last],"message":…}`, members in
    /// this order, one line.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("kind"); w.string(kind.rawValue)
        w.key("subject"); w.string(subject)
        w.key("seq"); w.beginArray(); w.int(firstSeq); w.int(lastSeq); w.endArray()
        w.key("t"); w.beginArray(); w.int(Int(firstT)); w.int(Int(lastT)); w.endArray()
        w.key("message"); w.string(message)
        w.endObject()
    }

    public func json() -> [UInt8] {
        var w = JSONWriter(capacity: 192)
        write(to: &w)
        return w.bytes
    }

    /// Reads what `write` wrote (a client of the daemon's `glitches` topic, tests).
    public static func decode(_ value: JSONValue) throws(InputError) -> Glitch {
        let r = try FieldReader(value, path: "", what: "glitch")
        try r.rejectUnknown(allowed: ["kind", "subject", "seq", "t", "message"])
        func pair(_ name: String) throws(InputError) -> (Int, Int) {
            let a = try r.array(name)
            guard a.count == 2, case .number(let x) = a[0], case .number(let y) = a[1] else {
                throw InputError(.wrongType, "\(name) must be [first, last]", field: name)
            }
            return (try FieldReader.checkInteger(x, field: "\(name)[0]", min: 0, max: TraceHeader.maxInteger),
                    try FieldReader.checkInteger(y, field: "\(name)[1]", min: 0, max: TraceHeader.maxInteger))
        }
        let seq = try pair("seq"), t = try pair("t")
        return Glitch(kind: try r.enumeration("kind", GlitchKind.self), subject: try r.string("subject"),
                      firstSeq: seq.0, lastSeq: seq.1, firstT: UInt64(t.0), lastT: UInt64(t.1), message: try r.string("message"))
    }

    /// `seq 41…42` or `seq 41`.
    public var seqText: String { firstSeq == lastSeq ? "seq \(firstSeq)" : "seq \(firstSeq)…\(lastSeq)" }
}

/// `KIND` or `KIND:SUBJECT`: glitches to leave out (as a flicker test ignores the splash screen).
public struct GlitchIgnore: Sendable, Equatable {
    public var kind: GlitchKind
    /// Nil: every subject of the kind.
    public var subject: String?

    public init(kind: GlitchKind, subject: String? = nil) {
        self.kind = kind
        self.subject = subject
    }

    public static func parse(_ text: String) throws(InputError) -> GlitchIgnore {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let kind = GlitchKind(rawValue: String(parts[0])) else {
            throw InputError.badValue("ignore", String(parts[0]), allowed: GlitchKind.allCases.map(\.rawValue))
        }
        if parts.count == 2 {
            guard !parts[1].isEmpty else { throw InputError(.badValue, "--ignore \(text): the subject after \":\" is empty", field: "ignore") }
            return GlitchIgnore(kind: kind, subject: String(parts[1]))
        }
        return GlitchIgnore(kind: kind)
    }

    public func matches(_ g: Glitch) -> Bool { g.kind == kind && (subject == nil || subject == g.subject) }
}

/// Thresholds and the ignore list. The defaults are what docs/glitches.md argues for.
public struct GlitchOptions: Sendable, Equatable {
    /// Flapping: more than `flappingReturns` returns to a layout shown within the last `flappingWindowNs`.
    public var flappingReturns = 4
    public var flappingWindowNs: UInt64 = 1_000_000_000
    /// Whether a `stale` glitch (the device catching up) counts as a failure.
    public var staleFails = false
    /// Flash: shown (or gone) for less than this.
    public var flashNs: UInt64 = 50_000_000
    /// overBudget: an event's latency above this. Nil: the trace's own budget (`config.budgetUs`), else 1 ms.
    public var budgetNs: UInt64?
    public var ignore: [GlitchIgnore] = []
    /// layoutShift: a session window of layout shifts scoring above this; nil: not checked.
    public var layoutShift: Double?

    public static let defaultBudgetNs: UInt64 = 1_000_000

    public init() {}

    public func ignores(_ g: Glitch) -> Bool { ignore.contains { $0.matches(g) } }

    /// Whether `g` fails a check: every kind but `stale`, which fails only with `staleFails`.
    public func fails(_ g: Glitch) -> Bool { g.kind != .stale || staleFails }
}

/// A conformance verdict that did not match, as the checker takes it: a `mismatch` or a
/// `stale` glitch.
public struct NonMatchVerdict: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    /// `.mismatch` or `.stale`.
    public var kind: GlitchKind
    /// What was compared: a field path, an item id, or `layout`.
    public var subject: String
    public var message: String

    public init(seq: Int, t: UInt64, kind: GlitchKind = .mismatch, subject: String, message: String) {
        self.seq = seq
        self.t = t
        self.kind = kind
        self.subject = subject
        self.message = message
    }
}

/// An applied event as the checker needs it: whether it can move the vertical bar, and its latency if known.
public struct CheckedEvent: Sendable, Equatable {
    public var seq: Int
    public var t: UInt64
    public var name: String
    /// Rotation (set directly, from the IMU or through the lock), Split View, writing
    /// direction and app replacement move the vertical bar
    /// (a display change shows in the layouts themselves).
    public var canMoveBar: Bool
    public var latencyNs: UInt64?

    public init(seq: Int, t: UInt64, event: Event, latencyNs: UInt64?) {
        self.seq = seq
        self.t = t
        name = event.name
        switch event {
        case .orientation, .deviceOrientation, .motion, .rotationLock, .splitView, .layoutDirection, .app: canMoveBar = true
        default: canMoveBar = false
        }
        self.latencyNs = latencyNs
    }
}

/// Durations as people read them in messages: `38 ms`, `0.42 ms`, `1.2 s`.
enum Duration {
    static func text(_ ns: UInt64) -> String {
        if ns >= 10_000_000_000 { return "\(ns / 1_000_000_000) s" }
        if ns >= 1_000_000_000 { return "\(Double(ns / 100_000_000) / 10) s" }
        if ns >= 10_000_000 { return "\(ns / 1_000_000) ms" }
        let hundredths = (ns + 5_000) / 10_000
        let whole = hundredths / 100, frac = hundredths % 100
        if frac == 0 { return "\(whole) ms" }
        return "\(whole).\(frac < 10 ? "0" : "")\(frac % 10 == 0 ? frac / 10 : frac) ms"
    }
}
