// The soak driver run by scripts/soak: one thread, one poll loop, Unix socket only.
//
//   soak SOCKET DAEMON_PID SECONDS [RATE_HZ]
//
// Streams hinge events at RATE_HZ (default 1000) on an absolute schedule, each with
// an id, the angle sweeping shut to flat and back every 8 s; about 2 % of the ticks
// send a random other event instead (orientation, keyboard, PiP, Live Activities,
// Split View, direction, transparency, tab, push/pop, present/dismiss). Subscribers
// (layout, diagnostics, stats) join and leave at random, at most 16 at once; some
// leave mid-read. Once a minute it prints the daemon's RSS and peak, the events
// sent and acknowledged, and percentiles of the daemon's own latency (`latencyUs`
// in each reply) and of the round trip seen here. At the end: RSS over the run, the
// growth after the first minute, and exit 1 if the daemon died, an event went
// unanswered, or memory grew.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

setvbuf(stdout, nil, _IOLBF, 0)
signal(SIGPIPE, SIG_IGN)
let args = CommandLine.arguments
guard args.count >= 4, let daemonPID = Int32(args[2]), let seconds = Double(args[3]) else {
    FileHandle.standardError.write(Data("usage: soak SOCKET DAEMON_PID SECONDS [RATE_HZ]\n".utf8))
    exit(2)
}
let socketPath = args[1]
let rate = args.count > 4 ? Double(args[4]) ?? 1000 : 1000

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func statusKiB(_ field: String) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(daemonPID)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}

func connectUnix() -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var addr = sockaddr_un()
    addr.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &addr.sun_path) { buf in
        for (i, b) in socketPath.utf8.prefix(buf.count - 1).enumerated() { buf[i] = b }
    }
    let rc = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard rc == 0 else { close(fd); return nil }
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    return fd
}

/// A connection with its unsent bytes and its partial input line.
final class Peer {
    let fd: Int32
    var out: [UInt8] = []
    var inbox: [UInt8] = []
    var open = true
    var lines = 0
    init(fd: Int32) { self.fd = fd }

    func flush() {
        while !out.isEmpty {
            let n = out.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if n > 0 { out.removeFirst(n) } else {
                if n < 0, errno != EAGAIN, errno != EINTR { open = false }
                return
            }
        }
    }

    /// Reads what is there; calls `line` for each complete line.
    func drain(_ line: (ArraySlice<UInt8>) -> Void) {
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buf, buf.count)
            if n > 0 {
                inbox += buf[0..<n]
                var start = inbox.startIndex
                while let nl = inbox[start...].firstIndex(of: 0x0A) {
                    lines += 1
                    line(inbox[start..<nl])
                    start = nl + 1
                }
                inbox.removeSubrange(inbox.startIndex..<start)
            } else {
                if n == 0 || (errno != EAGAIN && errno != EINTR) { open = false }
                return
            }
        }
    }
}

/// The number after `"key":` in a JSON line, without parsing the rest.
func number(_ key: String, in line: ArraySlice<UInt8>) -> Double? {
    let pattern = Array("\"\(key)\":".utf8)
    guard line.count > pattern.count else { return nil }
    var i = line.startIndex
    while i + pattern.count <= line.endIndex {
        if line[i] == pattern[0], Array(line[i..<i + pattern.count]) == pattern {
            var j = i + pattern.count
            var text = ""
            while j < line.endIndex, let c = Optional(line[j]), c == 0x2D || c == 0x2E || (0x30...0x39).contains(c) || c == 0x65 || c == 0x2B {
                text.append(Character(UnicodeScalar(c))); j += 1
            }
            return Double(text)
        }
        i += 1
    }
    return nil
}

func contains(_ needle: String, _ line: ArraySlice<UInt8>) -> Bool {
    let n = Array(needle.utf8)
    guard line.count >= n.count else { return false }
    var i = line.startIndex
    while i + n.count <= line.endIndex {
        if line[i] == n[0], Array(line[i..<i + n.count]) == n { return true }
        i += 1
    }
    return false
}

func percentile(_ sorted: [Double], _ q: Double) -> Double {
    sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(q * Double(sorted.count)))]
}

var rng = SystemRandomNumberGenerator()
let others: [String] = [
    #"{"event":"orientation","value":"landscapeLeft""#, #"{"event":"orientation","value":"portrait""#,
    #"{"event":"keyboard","visible":true"#, #"{"event":"keyboard","visible":false"#,
    #"{"event":"pip","active":true"#, #"{"event":"pip","active":false"#,
    #"{"event":"liveActivities","count":2"#, #"{"event":"liveActivities","count":0"#,
    #"{"event":"splitView","side":"left""#, #"{"event":"splitView","side":"none""#,
    #"{"event":"layoutDirection","value":"rtl""#, #"{"event":"layoutDirection","value":"ltr""#,
    #"{"event":"reduceTransparency","enabled":true"#, #"{"event":"reduceTransparency","enabled":false"#,
    #"{"event":"select","tab":"plan""#, #"{"event":"select","tab":"browse""#,
    #"{"event":"push","screen":"trailDetail""#, #"{"event":"pop""#,
    #"{"event":"present","sheet":"filters""#, #"{"event":"dismiss""#,
]

guard let pubFD = connectUnix() else { print("soak: cannot connect to \(socketPath)"); exit(1) }
let publisher = Peer(fd: pubFD)
var subscribers: [Peer] = []
var joined = 0, left = 0, pushes = 0

let start = now()
var sent = 0
var sentAt: [Int: Double] = [:]
var acked = 0, rejected = 0, totalAcked = 0, totalRejected = 0, totalSent = 0
var daemonUs: [Double] = [], roundTripUs: [Double] = []
var nextChurn = start + 0.5
var minute = 0
var rssByMinute: [Int] = []
var failed = false

print("minute  rss_MiB  peak_MiB  sent    acked   rejected  subs  joined  left  pushes  daemon_p50_us  p99_us  p999_us  max_us  rtt_p50_us  rtt_p99_us  rtt_max_us")

func report(final: Bool) {
    let rss = statusKiB("VmRSS") ?? 0, peak = statusKiB("VmHWM") ?? 0
    rssByMinute.append(rss)
    let d = daemonUs.sorted(), r = roundTripUs.sorted()
    let row = [String(minute), String(format: "%.1f", Double(rss) / 1024), String(format: "%.1f", Double(peak) / 1024),
               String(sent), String(acked), String(rejected), String(subscribers.count), String(joined), String(left), String(pushes),
               String(format: "%.1f", percentile(d, 0.5)), String(format: "%.1f", percentile(d, 0.99)),
               String(format: "%.1f", percentile(d, 0.999)), String(format: "%.1f", d.last ?? 0),
               String(format: "%.0f", percentile(r, 0.5)), String(format: "%.0f", percentile(r, 0.99)), String(format: "%.0f", r.last ?? 0)]
    print(row.joined(separator: "  ") + (final ? "  (partial minute)" : ""))
    totalSent += sent; totalAcked += acked; totalRejected += rejected
    sent = 0; acked = 0; rejected = 0; joined = 0; left = 0; pushes = 0
    daemonUs.removeAll(keepingCapacity: true); roundTripUs.removeAll(keepingCapacity: true)
}

var seq = 0
while true {
    let t = now()
    let elapsed = t - start
    if elapsed >= seconds { break }
    if kill(daemonPID, 0) != 0 { print("soak: the daemon (pid \(daemonPID)) is gone"); failed = true; break }

    // Every event due on the absolute schedule, in one write.
    let due = Int(elapsed * rate)
    while seq < due {
        seq += 1
        let line: String
        if Int.random(in: 0..<50, using: &rng) == 0 {
            line = others[Int.random(in: 0..<others.count, using: &rng)] + #","id":\#(seq)}"#
        } else {
            let phase = (Double(seq) / rate).truncatingRemainder(dividingBy: 8) / 8
            let angle = (1 - cos(phase * 2 * Double.pi)) * 90
            line = #"{"event":"hinge","angle":\#(Double(Int(angle * 100)) / 100),"id":\#(seq)}"#
        }
        publisher.out += Array(line.utf8) + [0x0A]
        sentAt[seq] = t
        sent += 1
    }
    publisher.flush()

    // Subscribers come and go.
    if t >= nextChurn {
        nextChurn = t + Double.random(in: 0.1...0.9, using: &rng)
        if subscribers.count < 16 && (subscribers.isEmpty || Bool.random(using: &rng)) {
            if let fd = connectUnix() {
                let s = Peer(fd: fd)
                s.out = Array(#"{"cmd":"subscribe","topics":["layout","diagnostics","stats"]}"#.utf8) + [0x0A]
                s.flush()
                subscribers.append(s)
                joined += 1
            }
        } else if !subscribers.isEmpty {
            let s = subscribers.remove(at: Int.random(in: 0..<subscribers.count, using: &rng))
            if Bool.random(using: &rng) { shutdown(s.fd, Int32(SHUT_WR)) }
            close(s.fd)
            left += 1
        }
    }

    var fds = [pollfd(fd: publisher.fd, events: Int16(POLLIN) | (publisher.out.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)]
    fds += subscribers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
    // Wake for the next tick (poll counts whole milliseconds: at 1 kHz, every tick).
    let untilNext = (Double(seq + 1) / rate - elapsed) * 1000
    _ = poll(&fds, nfds_t(fds.count), Int32(max(0, min(1000, untilNext.rounded(.up)))))
    let got = now()
    publisher.drain { line in
        guard let id = number("id", in: line).map({ Int($0) }) else { return }
        if contains("\"ok\":true", line) {
            acked += 1
            if let us = number("latencyUs", in: line) { daemonUs.append(us) }
        } else {
            rejected += 1
        }
        if let at = sentAt.removeValue(forKey: id) { roundTripUs.append((got - at) * 1e6) }
    }
    if !publisher.open { print("soak: the daemon closed the publisher's connection"); failed = true; break }
    for s in subscribers { s.drain { _ in pushes += 1 } }
    subscribers.removeAll { s in
        if s.open { return false }
        close(s.fd)
        left += 1
        return true
    }
    if Int((got - start) / 60) > minute {
        minute += 1
        report(final: false)
    }
}

// Every event is answered: give the last ones a moment.
let settle = now() + 5
while !sentAt.isEmpty && now() < settle && publisher.open {
    var p = pollfd(fd: publisher.fd, events: Int16(POLLIN), revents: 0)
    _ = poll(&p, 1, 100)
    publisher.drain { line in
        guard let id = number("id", in: line).map({ Int($0) }) else { return }
        if contains("\"ok\":true", line) { acked += 1 } else { rejected += 1 }
        sentAt.removeValue(forKey: id)
    }
}
minute += 1
report(final: true)

let unanswered = sentAt.count
if unanswered > 0 { print("unanswered ids (first 10): \(sentAt.keys.sorted().prefix(10).map(String.init).joined(separator: " "))") }
print("events: \(totalSent) sent, \(totalAcked) acknowledged, \(totalRejected) rejected (random UI events the state refuses: a sheet or screen not on show, nothing to pop), \(unanswered) unanswered")
let mib = { (k: Int) in String(format: "%.1f", Double(k) / 1024) }
print("rss by minute (MiB): " + rssByMinute.map(mib).joined(separator: " "))
if unanswered > 0 { failed = true }
// Growth: from the end of minute 1 (warm) to the end, and the trend over whole minutes.
let whole = Array(rssByMinute.dropLast())
if whole.count >= 3 {
    let base = whole[1]
    let growth = whole.last! - base
    let xs: [Double] = (1..<whole.count).map { Double($0) }
    let ys: [Double] = whole.dropFirst().map { Double($0) }
    let mx: Double = xs.reduce(0, +) / Double(xs.count)
    let my: Double = ys.reduce(0, +) / Double(ys.count)
    var sxy = 0.0, sxx = 0.0
    for (x, y) in zip(xs, ys) { sxy += (x - mx) * (y - my); sxx += (x - mx) * (x - mx) }
    let slope = sxy / max(1e-9, sxx)
    print("rss growth after minute 1: \(growth) KiB (\(String(format: "%.1f", slope)) KiB/minute trend)")
    // A leak of even one small allocation per event would show as megabytes a minute at 1 kHz.
    if growth > 2048 || slope > 64 { print("soak: memory grew"); failed = true }
} else {
    print("rss growth: run at least 3 minutes for a trend")
}
print(failed ? "soak: FAILED" : "soak: ok")
exit(failed ? 1 : 0)
