#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing

/// The harness's sockets are closed once, also when connecting or binding fails: every
/// test runs beside others in this process, and a second close would take a descriptor
/// one of them has just opened (see Tests/CreaseToolsTests/DescriptorOwnershipTests.swift).
@Suite struct DescriptorOwnershipTests {
    @Test func harnessSocketsThatFailCloseOnce() throws {
        let missing = "/tmp/crease-absent-\(UInt64.random(in: 0...UInt64.max))/creased.sock"
        var opened = 0
        let lost = try bystanderDescriptorsLost {
            for _ in 0..<2000 {
                if (try? Client(missing)) != nil { opened += 1 }
                if (try? NotifyListener(name: missing)) != nil { opened += 1 }
            }
        }
        #expect(opened == 0)
        #expect(lost == 0, "\(lost) descriptors another thread held were closed under it")
    }
}
