/// Byte accounting for one connection's outgoing data: what the kernel would not
/// take at once waits in libuv's write queue, and that queue is bounded. A peer that
/// stops reading is dropped with a reason instead of stalling the loop or growing
/// memory.
///
/// The shell asks `plan` before writing; after a `tryWrite` it reports how much the
/// kernel took, and when a queued write completes it reports that too.
public struct OutboundQueue: Sendable {
    public enum Action: Equatable, Sendable {
        /// Nothing is queued: write directly (uv_try_write) first.
        case tryWrite
        /// Queue this many bytes (uv_write with an owned copy).
        case enqueue(Int)
        /// Everything went out.
        case done
        /// The bound would be passed: close the connection.
        case drop(reason: String)
    }

    public let limit: Int
    /// Bytes handed to libuv and not yet written.
    public private(set) var queuedBytes = 0
    /// The most that was ever queued.
    public private(set) var highWater = 0
    /// Set once the connection was dropped; nothing more is accepted.
    public private(set) var dropReason: String?

    public init(limit: Int) {
        self.limit = limit
    }

    /// Before sending `count` bytes.
    public mutating func plan(_ count: Int) -> Action {
        if let dropReason { return .drop(reason: dropReason) }
        if queuedBytes == 0 { return .tryWrite }
        return admit(count)
    }

    /// After uv_try_write took `written` of `count` bytes (0 when it would block).
    public mutating func wrote(_ written: Int, of count: Int) -> Action {
        written >= count ? .done : admit(count - written)
    }

    /// A queued write of `count` bytes finished (or was cancelled).
    public mutating func completed(_ count: Int) {
        queuedBytes -= count
        precondition(queuedBytes >= 0, "outbound queue accounting went negative")
    }

    /// The limit bounds what already waits unread when a new message comes: a peer with more
    /// than `limit` bytes it has not read is behind and is dropped. The message itself is
    /// always admitted on top, however large (a 10,000-item layout is 1.5 MB): a bound smaller
    /// than one reply once dropped healthy subscribers and cut `layout` replies off. What one
    /// client can hold is so at most `limit` plus its largest message.
    private mutating func admit(_ count: Int) -> Action {
        if queuedBytes > limit {
            let reason = "peer is not reading: \(queuedBytes) bytes wait unread, past the \(limit)-byte limit"
            dropReason = reason
            return .drop(reason: reason)
        }
        queuedBytes += count
        if queuedBytes > highWater { highWater = queuedBytes }
        return .enqueue(count)
    }
}
