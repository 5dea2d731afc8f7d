#if canImport(Glibc)
import Glibc
#endif
@testable import CreaseTools
import Foundation
import Testing

/// The clients that reach creased from inside the test process close their socket once,
/// also when the connect fails. The daemon tests run beside these in the same process: a
/// second close takes a socket one of them has just opened (DaemonConnection once closed
/// a failed connect's socket in init and again in deinit, while LiveDaemon polled it until
/// creased listened; HostileClientTests' clients then read EBADF or someone else's stream).
@Suite struct DescriptorOwnershipTests {
    @Test func aClientThatCannotConnectClosesItsSocketOnce() throws {
        // A directory that does not exist: every connect fails with ENOENT.
        let missing = "/tmp/crease-absent-\(UInt64.random(in: 0...UInt64.max))/creased.sock"
        var connected = 0
        let lost = try bystanderDescriptorsLost {
            for _ in 0..<2000 {
                if (try? DaemonConnection(path: missing)) != nil { connected += 1 }
                if (try? SocketStreamer(path: missing)) != nil { connected += 1 }
                if (try? BenchSocket(path: missing)) != nil { connected += 1 }
            }
        }
        #expect(connected == 0)
        #expect(lost == 0, "\(lost) descriptors another thread held were closed under it")
    }
}
