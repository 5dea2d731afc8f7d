#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import Testing

/// Tools for the hostile-client tests: many connections on one thread, and the
/// daemon's memory and CPU time from /proc.

/// Raises this process's open-file limit (its children inherit it) to at least
/// `want`, within the hard limit; returns the soft limit now in force.
@discardableResult
func raiseOpenFileLimit(to want: Int) -> Int {
    var lim = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim)
    if Int(lim.rlim_cur) < want {
        lim.rlim_cur = min(rlim_t(want), lim.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &lim)
    }
    return Int(lim.rlim_cur)
}

/// One field of /proc/PID/status in KiB (VmRSS, VmHWM), or nil.
func procStatusKiB(_ pid: Int32, _ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}

/// User plus system CPU time of a process, in seconds (from /proc/PID/stat).
func cpuSeconds(_ pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = text.lastIndex(of: ")") else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state is field 3, utime 14, stime 15 (1-based, in clock ticks).
    let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
    return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
}

extension DaemonProcess {
    var pid: Int32 { process.processIdentifier }
    /// Resident memory now, and its peak so far, in MiB.
    var rssMiB: Double { Double(procStatusKiB(pid, "VmRSS") ?? 0) / 1024 }
    var peakRSSMiB: Double { Double(procStatusKiB(pid, "VmHWM") ?? 0) / 1024 }

    /// Fails unless the daemon is alive and answers a fresh client's hello.
    func expectServing(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(process.isRunning, "creased died: \(what); log: \(log().suffix(2000))", sourceLocation: sourceLocation)
        let c = try Client(socketPath)
        let r = try c.request(#"{"cmd":"hello","id":"still-there"}"#, timeout: 10)
        #expect(r["id"] == .string("still-there"), "after \(what)", sourceLocation: sourceLocation)
    }

    /// The `stats` object, from a fresh connection.
    func stats() throws -> JSONValue {
        let c = try Client(socketPath)
        return try #require(try c.request(#"{"cmd":"stats"}"#, timeout: 10)["stats"])
    }
}

/// Writing to a connection the daemon closed must fail with EPIPE, not kill the tests.
func ignoreSIGPIPE() { signal(SIGPIPE, SIG_IGN) }

/// Prints one line of the hostile-client report (seen in `swift test` output and
/// quoted in docs/hardening.md).
func report(_ test: String, _ d: DaemonProcess, _ extra: String = "") {
    print("hostile \(test): peak RSS \(String(format: "%.1f", d.peakRSSMiB)) MiB\(extra.isEmpty ? "" : "; " + extra)")
}

/// Many non-blocking client connections, driven from one thread by poll(2).
/// Each peer keeps what it has not yet sent, the lines it received (all of them,
/// or only a count and the last one) and whether the daemon closed it.
final class Swarm {
    final class Peer {
        let fd: Int32
        var outbox: [UInt8] = []
        var sent = 0
        var inbox: [UInt8] = []
        var lines: [String] = []
        var lineCount = 0
        var lastLine: String?
        var eof = false
        var closed = false
        /// A peer that does not read leaves the daemon's replies unread.
        var reading = true
        init(fd: Int32) { self.fd = fd }
    }

    let path: String
    private(set) var peers: [Peer] = []
    /// Keep every line received (else only the count and the last line).
    let keepLines: Bool

    init(_ path: String, count: Int, keepLines: Bool = true) throws {
        self.path = path
        self.keepLines = keepLines
        for _ in 0..<count { try add() }
    }

    deinit { for p in peers where !p.closed { Glibc.close(p.fd) } }

    /// Connects one more peer; connections the daemon has not accepted yet wait in
    /// its listen backlog, so connect in bounded steps and pump in between.
    @discardableResult
    func add() throws -> Peer {
        adopt(try connectUnixSocket(path))
    }

    /// Takes over a connected socket as one more peer.
    @discardableResult
    func adopt(_ fd: Int32) -> Peer {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let p = Peer(fd: fd)
        peers.append(p)
        return p
    }

    subscript(i: Int) -> Peer { peers[i] }

    func send(_ i: Int, _ text: String) { peers[i].outbox += Array(text.utf8) }
    func send(_ i: Int, _ bytes: [UInt8]) { peers[i].outbox += bytes }

    /// Closes one peer at once (whatever it still had to send or receive).
    func hangUp(_ i: Int) {
        let p = peers[i]
        if !p.closed { Glibc.close(p.fd); p.closed = true }
    }

    /// Polls every open peer, writes what waits, reads what came, until `done`
    /// holds or `timeout` seconds pass; returns whether `done` held. Writes at most
    /// `writeChunk` bytes per peer per round (1 makes one-byte-at-a-time writers).
    @discardableResult
    func pump(timeout: Double, writeChunk: Int = 1 << 20, until done: () -> Bool) -> Bool {
        let deadline = monotonicSeconds() + timeout
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            if done() { return true }
            if monotonicSeconds() >= deadline { return false }
            let open = peers.filter { !$0.closed && !$0.eof }
            if open.isEmpty { return done() }
            var fds = open.map { p in
                pollfd(fd: p.fd, events: (p.reading ? Int16(POLLIN) : 0) | (p.sent < p.outbox.count ? Int16(POLLOUT) : 0), revents: 0)
            }
            let n = poll(&fds, nfds_t(fds.count), 20)
            if n <= 0 { continue }
            for (k, p) in open.enumerated() where fds[k].revents != 0 {
                let re = fds[k].revents
                if re & Int16(POLLOUT) != 0, p.sent < p.outbox.count {
                    let count = min(writeChunk, p.outbox.count - p.sent)
                    let w = p.outbox.withUnsafeBytes { Glibc.send(p.fd, $0.baseAddress! + p.sent, count, Int32(MSG_NOSIGNAL)) }
                    if w > 0 {
                        p.sent += w
                        if p.sent == p.outbox.count { p.outbox.removeAll(keepingCapacity: true); p.sent = 0 }
                    } else if w < 0, errno != EAGAIN, errno != EINTR {
                        p.eof = true
                    }
                }
                if re & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    // A peer that does not read learns only that the daemon closed it.
                    if !p.reading { p.eof = true; continue }
                    let r = read(p.fd, &buf, buf.count)
                    if r > 0 {
                        take(p, buf[0..<r])
                    } else if r == 0 || (errno != EAGAIN && errno != EINTR) {
                        p.eof = true
                    }
                }
            }
        }
    }

    private func take(_ p: Peer, _ bytes: ArraySlice<UInt8>) {
        p.inbox += bytes
        var start = 0
        while let nl = p.inbox[start...].firstIndex(of: 0x0A) {
            let line = String(decoding: p.inbox[start..<nl], as: UTF8.self)
            p.lineCount += 1
            p.lastLine = line
            if keepLines { p.lines.append(line) }
            start = nl + 1
        }
        if start > 0 { p.inbox.removeSubrange(0..<start) }
    }
}
