import CreaseSystem
import CLibUV
import CreaseDaemonCore

/// The memory every connection reads into (a read callback consumes its bytes
/// before returning), and how much of it a read may fill.
final class ReadBuffer {
    let base: UnsafeMutableRawPointer
    let capacity: Int
    var size: Int

    init(capacity: Int, size: Int) {
        self.capacity = capacity
        self.size = size
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }
}

/// What a connection tells its owner, given at accept.
struct ConnectionCallbacks {
    /// Bytes read (`nread` > 0), or the end of the stream or a read error (`nread` < 0).
    let didRead: (Connection, Int, UnsafeRawPointer?) -> Void
    /// Bytes that reached the socket.
    let wrote: (Int) -> Void
    /// The outbound queue passed its limit: the connection is being closed.
    let dropped: (Connection, String) -> Void
    /// The connection stops taking part: no more lines from it, nothing more to send.
    let leaving: (Connection) -> Void
    let readBuffer: ReadBuffer
    let log: Logger
}

/// How many refused peers are lingering (reading their refusal) now.
final class RefusedPeers {
    static let limit = 8
    var count = 0
}

/// One client connection: its pipe handle, line framer and outgoing queue. What it
/// may do and what it subscribed to are the core's, under the same `id`.
final class Connection: UVHandleOwner {
    enum State { case open, closing, closed }

    let id: Int
    var handle: UnsafeMutablePointer<uv_pipe_t> { typed() }
    private let callbacks: ConnectionCallbacks
    @exclusivity(unchecked) var framer: LineFramer
    @exclusivity(unchecked) var queue: OutboundQueue
    var state = State.open

    init(id: Int, loop: UnsafeMutablePointer<uv_loop_t>, lineLimit: Int, queueLimit: Int, callbacks: ConnectionCallbacks) {
        self.id = id
        self.callbacks = callbacks
        framer = LineFramer(limit: lineLimit)
        queue = OutboundQueue(limit: queueLimit)
        super.init(allocating: uv_pipe_t.self)
        uv_pipe_init(loop, handle, 0)
        adopt()
    }

    var stream: UnsafeMutablePointer<uv_stream_t> { asStream(handle) }

    static func from(_ h: UnsafeMutableRawPointer?) -> Connection {
        Unmanaged<Connection>.fromOpaque(h!).takeUnretainedValue()
    }

    func startReading() -> Int32 {
        uv_read_start(stream, { h, _, buf in
            // One read buffer serves every connection: a read callback consumes
            // its bytes before returning.
            let shared = Connection.from(h!.pointee.data).callbacks.readBuffer
            buf!.pointee = uv_buf_init(shared.base.assumingMemoryBound(to: CChar.self), UInt32(shared.size))
        }, { s, nread, buf in
            let c = Connection.from(s!.pointee.data)
            c.callbacks.didRead(c, nread, UnsafeRawPointer(buf!.pointee.base))
        })
    }

    /// Reading is paused while the lines it already read wait their turn (`Daemon.turns`).
    var paused = false
    /// When the held lines were read: their latency counts the wait.
    var heldReadNs: UInt64 = 0

    func pauseReading() {
        guard !paused, state == .open else { return }
        paused = true
        uv_read_stop(stream)
    }

    func resumeReading() {
        guard paused, state == .open else { return }
        paused = false
        if startReading() != 0 { close() }
    }

    /// Sends bytes, directly when nothing is queued, else behind what is.
    func send(_ bytes: UnsafeRawBufferPointer) {
        guard state == .open, bytes.count > 0 else { return }
        var action = queue.plan(bytes.count)
        var offset = 0
        if action == .tryWrite {
            var buf = uv_buf_init(UnsafeMutableRawPointer(mutating: bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                                  UInt32(bytes.count))
            let n = uv_try_write(stream, &buf, 1)
            if n < 0, n != UV_EAGAIN.rawValue {
                callbacks.log.debug("client \(id): write failed: \(uvErrorName(n))")
                close()
                return
            }
            offset = Int(max(n, 0))
            callbacks.wrote(offset)
            action = queue.wrote(offset, of: bytes.count)
        }
        switch action {
        case .done, .tryWrite: return
        case .enqueue:
            enqueue(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        case .drop(let reason):
            callbacks.dropped(self, reason)
            close()
        }
    }

    private func enqueue(_ bytes: UnsafeRawBufferPointer) {
        let write = PendingWrite(connection: self, bytes: bytes)
        var buf = uv_buf_init(write.bytes.assumingMemoryBound(to: CChar.self), UInt32(write.count))
        let rc = uv_write(write.request, stream, &buf, 1) { req, status in
            let w = Unmanaged<PendingWrite>.fromOpaque(req!.pointee.data).takeRetainedValue()
            w.finished(status: status)
        }
        if rc != 0 {
            Unmanaged<PendingWrite>.fromOpaque(write.request.pointee.data).release()
            queue.completed(write.count)
            callbacks.log.debug("client \(id): write failed: \(uvErrorName(rc))")
            close()
        }
    }

    fileprivate func writeFinished(count: Int, status: Int32) {
        queue.completed(count)
        if status == 0 { callbacks.wrote(count) }
        if status < 0, status != UV_ECANCELED.rawValue {
            callbacks.log.debug("client \(id): write failed: \(uvErrorName(status))")
            close()
        }
    }

    /// A peer the access policy refuses, told so in what is already sent: its side of
    /// the stream is shut once that is written, and what it sends is read and thrown
    /// away, so its own first write does not fail before it reads the refusal. The
    /// connection closes at its end of stream, after `Connection.refusedReadLimit` bytes,
    /// or `refusedGraceMs` after the refusal, whichever comes first: a refused peer that
    /// never hangs up once held its descriptor for ever. (The grace timer is the only libuv
    /// timer pending while the daemon serves, and only while a refused peer lingers.)
    ///
    /// At most `RefusedPeers.limit` refused peers linger at once: past that a refused peer
    /// is closed as soon as its refusal is written, so refused peers can never hold more than
    /// a few descriptors whatever they do.
    func refuse(lingering: RefusedPeers) {
        guard state == .open else { return }
        state = .closing
        guard lingering.count < RefusedPeers.limit else {
            let req = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
            let rc = uv_shutdown(req, stream, { req, _ in
                let c = Connection.from(req!.pointee.handle.pointee.data)
                req!.deallocate()
                c.closeConnection()
            })
            if rc != 0 { req.deallocate(); closeConnection() }
            return
        }
        lingering.count += 1
        self.lingering = lingering
        let req = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        if uv_shutdown(req, stream, { req, _ in req!.deallocate() }) != 0 { req.deallocate() }
        let rc = uv_read_start(stream, { h, _, buf in
            let shared = Connection.from(h!.pointee.data).callbacks.readBuffer
            buf!.pointee = uv_buf_init(shared.base.assumingMemoryBound(to: CChar.self), UInt32(shared.capacity))
        }, { s, nread, _ in
            let c = Connection.from(s!.pointee.data)
            c.discarded += max(nread, 0)
            if nread < 0 || c.discarded > Connection.refusedReadLimit { c.close() }
        })
        if rc != 0 { close(); return }
        let timer = UVTimer(loop: handle.pointee.loop) { [unowned self] in self.close() }
        timer.unref()
        timer.start(afterMs: Connection.refusedGraceMs)
        graceTimer = timer
    }

    static let refusedReadLimit = 64 * 1024
    static let refusedGraceMs: UInt64 = 1_000
    private var discarded = 0
    private var graceTimer: UVTimer?
    private var lingering: RefusedPeers?

    /// Stops reading and closes once everything queued has been written.
    func closeAfterWrites() {
        guard state == .open else { return }
        state = .closing
        uv_read_stop(stream)
        callbacks.leaving(self)
        let req = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        req.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let rc = uv_shutdown(req, stream) { req, _ in
            let c = Connection.from(req!.pointee.data)
            req!.deallocate()
            c.closeConnection()
        }
        if rc != 0 {
            req.deallocate()
            closeConnection()
        }
    }

    /// Closes now; queued writes are cancelled.
    func close() {
        guard state != .closed else { return }
        if state == .open { callbacks.leaving(self) }
        closeConnection()
    }

    private func closeConnection() {
        guard state != .closed else { return }
        state = .closed
        graceTimer?.close()
        graceTimer = nil
        lingering?.count -= 1
        lingering = nil
        closeHandle()
    }

    override func didClose() {
        callbacks.log.debug("client \(id) closed after \(framer.scannedBytes) bytes in")
    }
}

/// A write libuv could not do at once: the request and an owned copy of the bytes,
/// alive until the write callback.
final class PendingWrite {
    let request = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
    let bytes: UnsafeMutableRawPointer
    let count: Int
    let connection: Connection

    init(connection: Connection, bytes source: UnsafeRawBufferPointer) {
        self.connection = connection
        count = source.count
        bytes = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 1)
        bytes.copyMemory(from: source.baseAddress!, byteCount: count)
        request.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    func finished(status: Int32) {
        connection.writeFinished(count: count, status: status)
    }

    deinit {
        bytes.deallocate()
        request.deallocate()
    }
}
