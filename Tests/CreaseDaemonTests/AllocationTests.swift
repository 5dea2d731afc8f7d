#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import Testing

/// Issue 42: nothing allocates on the event path once it is warm. Counted, not read from
/// the code: the release `creased` runs with a counting allocator preloaded
/// (`Tests/MallocCounter`, LD_PRELOAD), which counts every malloc, calloc, realloc and
/// aligned allocation of the event loop's thread and of every other thread (the trace
/// writer) into a file this test reads while the daemon runs. The release build, because
/// that is what a rig runs (a debug build allocates on every event); scripts/test builds it.
@Suite struct AllocationTests {
    /// The counts file: allocations on the loop thread, then on all the others.
    static func counts(_ path: String) throws -> (loop: UInt64, others: UInt64) {
        let handle = try #require(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        let bytes = [UInt8](handle.readData(ofLength: 16))
        try #require(bytes.count == 16, "the counter file has its two counters")
        func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        return (word(0), word(8))
    }

    @Test("a warm release creased allocates nothing for 5,000 hinge ticks after 1,000, on its loop or its trace writer (tracing on)")
    func hingeTicksAllocateNothing() throws {
        let release = packageRoot.appendingPathComponent(".build/release/creased").path
        try #require(FileManager.default.isExecutableFile(atPath: release),
                     "no release build at \(release): swift build -c release (scripts/test builds it)")
        let counter = URL(fileURLWithPath: try creasedBinary()).deletingLastPathComponent().appendingPathComponent("libCreaseMallocCounter.so").path
        try #require(FileManager.default.fileExists(atPath: counter), "the counting allocator was not built at \(counter)")
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let countsPath = "\(dir)/allocations", socket = "\(dir)/s.sock"
        // A budget no tick misses however loaded the machine: a tick over budget is an
        // overBudget glitch, whose message is built (an allocation of reporting, not of the path).
        let daemon = try DaemonProcess(arguments: ["--socket", socket, "--trace-dir", "\(dir)/traces", "--budget-us", "10000000"], socketPath: socket,
                                       environment: ["LD_PRELOAD": counter, "CREASE_MALLOC_COUNTS": countsPath], executable: release)
        defer { daemon.stop() }
        let client = try Client(socket)
        func ticks(_ n: Int, from first: Int) throws {
            for i in first..<(first + n) {
                client.sendLine(#"{"event":"hinge","angle":\#(i % 2 == 0 ? "90.25" : "90.75"),"id":\#(i)}"#)
                let reply = try client.readJSON()
                try #require(reply["ok"] == .bool(true), "\(reply)")
            }
        }
        _ = try client.request(#"{"event":"hinge","angle":90,"id":0}"#)
        try ticks(1_000, from: 1)
        let warm = try Self.counts(countsPath)
        #expect(warm.loop > 0, "the counter counts this daemon's allocations (its start-up made some)")
        try ticks(5_000, from: 1_001)
        let after = try Self.counts(countsPath)
        #expect(after.loop - warm.loop == 0, "allocations on the event loop's thread over 5,000 warm hinge ticks")
        #expect(after.others - warm.others == 0, "allocations on the trace writer's thread over 5,000 warm hinge ticks")
    }
}
