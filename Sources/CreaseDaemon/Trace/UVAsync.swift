import CLibUV
import CreaseDaemonCore

/// A libuv async handle: `send()` may be called from any thread and runs the action
/// on the loop thread (several sends may coalesce into one run).
final class UVAsync: UVHandleOwner, @unchecked Sendable {
    private let action: () -> Void
    var handle: UnsafeMutablePointer<uv_async_t> { typed() }

    init(loop: UnsafeMutablePointer<uv_loop_t>, action: @escaping () -> Void) {
        self.action = action
        super.init(allocating: uv_async_t.self)
        uv_async_init(loop, handle) { h in
            Unmanaged<UVAsync>.fromOpaque(h!.pointee.data).takeUnretainedValue().action()
        }
        adopt()
        uv_unref(uvHandle)
    }

    func send() { uv_async_send(handle) }

    func close() { closeHandle() }
}
