/// Each command, defined once: its wire name, its fields, how it decodes, the access it
/// needs and whether it publishes a layout. `Command.kind` maps every case to its kind and
/// each member switches over every kind, so a command without its spec does not compile.
/// The daemon's access check, decoding and docs/events.md's Commands table (`CommandKindTests`)
/// read this.
public enum CommandKind: String, CaseIterable, Sendable {
    case hello, layout, state, subscribe, unsubscribe, stats, load, mark, sync, trace, observe, clock, frame

    /// The wire names, as in the `"cmd"` key.
    public static let names = allCases.map(\.rawValue)

    /// What a connection must be allowed to do to send it.
    public enum Access: Sendable, Equatable {
        /// Reading is enough.
        case read
        /// It changes what the daemon records or lays out, like events.
        case publish
        /// Reading, unless it asks to reset what it reads (`stats` with `"reset":true`).
        case publishToReset
    }

    public var access: Access {
        switch self {
        case .hello, .layout, .state, .subscribe, .unsubscribe, .sync, .clock: .read
        case .stats: .publishToReset
        case .load, .mark, .trace, .observe, .frame: .publish
        }
    }

    /// Whether it publishes a layout (to subscribers, with a seq of its own), as an event
    /// does; the others only reply.
    public var publishes: Bool {
        switch self {
        case .load: true
        case .hello, .layout, .state, .subscribe, .unsubscribe, .stats, .mark, .sync, .trace, .observe, .clock, .frame: false
        }
    }

    /// The fields its object may carry besides `cmd` and `id`; nil for those whose request
    /// type reads the whole message itself (`LoadRequest`, `ObserveRequest`, `FrameVerdict`).
    public var fields: [StaticString]? {
        switch self {
        case .hello, .layout, .state, .sync, .clock: []
        case .subscribe, .unsubscribe: ["topics"]
        case .stats: ["reset"]
        case .mark: ["label"]
        case .trace: ["action"]
        case .load, .observe, .frame: nil
        }
    }

    func decode(_ r: FieldReader, body: JSONValue) throws(InputError) -> Command {
        if let own = fields { try r.rejectUnknown(allowed: ["cmd", "id"] + own) }
        switch self {
        case .hello: return .hello
        case .layout: return .layout
        case .state: return .state
        case .subscribe: return .subscribe(try CommandKind.topics(r, required: true))
        case .unsubscribe: return .unsubscribe(try CommandKind.topics(r, required: false))
        case .stats: return .stats(reset: try r.optionalBool("reset") ?? false)
        case .load: return .load(try LoadRequest.decode(body))
        case .mark: return .mark(label: try r.string("label"))
        case .sync: return .sync
        case .trace:
            let action = try r.string("action")
            guard let a = TraceAction(rawValue: action) else {
                throw InputError.badValue("action", action, allowed: TraceAction.allCases.map(\.rawValue))
            }
            return .trace(a)
        case .observe: return .observe(try ObserveRequest.decode(body))
        case .clock: return .clock
        case .frame: return .frame(try FrameVerdict.decode(r, extra: ["cmd", "id"]))
        }
    }

    private static func topics(_ r: FieldReader, required: Bool) throws(InputError) -> [Topic] {
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

extension Command {
    /// The command's kind: exhaustive, so a new case needs its spec.
    public var kind: CommandKind {
        switch self {
        case .hello: .hello
        case .layout: .layout
        case .state: .state
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        case .stats: .stats
        case .load: .load
        case .mark: .mark
        case .sync: .sync
        case .trace: .trace
        case .observe: .observe
        case .clock: .clock
        case .frame: .frame
        }
    }

    /// Whether this command needs a connection that may publish (its kind's `access`).
    public var needsPublish: Bool {
        switch kind.access {
        case .read: false
        case .publish: true
        case .publishToReset: if case .stats(let reset) = self { reset } else { false }
        }
    }
}
