import CreaseSystem
#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseDaemonCore

/// The baseline of `rtt`: a bare libuv server on the same kind of socket as `creased`
/// (a Unix stream socket, one loop on one thread), framing lines with the daemon's own
/// `LineFramer` and answering each with a fixed reply line (the bytes of a real reply),
/// written with `uv_try_write` as the daemon writes. What the daemon adds on top of this
/// (decoding, the engine, encoding the reply, the latency histogram) is what `rtt`
/// measures. It runs as its own process (`crease bench serve-echo`), as the daemon does.
final class EchoServer {
    private let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    private let server = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
    private let signals = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 2)
    private let path: String
    let reply: [UInt8]
    let readBuffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private var connections: [EchoConnection] = []

    init(path: String, reply: [UInt8]) {
        self.path = path
        self.reply = reply + [0x0A]
    }

    /// Serves until SIGTERM or SIGINT; the socket file is removed on the way out.
    func run() throws {
        Glibc.signal(SIGPIPE, SIG_IGN)
        uv_loop_init(loop)
        uv_pipe_init(loop, server, 0)
        server.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        unlink(path)
        var rc = uv_pipe_bind(server, path)
        guard rc == 0 else { throw UsageError("serve-echo: cannot bind \(path): \(String(cString: uv_strerror(rc)))") }
        rc = uv_listen(UnsafeMutableRawPointer(server).assumingMemoryBound(to: uv_stream_t.self), 128) { s, status in
            guard status == 0 else { return }
            Unmanaged<EchoServer>.fromOpaque(s!.pointee.data).takeUnretainedValue().accept()
        }
        guard rc == 0 else { throw UsageError("serve-echo: cannot listen on \(path): \(String(cString: uv_strerror(rc)))") }
        for (i, signum) in [SIGTERM, SIGINT].enumerated() {
            uv_signal_init(loop, signals + i)
            signals[i].data = Unmanaged.passUnretained(self).toOpaque()
            uv_signal_start_oneshot(signals + i, { h, _ in
                Unmanaged<EchoServer>.fromOpaque(h!.pointee.data).takeUnretainedValue().stop()
            }, signum)
        }
        uv_run(loop, UV_RUN_DEFAULT)
        uv_loop_close(loop)
    }

    private func accept() {
        let c = EchoConnection(server: self, loop: loop)
        guard uv_accept(UnsafeMutableRawPointer(server).assumingMemoryBound(to: uv_stream_t.self), c.stream) == 0 else {
            c.close()
            return
        }
        connections.append(c)
        c.start()
    }

    func forget(_ c: EchoConnection) { connections.removeAll { $0 === c } }

    private func stop() {
        unlink(path)
        uv_close(UnsafeMutableRawPointer(server).assumingMemoryBound(to: uv_handle_t.self), nil)
        for i in 0..<2 { uv_close(UnsafeMutableRawPointer(signals + i).assumingMemoryBound(to: uv_handle_t.self), nil) }
        for c in connections { c.close() }
    }
}

final class EchoConnection {
    let handle = UnsafeMutablePointer<uv_pipe_t>.allocate(capacity: 1)
    unowned let server: EchoServer
    var framer = LineFramer()
    var pending: [UInt8] = []

    init(server: EchoServer, loop: UnsafeMutablePointer<uv_loop_t>) {
        self.server = server
        pending.reserveCapacity(4096)
        uv_pipe_init(loop, handle, 0)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    var stream: UnsafeMutablePointer<uv_stream_t> { UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self) }

    func start() {
        uv_read_start(stream, { h, _, buf in
            let c = Unmanaged<EchoConnection>.fromOpaque(h!.pointee.data).takeUnretainedValue()
            buf!.pointee = uv_buf_init(c.server.readBuffer.assumingMemoryBound(to: CChar.self), 64 * 1024)
        }, { s, nread, buf in
            let c = Unmanaged<EchoConnection>.fromOpaque(s!.pointee.data).takeUnretainedValue()
            guard nread > 0 else {
                if nread < 0 { c.close() }
                return
            }
            c.received(UnsafeRawBufferPointer(start: buf!.pointee.base, count: nread))
        })
    }

    private func received(_ chunk: UnsafeRawBufferPointer) {
        let reply = server.reply
        let outcome = framer.feed(chunk) { _ in
            pending.append(contentsOf: reply)
            return true
        }
        if case .lineTooLong = outcome { close(); return }
        guard !pending.isEmpty else { return }
        pending.withUnsafeBytes { bytes in
            var buf = uv_buf_init(UnsafeMutableRawPointer(mutating: bytes.baseAddress!).assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
            let n = uv_try_write(stream, &buf, 1)
            let written = Int(max(n, 0))
            if written < bytes.count { queue(UnsafeRawBufferPointer(rebasing: bytes[written...])) }
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// What the kernel did not take at once: an owned copy and a uv_write.
    private func queue(_ bytes: UnsafeRawBufferPointer) {
        let req = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        let copy = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
        copy.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        req.pointee.data = copy
        var buf = uv_buf_init(copy.assumingMemoryBound(to: CChar.self), UInt32(bytes.count))
        let rc = uv_write(req, stream, &buf, 1) { req, _ in
            req!.pointee.data.deallocate()
            req!.deallocate()
        }
        if rc != 0 {
            copy.deallocate()
            req.deallocate()
            close()
        }
    }

    func close() {
        guard uv_is_closing(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)) == 0 else { return }
        server.forget(self)
        uv_close(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self)) { h in
            let c = Unmanaged<EchoConnection>.fromOpaque(h!.pointee.data).takeRetainedValue()
            c.handle.deallocate()
        }
    }
}
