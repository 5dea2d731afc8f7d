#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// How many of a bystander's descriptors `body` closed. Tests run in parallel in one process,
/// so a descriptor closed twice (closed, its number reused by another test's new socket,
/// closed again) closes that other test's socket: its reads fail with EBADF, or its number
/// is reused once more and it talks to someone else's connection. The bystander thread
/// does what such a test does: it keeps opening socket pairs (taking the lowest free numbers, as
/// every new descriptor does) and checks each is still open and still its own
/// before it closes it. Any count above zero is a double close in `body` (or in a test
/// running beside it).
public func bystanderDescriptorsLost(while body: () throws -> Void) throws -> Int {
    let bystander = SocketBystander()
    let thread = Thread { bystander.run() }
    thread.start()
    do { try body() } catch { _ = bystander.halt(); throw error }
    return bystander.halt()
}

/// Calls each of `opens`, all meant to fail, 5000 times beside the bystander; returns how
/// many did not fail and how many of the bystander's descriptors they took.
public func failingOpensBesideBystander(_ opens: [() throws -> AnyObject]) throws -> (opened: Int, lost: Int) {
    var opened = 0
    let lost = try bystanderDescriptorsLost {
        for _ in 0..<5000 {
            for open in opens where (try? open()) != nil { opened += 1 }
        }
    }
    return (opened, lost)
}

/// A socket path in a directory that does not exist: connecting (or binding) fails with ENOENT.
public func absentSocketPath() -> String {
    "/tmp/crease-absent-\(UInt64.random(in: 0...UInt64.max))/creased.sock"
}

private final class SocketBystander: @unchecked Sendable {
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    private var stopping = false
    private var lost = 0

    func run() {
        // Socket pairs opened back to back, so a number closed twice is taken between the
        // two closes as often as can be; checked and closed once the batch is open.
        let batch = 16
        var fds = [Int32](repeating: -1, count: 2 * batch)
        var identities = [Identity?](repeating: nil, count: 2 * batch)
        while !lock.withLock({ stopping }) {
            var opened = 0
            while opened < batch,
                  socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds[2 * opened]) == 0 {
                identities[2 * opened] = Identity(fds[2 * opened])
                identities[2 * opened + 1] = Identity(fds[2 * opened + 1])
                opened += 1
            }
            for i in 0..<(2 * opened) {
                if let now = Identity(fds[i]), now == identities[i] {
                    close(fds[i])
                } else {
                    // Not ours any more: closing it would close someone else's descriptor in turn.
                    lock.withLock { lost += 1 }
                }
            }
        }
        finished.signal()
    }

    /// Stops the thread; returns how many of its descriptors were taken from it.
    func halt() -> Int {
        lock.withLock { stopping = true }
        finished.wait()
        return lock.withLock { lost }
    }
}

/// The file a descriptor names: its device and inode.
public struct Identity: Equatable {
    let device: UInt64
    let inode: UInt64

    /// Nil when `fd` is not open.
    public init?(_ fd: Int32) {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
    }
}
