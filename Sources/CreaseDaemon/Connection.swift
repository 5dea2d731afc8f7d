import CLibUV

/// One client connection: its pipe handle, line framer, outgoing queue and topics.
final class Connection {
    enum State { case open, closing, closed }

    let id: Int
    let handle = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
    unowned let daemon: Daemon
    @exclusivity(unchecked) var framer: LineFramer
    @exclusivity(unchecked) var queue: OutboundQueue
    /// Replies gathered during a flush, written in one go.
    @exclusivity(unchecked) var pending: [UInt8] = []
    /// Topic bits (Topic.bit).
    var topics: UInt8 = 0
    /// Lines received so far (every newline counts): the number error replies carry.
    var lineNumber = 0
    var state = State.open
    /// Who connected (SO_PEERCRED), read once at accept; nil when the kernel would not say.
    var peer: PeerCredentials?
    /// What the access policy lets this peer do, decided once at accept; `mayPublish`
    /// is the one check on the event path.
    var access = AccessLevel.publish
    var mayPublish = true

    init(id: Int, daemon: Daemon, loop: UnsafeMutablePointer<uv_loop_t>, lineLimit: Int, queueLimit: Int) {
        self.id = id
        self.daemon = daemon
        framer = LineFramer(limit: lineLimit)
        queue = OutboundQueue(limit: queueLimit)
        pending.reserveCapacity(512)
        uv_pipe_init(loop, handle, 0)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    var stream: UnsafeMutablePointer<uv_stream_t> { asStream(handle) }

    static func from(_ h: UnsafeMutableRawPointer?) -> Connection {
        Unmanaged<Connection>.fromOpaque(h!).takeUnretainedValue()
    }

    func startReading() -> Int32 {
        uv_read_start(stream, { h, _, buf in
            // One read buffer serves every connection: a read callback consumes
            // its bytes before returning.
            let daemon = Connection.from(h!.pointee.data).daemon
            buf!.pointee = uv_buf_init(daemon.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(daemon.readSizer.size))
        }, { s, nread, buf in
            let c = Connection.from(s!.pointee.data)
            c.daemon.didRead(c, nread: nread, bytes: UnsafeRawPointer(buf!.pointee.base))
        })
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
                daemon.log.debug("client \(id): write failed: \(uvErrorName(n))")
                close()
                return
            }
            offset = Int(max(n, 0))
            daemon.counters.bytesOut &+= UInt64(offset)
            action = queue.wrote(offset, of: bytes.count)
        }
        switch action {
        case .done, .tryWrite: return
        case .enqueue:
            enqueue(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        case .drop(let reason):
            daemon.drop(self, reason: reason)
        }
    }

    func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { send($0) }
    }

    /// Writes `pending` and empties it.
    func flushPending() {
        guard !pending.isEmpty else { return }
        send(pending)
        pending.removeAll(keepingCapacity: pending.capacity <= 65536)
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
            daemon.log.debug("client \(id): write failed: \(uvErrorName(rc))")
            close()
        }
    }

    fileprivate func writeFinished(count: Int, status: Int32) {
        queue.completed(count)
        daemon.counters.bytesOut &+= UInt64(status == 0 ? count : 0)
        if status < 0, status != UV_ECANCELED.rawValue {
            daemon.log.debug("client \(id): write failed: \(uvErrorName(status))")
            close()
        }
    }

    /// A peer the access policy refuses, told so in what is already sent: its side of
    /// the stream is shut once that is written, and what it sends is read and thrown
    /// away, so its own first write does not fail before it reads the refusal. The
    /// connection closes at its end of stream, or after `Connection.refusedReadLimit`
    /// bytes.
    func refuse() {
        guard state == .open else { return }
        state = .closing
        let req = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        if uv_shutdown(req, stream, { req, _ in req!.deallocate() }) != 0 { req.deallocate() }
        let rc = uv_read_start(stream, { h, _, buf in
            let daemon = Connection.from(h!.pointee.data).daemon
            buf!.pointee = uv_buf_init(daemon.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(daemon.readBufferSize))
        }, { s, nread, _ in
            let c = Connection.from(s!.pointee.data)
            c.discarded += max(nread, 0)
            if nread < 0 || c.discarded > Connection.refusedReadLimit { c.close() }
        })
        if rc != 0 { close() }
    }

    static let refusedReadLimit = 64 * 1024
    private var discarded = 0

    /// Stops reading and closes once everything queued has been written.
    func closeAfterWrites() {
        guard state == .open else { return }
        state = .closing
        uv_read_stop(stream)
        daemon.forget(self)
        let req = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        req.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        let rc = uv_shutdown(req, stream) { req, _ in
            let c = Connection.from(req!.pointee.data)
            req!.deallocate()
            c.closeHandle()
        }
        if rc != 0 {
            req.deallocate()
            closeHandle()
        }
    }

    /// Closes now; queued writes are cancelled.
    func close() {
        guard state != .closed else { return }
        if state == .open { daemon.forget(self) }
        closeHandle()
    }

    private func closeHandle() {
        guard state != .closed else { return }
        state = .closed
        guard uv_is_closing(asHandle(handle)) == 0 else { return }
        uv_close(asHandle(handle)) { h in
            let c = Unmanaged<Connection>.fromOpaque(h!.pointee.data).takeRetainedValue()
            c.daemon.log.debug("client \(c.id) closed after \(c.framer.scannedBytes) bytes in")
            c.handle.deallocate()
        }
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
