import CreaseSystem
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import CreaseTestSupport

/// The harness's sockets are closed once, also when connecting or binding fails: every
/// test runs beside others in this process, and a second close would take a descriptor
/// one of them has just opened (see Tests/CreaseToolsTests/DescriptorOwnershipTests.swift).
@Suite struct DescriptorOwnershipTests {
    @Test func harnessSocketsThatFailCloseOnce() throws {
        let missing = absentSocketPath()
        let r = try failingOpensBesideBystander([{ try Client(missing) }, { try NotifyListener(name: missing) }])
        #expect(r.opened == 0)
        #expect(r.lost == 0, "\(r.lost) descriptors another thread held were closed under it")
    }

    @Test func aClientWhoseDescriptorWasTakenSaysSoAtEndOfStream() throws {
        let d = try DaemonProcess(arguments: ["--no-trace"])
        let c = try Client(d.socketPath)
        // What a double close elsewhere leads to: the number now names another file.
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        #expect(dup2(null, c.fd) == c.fd)
        close(null)
        let error = try #require(throws: HarnessError.self) { try c.request(#"{"cmd":"hello"}"#) }
        #expect(error.description.contains("end of stream; fd \(c.fd) is no longer this client's socket"), "\(error)")
    }
}
