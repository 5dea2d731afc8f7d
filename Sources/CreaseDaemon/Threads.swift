#if canImport(Glibc)
import Glibc
#endif
import CLibUV

/// A mutex with a condition variable whose timed waits run on CLOCK_MONOTONIC (a step of
/// the wall clock neither stretches nor cuts one). The daemon's threads use it instead of
/// Foundation's NSCondition: creased links no Foundation, whose libraries were 9 MiB of
/// its resident memory (BENCHMARKS.md).
final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func signal() { pthread_cond_signal(cond) }
    func broadcast() { pthread_cond_broadcast(cond) }

    /// Waits for a signal (the lock held); may wake without one, as any condition wait.
    func wait() { pthread_cond_wait(cond, mutex) }

    /// Waits for a signal at most `seconds`; false when the time ran out first.
    @discardableResult
    func wait(seconds: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let ns = Int(deadline.tv_nsec) + Int((max(0, seconds) * 1e9).rounded())
        deadline.tv_sec += ns / 1_000_000_000
        deadline.tv_nsec = ns % 1_000_000_000
        return pthread_cond_timedwait(cond, mutex, &deadline) != ETIMEDOUT
    }

    /// `body` with the lock held.
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Starts a detached thread named `name` (as `top -H` and gdb show it) running `body`.
func startThread(name: String, stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) {
    final class Start: @unchecked Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setstacksize(&attributes, stackSize)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, &attributes, { context in
        let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
        crease_name_thread(start.name)   // the kernel keeps the first 15 bytes
        start.body()
        return nil
    }, start)
    precondition(rc == 0, "cannot start the \(name) thread: \(String(cString: strerror(rc)))")
}
