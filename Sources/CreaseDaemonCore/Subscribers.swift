import CreaseCore

/// Who is subscribed to what, keyed by client number, in the order they first
/// subscribed (pushes go out in that order). A client with no topic left is not a
/// subscriber.
public struct Subscribers: Sendable {
    public struct Entry: Sendable, Equatable {
        public let client: Int
        public var topics: TopicSet
    }

    public private(set) var entries: [Entry] = []

    public init() {}

    public var count: Int { entries.count }

    public func topics(of client: Int) -> TopicSet {
        entries.first { $0.client == client }?.topics ?? []
    }

    /// Whether anyone is subscribed to any of `topics`.
    public func any(_ topics: TopicSet) -> Bool {
        entries.contains { !$0.topics.isDisjoint(with: topics) }
    }

    /// Adds topics; returns the client's topics before.
    @discardableResult
    public mutating func add(_ topics: TopicSet, for client: Int) -> TopicSet {
        if let i = entries.firstIndex(where: { $0.client == client }) {
            let before = entries[i].topics
            entries[i].topics.formUnion(topics)
            return before
        }
        if !topics.isEmpty { entries.append(Entry(client: client, topics: topics)) }
        return []
    }

    /// Removes topics (all of them when `topics` is empty); returns what is left.
    @discardableResult
    public mutating func remove(_ topics: TopicSet, for client: Int) -> TopicSet {
        guard let i = entries.firstIndex(where: { $0.client == client }) else { return [] }
        entries[i].topics.subtract(topics.isEmpty ? entries[i].topics : topics)
        let left = entries[i].topics
        if left.isEmpty { entries.remove(at: i) }
        return left
    }

    /// Calls `body` with each client subscribed to `topic`, in subscription order.
    public func forEach(subscribedTo topic: TopicSet, _ body: (Int) -> Void) {
        for e in entries where e.topics.contains(topic) { body(e.client) }
    }
}
