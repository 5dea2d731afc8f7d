import CLibUV

/// A libuv async handle: `send()` may be called from any thread and runs the action
/// on the loop thread (several sends may coalesce into one run).
final class UVAsync: @unchecked Sendable {
    let handle = UnsafeMutablePointer<uv_async_t>.allocate(capacity: 1)
    private let action: () -> Void

    init(loop: UnsafeMutablePointer<uv_loop_t>, action: @escaping () -> Void) {
        self.action = action
        uv_async_init(loop, handle) { h in
            Unmanaged<UVAsync>.fromOpaque(h!.pointee.data).takeUnretainedValue().action()
        }
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
        uv_unref(asHandle(handle))
    }

    func send() { uv_async_send(handle) }

    func close() {
        guard uv_is_closing(asHandle(handle)) == 0 else { return }
        uv_close(asHandle(handle)) { h in
            let owner = Unmanaged<UVAsync>.fromOpaque(h!.pointee.data).takeRetainedValue()
            owner.handle.deallocate()
        }
    }
}
