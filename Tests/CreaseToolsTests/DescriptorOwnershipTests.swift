import CreaseSystem
#if canImport(Glibc)
import Glibc
#endif
@testable import CreaseTools
import Foundation
import Testing
import CreaseTestSupport

/// The clients that reach creased from inside the test process close their socket once,
/// also when the connect fails. The daemon tests run beside these in the same process: a
/// second close takes a socket one of them has just opened (DaemonConnection once closed
/// a failed connect's socket in init and again in deinit, while LiveDaemon polled it until
/// creased listened; HostileClientTests' clients then read EBADF or someone else's stream).
@Suite struct DescriptorOwnershipTests {
    @Test func aClientThatCannotConnectClosesItsSocketOnce() throws {
        let missing = absentSocketPath()
        let r = try failingOpensBesideBystander([{ try DaemonConnection(path: missing) }, { try SocketStreamer(path: missing) },
                                                 { try BenchSocket(path: missing) }])
        #expect(r.opened == 0)
        #expect(r.lost == 0, "\(r.lost) descriptors another thread held were closed under it")
    }
}
