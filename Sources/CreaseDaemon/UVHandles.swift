import CLibUV

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

final class UVTimer {
    let handle = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
    private let action: () -> Void

    init(loop: UnsafeMutablePointer<uv_loop_t>, action: @escaping () -> Void) {
        self.action = action
        uv_timer_init(loop, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    func start(afterMs: UInt64, repeatMs: UInt64) {
        uv_timer_start(handle, { h in
            Unmanaged<UVTimer>.fromOpaque(h!.pointee.data).takeUnretainedValue().action()
        }, afterMs, repeatMs)
    }

    /// A timer that does not keep the loop alive by itself.
    func unref() { uv_unref(asHandle(handle)) }

    func close() {
        guard uv_is_closing(asHandle(handle)) == 0 else { return }
        uv_close(asHandle(handle)) { h in
            let owner = Unmanaged<UVTimer>.fromOpaque(h!.pointee.data).takeRetainedValue()
            owner.handle.deallocate()
        }
    }
}

final class UVSignal {
    let handle = UnsafeMutablePointer<uv_signal_t>.allocate(capacity: 1)
    private let action: (Int32) -> Void

    init(loop: UnsafeMutablePointer<uv_loop_t>, signal: Int32, action: @escaping (Int32) -> Void) {
        self.action = action
        uv_signal_init(loop, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        uv_signal_start(handle, { h, signum in
            Unmanaged<UVSignal>.fromOpaque(h!.pointee.data).takeUnretainedValue().action(signum)
        }, signal)
        // Waiting for a signal alone does not keep the loop running.
        uv_unref(asHandle(handle))
    }

    func close() {
        guard uv_is_closing(asHandle(handle)) == 0 else { return }
        uv_close(asHandle(handle)) { h in
            let owner = Unmanaged<UVSignal>.fromOpaque(h!.pointee.data).takeRetainedValue()
            owner.handle.deallocate()
        }
    }
}

/// Runs its action once per loop iteration, right after I/O callbacks.
final class UVCheck {
    let handle = UnsafeMutablePointer<uv_check_t>.allocate(capacity: 1)
    private let action: () -> Void

    init(loop: UnsafeMutablePointer<uv_loop_t>, action: @escaping () -> Void) {
        self.action = action
        uv_check_init(loop, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        uv_check_start(handle) { h in
            Unmanaged<UVCheck>.fromOpaque(h!.pointee.data).takeUnretainedValue().action()
        }
        uv_unref(asHandle(handle))
    }

    func close() {
        guard uv_is_closing(asHandle(handle)) == 0 else { return }
        uv_close(asHandle(handle)) { h in
            let owner = Unmanaged<UVCheck>.fromOpaque(h!.pointee.data).takeRetainedValue()
            owner.handle.deallocate()
        }
    }
}
