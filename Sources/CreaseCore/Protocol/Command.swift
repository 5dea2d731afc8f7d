/// The daemon's commands (contract section 5), decoded from a `{"cmd": ...}` line.
/// Pure: the daemon shell performs them.
public enum Command: Sendable, Equatable {
    case hello
    case layout
    case state
    /// Add topics. Subscribing to `layout` also pushes the current layout at once.
    case subscribe([Topic])
    /// Remove topics; an empty list (or no `"topics"`) removes all.
    case unsubscribe([Topic])
    /// The counters; with `reset`, the counters start again once they are answered.
    case stats(reset: Bool)
    /// Profile, app and state replaced at once (see `LoadRequest`).
    case load(LoadRequest)
    /// An annotation written into the trace at the current seq.
    case mark(label: String)
    /// Replies once every earlier event is applied and published.
    case sync
    case trace(TraceAction)
    /// A rig's observation of the device, judged against the layouts (docs/conformance.md).
    case observe(ObserveRequest)
    /// The daemon's clock (CLOCK_MONOTONIC ns, as `capturedAt` and the trace's origin), so a
    /// client on another clock can work out the offset.
    case clock
    /// A frame of the device's screen a frame judge flagged, recorded in the trace.
    case frame(FrameVerdict)

    /// The command's name on the wire (its `"cmd"`).
    public var name: String {
        switch self {
        case .hello: "hello"
        case .layout: "layout"
        case .state: "state"
        case .subscribe: "subscribe"
        case .unsubscribe: "unsubscribe"
        case .stats: "stats"
        case .load: "load"
        case .mark: "mark"
        case .sync: "sync"
        case .trace: "trace"
        case .observe: "observe"
        case .clock: "clock"
        case .frame: "frame"
        }
    }

    public static let names = ["hello", "layout", "state", "subscribe", "unsubscribe", "stats", "load", "mark", "sync", "trace", "observe", "clock", "frame"]

    /// Decodes the command `name` whose whole message is `body`. Unknown fields are
    /// rejected so a typo is reported; errors carry the message's id.
    public static func decode(name: String, body: JSONValue) throws(InputError) -> Command {
        do {
            return try decodeFields(name: name, body: body)
        } catch {
            var e = error
            e.id = body["id"]
            throw e
        }
    }

    private static func decodeFields(name: String, body: JSONValue) throws(InputError) -> Command {
        let r = try FieldReader(body, path: "", what: "command \"\(name)\"")
        func fields(_ own: [StaticString]) throws(InputError) { try r.rejectUnknown(allowed: ["cmd", "id"] + own) }
        switch name {
        case "hello": try fields([]); return .hello
        case "layout": try fields([]); return .layout
        case "state": try fields([]); return .state
        case "stats":
            try fields(["reset"])
            return .stats(reset: try r.optionalBool("reset") ?? false)
        case "load": return .load(try LoadRequest.decode(body))
        case "sync": try fields([]); return .sync
        case "subscribe":
            try fields(["topics"])
            let topics = try decodeTopics(r, required: true)
            return .subscribe(topics)
        case "unsubscribe":
            try fields(["topics"])
            return .unsubscribe(try decodeTopics(r, required: false))
        case "mark":
            try fields(["label"])
            return .mark(label: try r.string("label"))
        case "trace":
            try fields(["action"])
            let action = try r.string("action")
            guard let a = TraceAction(rawValue: action) else {
                throw InputError.badValue("action", action, allowed: TraceAction.allCases.map(\.rawValue))
            }
            return .trace(a)
        case "observe":
            return .observe(try ObserveRequest.decode(body))
        case "clock": try fields([]); return .clock
        case "frame": return .frame(try FrameVerdict.decode(r, extra: ["cmd", "id"]))
        default:
            throw InputError(.unknownCommand, "unknown command \"\(name)\"; expected one of \(names.joined(separator: ", "))", field: "cmd")
        }
    }

    private static func decodeTopics(_ r: FieldReader, required: Bool) throws(InputError) -> [Topic] {
        guard let v = r.optional("topics") else {
            if required { throw InputError.missing("topics", in: "command") }
            return []
        }
        guard case .array(let elements) = v else {
            throw InputError.wrongType("topics", expected: "an array of topic names", got: v)
        }
        var topics: [Topic] = []
        for (i, e) in elements.enumerated() {
            guard case .string(let s) = e else {
                throw InputError.wrongType("topics[\(i)]", expected: "a topic name", got: e)
            }
            guard let t = Topic(rawValue: s) else {
                throw InputError.badValue("topics[\(i)]", s, allowed: Topic.allCases.map(\.rawValue))
            }
            if !topics.contains(t) { topics.append(t) }
        }
        if required, topics.isEmpty { throw InputError.outOfRange("topics", "must name at least one topic", got: "[]") }
        return topics
    }
}

/// What a subscriber can ask to be pushed. A new topic is a case here (its name on
/// the wire) and a bit in `TopicSet`.
public enum Topic: String, Sendable, CaseIterable {
    case layout, diagnostics, stats, glitches
    /// Every observation that is not a match.
    case conformance
}

/// A set of topics, one bit each, in `Topic.allCases` order.
public struct TopicSet: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public init(_ topic: Topic) {
        rawValue = 1 << UInt32(Topic.allCases.firstIndex(of: topic)!)
    }

    public init<S: Sequence>(_ topics: S) where S.Element == Topic {
        self.init(rawValue: 0)
        for t in topics { insert(TopicSet(t)) }
    }

    public static let layout = TopicSet(.layout)
    public static let diagnostics = TopicSet(.diagnostics)
    public static let stats = TopicSet(.stats)
    public static let conformance = TopicSet(.conformance)
    public static let glitches = TopicSet(.glitches)

    /// The topics in the set, in `Topic.allCases` order (the order replies list them).
    public var topics: [Topic] { Topic.allCases.filter { contains(TopicSet($0)) } }
}

public enum TraceAction: String, Sendable, CaseIterable { case rotate }
