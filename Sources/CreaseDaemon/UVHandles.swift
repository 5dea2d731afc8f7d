#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseDaemonCore

// One owning class per libuv handle. The handle is allocated once and never moves;
// its `data` holds a retained reference to the owner from init until the close
// callback, which releases it and frees the handle. Callbacks are @convention(c)
// closures that capture nothing and find their owner through `data`.

@inline(__always) func asHandle<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutableRawPointer(p).assumingMemoryBound(to: uv_handle_t.self)
}

@inline(__always) func asStream<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutableRawPointer(p).assumingMemoryBound(to: uv_stream_t.self)
}

func uvErrorName(_ code: Int32) -> String {
    "\(String(cString: uv_err_name(code))): \(String(cString: uv_strerror(code)))"
}

/// The owner of one libuv handle, the base of every class that holds one. The
/// handle's memory is allocated here and never moves; `adopt()` (after the handle's
/// init) stores a retained reference in its `data`, released by the close callback;
/// the memory is freed with the owner, so never before libuv is done with it.
class UVHandleOwner {
    let uvHandle: UnsafeMutablePointer<uv_handle_t>

    init<Handle>(allocating: Handle.Type) {
        uvHandle = UnsafeMutableRawPointer(UnsafeMutablePointer<Handle>.allocate(capacity: 1))
            .assumingMemoryBound(to: uv_handle_t.self)
    }

    deinit { UnsafeMutableRawPointer(uvHandle).deallocate() }

    /// The handle as its own libuv type.
    @inline(__always) func typed<Handle>(_: Handle.Type = Handle.self) -> UnsafeMutablePointer<Handle> {
        UnsafeMutableRawPointer(uvHandle).assumingMemoryBound(to: Handle.self)
    }

    /// The handle is initialised: it keeps its owner alive until it is closed.
    func adopt() {
        uvHandle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// Closes the handle once; `didClose` runs in the close callback.
    func closeHandle() {
        guard uv_is_closing(uvHandle) == 0 else { return }
        uv_close(uvHandle) { h in
            Unmanaged<UVHandleOwner>.fromOpaque(h!.pointee.data).takeRetainedValue().didClose()
        }
    }

    /// Called when libuv has closed the handle.
    func didClose() {}
}

/// A one-shot libuv timer (the shutdown's grace period). Periodic work uses `UVPeriodic`:
/// while a libuv timer is pending, every poll of the loop carries a timeout.
final class UVTimer: UVHandleOwner {
    private let action: () -> Void
    var handle: UnsafeMutablePointer<uv_timer_t> { typed() }

    init(loop: UnsafeMutablePointer<uv_loop_t>, action: @escaping () -> Void) {
        self.action = action
        super.init(allocating: uv_timer_t.self)
        uv_timer_init(loop, handle)
        adopt()
    }

    func start(afterMs: UInt64) {
        uv_timer_start(handle, { h in
            Unmanaged<UVTimer>.fromOpaque(h!.pointee.data).takeUnretainedValue().action()
        }, afterMs, 0)
    }

    /// A timer that does not keep the loop alive by itself.
    func unref() { uv_unref(uvHandle) }

    func close() { closeHandle() }
}

/// A repeating timer the loop pays for only when it fires: a timerfd, watched by a poll
/// handle. With a libuv timer pending, every `epoll_wait` carries a timeout, which the
/// kernel arms and cancels as an hrtimer on each wait: 0.8-0.9 us of every hinge round
/// trip on this machine, for a stats tick once a second. The timerfd's timer is armed
/// once, and `epoll_wait` waits without a timeout.
final class UVPeriodic: UVHandleOwner {
    private let action: () -> Void
    private let fd: Int32
    var handle: UnsafeMutablePointer<uv_poll_t> { typed() }

    /// Fires `firstAfterMs` from now (0: at once), then every `everyMs`. Ticks missed while
    /// the loop was busy fire once, as a libuv timer's do. Does not keep the loop alive.
    init(loop: UnsafeMutablePointer<uv_loop_t>, firstAfterMs: UInt64, everyMs: UInt64, action: @escaping () -> Void) throws(StartupError) {
        let fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { throw StartupError("cannot create a timer: \(String(cString: strerror(errno)))") }
        func time(_ ms: UInt64) -> timespec { timespec(tv_sec: Int(ms / 1000), tv_nsec: Int(ms % 1000) * 1_000_000) }
        // A zero first expiry would disarm the timer: at once is one nanosecond from now.
        var spec = itimerspec(it_interval: time(everyMs), it_value: firstAfterMs == 0 ? timespec(tv_sec: 0, tv_nsec: 1) : time(firstAfterMs))
        guard timerfd_settime(fd, 0, &spec, nil) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw StartupError("cannot set a timer: \(reason)")
        }
        self.fd = fd
        self.action = action
        super.init(allocating: uv_poll_t.self)
        let rc = uv_poll_init(loop, handle, fd)
        guard rc == 0 else {
            Glibc.close(fd)
            throw StartupError("cannot watch a timer: \(uvErrorName(rc))")
        }
        adopt()
        uv_poll_start(handle, Int32(UV_READABLE.rawValue)) { h, _, _ in
            Unmanaged<UVPeriodic>.fromOpaque(h!.pointee.data).takeUnretainedValue().fire()
        }
        uv_unref(uvHandle)
    }

    private func fire() {
        // Reading empties the expiration count: without it, the descriptor stays readable.
        var expirations: UInt64 = 0
        guard read(fd, &expirations, 8) == 8 else { return }
        action()
    }

    func close() { closeHandle() }

    override func didClose() { Glibc.close(fd) }
}

final class UVSignal: UVHandleOwner {
    private let action: (Int32) -> Void
    var handle: UnsafeMutablePointer<uv_signal_t> { typed() }

    init(loop: UnsafeMutablePointer<uv_loop_t>, signal: Int32, action: @escaping (Int32) -> Void) {
        self.action = action
        super.init(allocating: uv_signal_t.self)
        uv_signal_init(loop, handle)
        adopt()
        uv_signal_start(handle, { h, signum in
            Unmanaged<UVSignal>.fromOpaque(h!.pointee.data).takeUnretainedValue().action(signum)
        }, signal)
        // Waiting for a signal alone does not keep the loop running.
        uv_unref(uvHandle)
    }

    func close() { closeHandle() }
}

/// While started, runs its action every loop iteration and keeps the loop's poll from
/// waiting: work held back from a busy client goes on although no new I/O arrives.
final class UVIdle: UVHandleOwner {
    private let action: () -> Void
    private(set) var isActive = false
    var handle: UnsafeMutablePointer<uv_idle_t> { typed() }

    init(loop: UnsafeMutablePointer<uv_loop_t>, action: @escaping () -> Void) {
        self.action = action
        super.init(allocating: uv_idle_t.self)
        uv_idle_init(loop, handle)
        adopt()
    }

    func start() {
        guard !isActive else { return }
        isActive = true
        uv_idle_start(handle) { h in
            Unmanaged<UVIdle>.fromOpaque(h!.pointee.data).takeUnretainedValue().action()
        }
    }

    func stop() {
        guard isActive else { return }
        isActive = false
        uv_idle_stop(handle)
    }

    func close() { closeHandle() }
}

/// Runs its action once per loop iteration, right after I/O callbacks.
final class UVCheck: UVHandleOwner {
    private let action: () -> Void
    var handle: UnsafeMutablePointer<uv_check_t> { typed() }

    init(loop: UnsafeMutablePointer<uv_loop_t>, action: @escaping () -> Void) {
        self.action = action
        super.init(allocating: uv_check_t.self)
        uv_check_init(loop, handle)
        adopt()
        uv_check_start(handle) { h in
            Unmanaged<UVCheck>.fromOpaque(h!.pointee.data).takeUnretainedValue().action()
        }
        uv_unref(uvHandle)
    }

    func close() { closeHandle() }
}
