import CreaseCore
import CreaseDaemonCore

/// One client of the simulated daemon, as the simulator keeps it: what it asked and waits
/// for, in order, what it was last sent, and what the shell would hold for it while it does
/// not read (the real `OutboundQueue` policy decides when it is dropped).
struct SimulatedClient {
    enum State: Equatable {
        case open
        /// It hung up, or the daemon is closing it once its writes are out.
        case closing
        /// Closed, dropped or refused: the daemon owes it nothing.
        case gone
    }

    let id: Int
    let role: SimStep.Role
    var state: State = .open
    var stalled = false
    var queue: OutboundQueue
    /// Bytes the daemon sent while it did not read, not yet taken.
    var unread = 0
    var nextID = 1
    /// The ids it sent, in order, whose replies have not come.
    var outstanding: [Int] = []
    /// The id of an `unsubscribe` from `layout` whose reply has not come: pushes until then are owed.
    var unsubscribing: Int?
    var layoutSubscriber = false
    var lastLayoutSeq: Int?
    var lastLayoutDigest: String?
    /// Lines it sent, every newline counted (error replies name them).
    var lines = 0

    init(id: Int, role: SimStep.Role, queueLimit: Int) {
        self.id = id
        self.role = role
        queue = OutboundQueue(limit: queueLimit)
    }

    var sendsEvents: Bool { role == .publisher }

    /// The next id, owed a reply from now.
    mutating func ask() -> Int {
        let id = nextID
        nextID += 1
        outstanding.append(id)
        return id
    }

    var peer: PeerCredentials {
        switch role {
        case .publisher: PeerCredentials(pid: Int32(1000 + id), uid: Simulation.publisherUid, gid: 100)
        case .subscriber, .reader: PeerCredentials(pid: Int32(1000 + id), uid: Simulation.readerUid, gid: 100)
        case .stranger: PeerCredentials(pid: Int32(1000 + id), uid: 3000, gid: 300)
        }
    }
}

/// The simulator's fixed surroundings.
enum Simulation {
    static let publisherUid: UInt32 = 1000
    static let readerUid: UInt32 = 2000
    /// Publishers may publish; readers and subscribers may read; anyone else is refused.
    static let policy = AccessPolicy(publish: [.uid(publisherUid)], read: [.uid(readerUid)])
    /// Read-only connections one uid may hold: the simulation's subscribers and readers pass it.
    static let readersPerUid = 12
}
