#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseDaemonCore
import Foundation

/// Settings every daemon the bench starts shares.
struct DaemonSettings {
    var binaries: BenchBinaries
    var directory: BenchDirectory
    var budgetUs: Int
    /// Extra `creased` arguments (`--daemon-arg`), e.g. `--no-trace`.
    var extraArguments: [String]

    var description: String {
        "creased --budget-us \(budgetUs)" + (extraArguments.isEmpty ? "" : " " + extraArguments.joined(separator: " "))
            + (extraArguments.contains("--no-trace") ? "" : " (tracing on, as by default, into a temporary directory)")
    }
}

/// A fresh `creased` on a temporary socket for one measurement, and the publisher's
/// connection to it. Its seq starts at 0, so the i-th event the publisher sends is seq i+1.
final class DaemonSession {
    let child: BenchChild
    let publisher: BenchSocket
    let socketPath: String
    let traceDirectory: String
    private var requests = 0
    /// Error replies the publisher got (events the daemon rejected).
    private(set) var rejected = 0

    init(_ settings: DaemonSettings, tag: String) throws {
        socketPath = "\(settings.directory.path)/\(tag).sock"
        traceDirectory = "\(settings.directory.path)/\(tag)-traces"
        // creased refuses a trace directory beside --no-trace.
        let traceArguments = settings.extraArguments.contains("--no-trace") ? [] : ["--trace-dir", traceDirectory]
        let args = ["--socket", socketPath, "--budget-us", String(settings.budgetUs)] + traceArguments
            + ["--log-level", "notice"] + settings.extraArguments
        child = try BenchChild(name: "creased (\(tag))", executable: settings.binaries.path("creased"), arguments: args,
                               socketPath: socketPath, logPath: "\(settings.directory.path)/\(tag).log")
        do {
            publisher = try BenchSocket(path: socketPath)
        } catch {
            child.stop()
            throw error
        }
    }

    func request(_ cmd: String) throws -> JSONValue {
        requests += 1
        let id = "bench-\(requests)"
        return try publisher.request(Array("{\"cmd\":\"\(cmd)\",\"id\":\"\(id)\"}".utf8), id: id, errors: &rejected)
    }

    /// Waits until every event sent so far is applied and published; returns the seq.
    func sync() throws -> Int {
        let reply = try request("sync")
        guard case .number(let seq)? = reply["seq"] else { throw CheckFailed("sync: unexpected reply") }
        return Int(seq)
    }

    /// The daemon's `stats` object.
    func stats() throws -> DaemonStats {
        let reply = try request("stats")
        guard let s = reply["stats"] else { throw CheckFailed("stats: unexpected reply") }
        return DaemonStats(s)
    }

    func stop() -> String? { child.stop() }
}

/// The fields of a daemon's `stats` that the bench reports.
struct DaemonStats {
    var value: JSONValue

    init(_ value: JSONValue) { self.value = value }

    func int(_ key: String) -> Int {
        if case .number(let n)? = value[key] { return Int(n) }
        return 0
    }

    func latency(label: String) -> Distribution? { Distribution(label: label, daemonLatency: value["latency"]) }
}

/// Send times of the publisher's events, by seq, shared with the subscriber reader:
/// written before each event is sent, read after a push for it arrived (the socket
/// round trip through the daemon orders the two).
final class SendTimes: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<UInt64>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity + 1
        pointer = .allocate(capacity: capacity + 1)
        pointer.initialize(repeating: 0, count: capacity + 1)
    }

    deinit { pointer.deallocate() }

    subscript(seq: Int) -> UInt64 {
        get { seq > 0 && seq < capacity ? pointer[seq] : 0 }
        set { if seq > 0 && seq < capacity { pointer[seq] = newValue } }
    }
}

/// N subscribers of the `layout` topic, read by one thread with poll(2), so that none
/// falls behind. Each counts its pushes; the time from an event's send to its push's
/// arrival goes into an end-to-end histogram.
final class SubscriberPool: @unchecked Sendable {
    struct Tally {
        var pushes = 0
        var lastSeq = -1
        var sawShutdown = false
        var closed = false
        var errors = 0
    }

    private let sockets: [BenchSocket]
    private let sendTimes: SendTimes
    private let lock = NSCondition()
    private var tallies: [Tally]
    private var endToEnd = LatencyHistogram(budgetNs: .max)
    private var finished = false

    init(path: String, count: Int, sendTimes: SendTimes) throws {
        self.sendTimes = sendTimes
        var list: [BenchSocket] = []
        for i in 0..<count {
            let s = try BenchSocket(path: path)
            try s.send(Array("{\"cmd\":\"subscribe\",\"topics\":[\"layout\"],\"id\":\"sub-\(i)\"}\n".utf8))
            list.append(s)
        }
        sockets = list
        tallies = Array(repeating: Tally(), count: count)
        let thread = Thread { [self] in self.read() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Waits until every subscriber has its first push (the current layout): then each is
    /// subscribed before the first event goes out.
    func waitUntilSubscribed(timeoutSeconds: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        lock.lock()
        defer { lock.unlock() }
        while tallies.contains(where: { $0.pushes == 0 }) {
            if finished || !lock.wait(until: deadline) { throw CheckFailed("subscribers did not get their first layout within \(Int(timeoutSeconds)) s") }
        }
    }

    /// Waits until every connection has closed (the daemon was stopped), at most `timeoutSeconds`.
    func waitUntilClosed(timeoutSeconds: Double = 15) -> (tallies: [Tally], endToEnd: LatencyHistogram, complete: Bool) {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        lock.lock()
        defer { lock.unlock() }
        while !finished { if !lock.wait(until: deadline) { break } }
        return (tallies, endToEnd, finished)
    }

    private func read() {
        var fds = sockets.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var buffers = Array(repeating: [UInt8](), count: sockets.count)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var open = sockets.count
        // Ends when every connection has closed: the daemon's shutdown, or its death, closes them.
        while open > 0 {
            let ready = poll(&fds, nfds_t(fds.count), 200)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            for i in fds.indices where fds[i].revents != 0 && fds[i].fd >= 0 {
                let n = chunk.withUnsafeMutableBytes { recv(fds[i].fd, $0.baseAddress!, $0.count, 0) }
                if n < 0, errno == EINTR || errno == EAGAIN { continue }
                let now = Clock.now()
                lock.lock()
                if n <= 0 {
                    tallies[i].closed = true
                    fds[i].fd = -1
                    open -= 1
                } else {
                    buffers[i].append(contentsOf: chunk[0..<n])
                    consumeLines(&buffers[i], subscriber: i, now: now)
                }
                lock.broadcast()
                lock.unlock()
            }
        }
        lock.lock()
        finished = true
        lock.broadcast()
        lock.unlock()
    }

    /// Counts the complete lines in `buffer` and drops them.
    private func consumeLines(_ buffer: inout [UInt8], subscriber i: Int, now: UInt64) {
        var consumed = 0
        buffer.withUnsafeBytes { b in
            while consumed < b.count, let nl = memchr(b.baseAddress! + consumed, 0x0A, b.count - consumed) {
                let end = b.baseAddress!.distance(to: UnsafeRawPointer(nl))
                let line = UnsafeRawBufferPointer(rebasing: b[consumed..<end])
                consumed = end + 1
                if ReplyBytes.hasPrefix(line, "{\"push\":\"layout\",\"seq\":") {
                    let seq = Int(ReplyBytes.number(after: "\"seq\":", in: line) ?? -1)
                    tallies[i].pushes += 1
                    tallies[i].lastSeq = seq
                    let sent = sendTimes[seq]
                    if sent != 0 { endToEnd.record(now &- sent) }
                } else if ReplyBytes.hasPrefix(line, "{\"push\":\"shutdown\"") {
                    tallies[i].sawShutdown = true
                } else if ReplyBytes.find("\"ok\":false", in: line) != nil {
                    tallies[i].errors += 1
                }
            }
        }
        buffer.removeFirst(consumed)
    }
}
