#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseDaemonCore

/// One line per notable thing, on stderr. When systemd reads stderr
/// (`JOURNAL_STREAM` names it) each line starts with its `<N>` syslog priority;
/// otherwise with the level's name.
public struct LogFormat: Sendable {
    public var journal: Bool

    public func line(_ level: LogLevel, _ message: String) -> String {
        // A message is one line: embedded newlines would split a journal record.
        let flat = message.contains("\n") ? message.split(separator: "\n").joined(separator: " | ") : message
        return journal ? "<\(level.rawValue)>\(flat)\n" : "creased: \(level.name): \(flat)\n"
    }

    /// Whether `JOURNAL_STREAM` ("device:inode") is the file on fd 2.
    public static func stderrIsJournal(_ journalStream: String?) -> Bool {
        guard let js = journalStream else { return false }
        let parts = js.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}

/// The daemon's log. Before the loop runs (and after it), lines are written to
/// stderr directly. While it runs, `attach(loop:)` routes them through a `LogSink`, so
/// a stderr nobody reads (a stalled pipe, a journal that fell behind, a terminal
/// held by Ctrl-S) never blocks the loop: what stderr does not take at once waits in
/// a bounded queue, in order, and past the bound whole lines are dropped, counted,
/// and replaced by one notice saying how many.
public final class Logger {
    public let threshold: LogLevel
    public let format: LogFormat
    private var sink: LogSink?

    public init(threshold: LogLevel, format: LogFormat) {
        self.threshold = threshold
        self.format = format
    }

    @inline(__always)
    public func enabled(_ level: LogLevel) -> Bool { level <= threshold }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= threshold else { return }
        let bytes = Array(format.line(level, message()).utf8)
        if let sink, sink.isOwnerThread {
            sink.write(bytes)
        } else {
            Logger.writeDirectly(bytes)
        }
    }

    /// Lines dropped because stderr did not take them (0 when it always did).
    public var droppedLines: UInt64 { sink?.queue.droppedTotal ?? 0 }

    /// From now on, lines logged on this thread go through `loop` without blocking.
    /// A stderr that cannot block (a regular file, /dev/null) keeps direct writes.
    func attach(loop: UnsafeMutablePointer<uv_loop_t>) {
        sink = LogSink.open(loop: loop, fd: 2, limit: LogQueue.defaultLimit, format: format)
    }

    /// Back to direct writes: what is still queued gets a moment to go out, then the
    /// handle closes (its close callback runs on the loop's next turn).
    func detach() {
        sink?.close()
        sink = nil
    }

    static func writeDirectly(_ bytes: [UInt8]) {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { write(2, $0.baseAddress! + off, $0.count - off) }
            if n < 0 { if errno == EINTR { continue }; return }
            off += n
        }
    }

    public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    public func notice(_ m: @autoclosure () -> String) { log(.notice, m()) }
    public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
}

/// Log bytes stderr has not taken yet. Pure. Bounded by `limit`: a line that does not
/// fit is dropped whole and counted; the next line that fits is preceded by a notice
/// of how many were dropped (so is the moment the queue drains), which keeps the
/// gap in its place in the order.
struct LogQueue {
    static let defaultLimit = 256 * 1024

    let limit: Int
    let format: LogFormat
    private var buffer: [UInt8] = []
    private var head = 0
    /// Dropped since the last notice.
    private(set) var dropped: UInt64 = 0
    private(set) var droppedTotal: UInt64 = 0

    init(limit: Int, format: LogFormat) {
        self.limit = limit
        self.format = format
    }

    var count: Int { buffer.count - head }
    var isEmpty: Bool { count == 0 }

    /// Queues a whole line; false when it was dropped.
    @discardableResult
    mutating func append(_ line: ArraySlice<UInt8>) -> Bool {
        let notice = dropped > 0 ? noticeLine() : []
        guard count + notice.count + line.count <= limit else {
            dropped += 1
            droppedTotal += 1
            return false
        }
        buffer += notice
        dropped = 0
        buffer += line
        return true
    }

    /// The rest of a line stderr took only part of: it is queued whatever the bound,
    /// so no line is ever cut (it is shorter than the line it ends).
    mutating func appendRemainder(_ rest: ArraySlice<UInt8>) {
        buffer += rest
    }

    /// Calls `body` with the queued bytes; it returns how many were written.
    mutating func drain(_ body: (UnsafeRawBufferPointer) -> Int) {
        guard !isEmpty else { return }
        let n = buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[head...])) }
        guard n > 0 else { return }
        head += n
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
            if dropped > 0 {
                buffer = noticeLine()
                dropped = 0
            }
        } else if head > 65536, head > buffer.count / 2 {
            buffer.removeSubrange(0..<head)
            head = 0
        }
    }

    private func noticeLine() -> [UInt8] {
        Array(format.line(.warning, "\(dropped) log line\(dropped == 1 ? "" : "s") dropped: stderr was not being read").utf8)
    }
}

/// Non-blocking writes of log lines to stderr through the loop: a uv_poll handle on
/// the fd wakes the loop when stderr can take more. The handle is unreferenced, so a
/// stalled stderr never keeps the loop (or shutdown) waiting.
final class LogSink: UVHandleOwner {
    var handle: UnsafeMutablePointer<uv_poll_t> { typed() }
    let fd: Int32
    var queue: LogQueue
    private let savedFlags: Int32
    private let owner = pthread_self()
    private var polling = false
    /// stderr's reader is gone (EPIPE and the like): lines are counted, not written.
    private var broken = false
    private var closed = false

    /// A sink for `fd`, or nil when the fd cannot be polled (a regular file or
    /// /dev/null: writes to those do not wait for anybody).
    static func open(loop: UnsafeMutablePointer<uv_loop_t>, fd: Int32, limit: Int, format: LogFormat) -> LogSink? {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { return nil }
        let sink = LogSink(fd: fd, flags: flags, limit: limit, format: format)
        // uv_poll_init makes the fd non-blocking; it refuses fds epoll cannot watch.
        guard uv_poll_init(loop, sink.handle, fd) == 0 else { return nil }
        sink.adopt()
        uv_unref(sink.uvHandle)
        return sink
    }

    private init(fd: Int32, flags: Int32, limit: Int, format: LogFormat) {
        self.fd = fd
        savedFlags = flags
        queue = LogQueue(limit: limit, format: format)
        super.init(allocating: uv_poll_t.self)
    }

    var isOwnerThread: Bool { pthread_equal(owner, pthread_self()) != 0 }

    func write(_ line: [UInt8]) {
        guard !broken else {
            queue.append(line[...])  // counted as dropped once the queue is full
            return
        }
        guard queue.isEmpty else {
            queue.append(line[...])
            return
        }
        let n = line.withUnsafeBytes { writeSome($0) }
        if n < line.count {
            if n > 0 { queue.appendRemainder(line[n...]) } else { queue.append(line[...]) }
            startPolling()
        }
    }

    /// One non-blocking write; the number of bytes taken (0 when none).
    private func writeSome(_ bytes: UnsafeRawBufferPointer) -> Int {
        while true {
            let n = Glibc.write(fd, bytes.baseAddress!, bytes.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            if errno != EAGAIN && errno != EWOULDBLOCK { broken = true }
            return 0
        }
    }

    private func startPolling() {
        guard !polling, !broken, !closed else { return }
        polling = true
        uv_poll_start(handle, Int32(UV_WRITABLE.rawValue)) { h, status, _ in
            let sink = Unmanaged<LogSink>.fromOpaque(h!.pointee.data).takeUnretainedValue()
            sink.writable(status: status)
        }
    }

    private func writable(status: Int32) {
        if status < 0 { broken = true }
        while !broken, !queue.isEmpty {
            var wrote = 0
            queue.drain { bytes in
                wrote = writeSome(bytes)
                return wrote
            }
            if wrote == 0 { break }
        }
        if queue.isEmpty || broken {
            polling = false
            uv_poll_stop(handle)
        }
    }

    /// At exit: what is queued gets up to `graceMs` to go out (a slow journal catches
    /// up; a stalled pipe does not hold the exit longer), the fd's flags are put back
    /// as they were, the handle is closed.
    func close(graceMs: Int = 250) {
        guard !closed else { return }
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let deadline = Int(ts.tv_sec) * 1000 + Int(ts.tv_nsec) / 1_000_000 + graceMs
        while !broken, !queue.isEmpty {
            var wrote = 0
            queue.drain { bytes in
                wrote = writeSome(bytes)
                return wrote
            }
            if wrote > 0 { continue }
            clock_gettime(CLOCK_MONOTONIC, &ts)
            let left = deadline - (Int(ts.tv_sec) * 1000 + Int(ts.tv_nsec) / 1_000_000)
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if left <= 0 || poll(&p, 1, Int32(left)) <= 0 { break }
        }
        closed = true
        _ = fcntl(fd, F_SETFL, savedFlags)
        closeHandle()
    }
}
