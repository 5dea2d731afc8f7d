#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseDaemonCore
import CreaseSystem

/// What the core cannot know by itself, sampled when it asks; the metrics file; systemd's status line.
extension Daemon {
    /// A STATUS= line for `systemctl status`, when something changed.
    func updateStatus() {
        guard notifier.enabled else { return }
        let status = core.status()
        guard status != lastStatus else { return }
        lastStatus = status
        notifier.send(NotifyMessage.status(status))
    }

    /// What the core asked for: the resident size, the log's dropped lines, the trace's figures.
    func sampleGauges() -> SampledGauges {
        SampledGauges(residentKiB: Daemon.residentKiB(), logDroppedLines: log.droppedLines, trace: trace.sink?.figures ?? closedTraceFigures)
    }

    /// The metrics timer: the core takes its figures and asks for the gauges (`metrics` follows).
    func writeMetrics() {
        feed(.metricsTick, at: uv_hrtime(), into: &actions)
        perform()
    }

    /// Hands the stats (`metrics`), as Prometheus text, to the metrics file's writer; logs a
    /// failure of the last write once (and its end). The last figures close the file.
    func submitMetrics(_ json: ArraySlice<UInt8>) {
        guard let metrics else { return }
        guard let stats = try? JSON.parse(Array(json)) else { return }
        metrics.submit(OpenMetrics.format(stats: stats, dialect: .prometheusText, rig: OpenMetrics.rigName(socketPath: socketPath)))
        let failure = metrics.status.failure
        if failure != metricsFailure {
            if let failure { log.warning("metrics: \(failure)") } else { log.notice("metrics: writing \(metrics.path) again") }
            metricsFailure = failure
        }
        if metricsClosing {
            metrics.close()
            self.metrics = nil
        }
    }

    /// Descriptors kept for publishers: read-only connections stop short of them.
    static let publisherReserve = 16

    /// How many read-only connections the descriptor limit leaves room for, once the daemon's
    /// own descriptors (counted now, after the socket and the trace are open) and the
    /// publishers' reserve are taken off.
    static func readerRoom() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return .max }
        var own = 0
        if let dir = opendir("/proc/self/fd") {
            while readdir(dir) != nil { own += 1 }
            closedir(dir)
            own -= 3  // ".", ".." and the directory's own descriptor
        }
        return max(1, Int(limit.rlim_cur) - max(own, 0) - publisherReserve)
    }

    /// Resident set size from /proc/self/statm, in KiB (0 if unreadable).
    static func residentKiB() -> Int {
        let fd = open("/proc/self/statm", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 128)
        let n = read(fd, &buf, buf.count)
        guard n > 0 else { return 0 }
        let fields = buf[0..<n].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }
}
