#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// `--metrics-textfile PATH`: the stats as Prometheus text, replaced atomically (a
/// temporary file beside PATH, then `rename`), for node_exporter's textfile collector.
/// The loop only formats the text and hands it over; a thread of its own writes it, so
/// a slow disk never stalls the loop. While one write is under way, a newer text replaces
/// the one waiting: only the latest stats are worth writing.
public final class MetricsTextfile: @unchecked Sendable {
    public let path: String
    private let condition = Condition()
    private var waiting: String?
    private var stopping = false
    private var finished = false
    /// The last write's failure, logged once per change by the loop.
    private var failure: String?
    private var writes = 0

    public init(path: String) {
        self.path = path
        startThread(name: "metrics textfile") { [self] in run() }
    }

    /// Queues `text` to be written; returns at once.
    public func submit(_ text: String) {
        condition.lock()
        waiting = text
        condition.signal()
        condition.unlock()
    }

    /// (files written so far, the last failure if the last write failed).
    public var status: (writes: Int, failure: String?) {
        condition.lock()
        defer { condition.unlock() }
        return (writes, failure)
    }

    /// Writes what is waiting, then ends the thread; removes nothing (a scraper keeps the
    /// last values, and the file's age tells a stopped rig apart).
    public func close() {
        condition.lock()
        stopping = true
        condition.signal()
        while !finished { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while waiting == nil && !stopping { condition.wait() }
            let text = waiting
            waiting = nil
            let stop = stopping
            condition.unlock()
            if let text {
                let error = Self.replace(path, with: Array(text.utf8))
                condition.lock()
                failure = error
                if error == nil { writes += 1 }
                condition.unlock()
            }
            if stop {
                condition.lock()
                finished = true
                condition.broadcast()
                condition.unlock()
                return
            }
        }
    }

    /// Replaces `path` through a temporary file (a reader sees the old file or the new one,
    /// never a part), or writes in place when it is a device or FIFO (`OutputFile`). Mode 0644
    /// whatever the umask: metrics are no secret, and the collector runs as another user.
    static func replace(_ path: String, with bytes: [UInt8]) -> String? {
        do { try OutputFile.write(bytes, to: path, mode: 0o644) } catch { return error.message }
        return nil
    }
}
