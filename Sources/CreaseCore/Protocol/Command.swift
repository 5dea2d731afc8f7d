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
    public var name: String { kind.rawValue }

    public static var names: [String] { CommandKind.names }

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
        guard let kind = CommandKind(rawValue: name) else {
            throw InputError(.unknownCommand, "unknown command \"\(name)\"; expected one of \(names.joined(separator: ", "))", field: "cmd")
        }
        return try kind.decode(r, body: body)
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
