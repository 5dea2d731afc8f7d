import CLibUV
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Testing

/// The daemon's periodic work runs on a timerfd so that no libuv timer is pending while it
/// serves: a pending timer puts a timeout on every poll, which the kernel arms and cancels
/// per wait (0.8-0.9 us of a hinge round trip).
@Suite struct UVPeriodicTests {
    @Test("a periodic tick leaves the loop's poll without a timeout, and fires again and again")
    func aPeriodicTickLeavesThePollWithoutATimeout() throws {
        let loop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { loop.deallocate() }
        #expect(uv_loop_init(loop) == 0)
        var ticks = 0
        let periodic = try UVPeriodic(loop: loop, firstAfterMs: 0, everyMs: 5) { ticks += 1 }
        // The tick does not keep the loop alive by itself; here it must, to be polled for.
        uv_ref(periodic.uvHandle)
        // One pass registers its descriptor with epoll (until then libuv reports a zero timeout).
        uv_run(loop, UV_RUN_NOWAIT)
        #expect(uv_backend_timeout(loop) == -1, "a poll without a timeout")

        // A libuv timer, for contrast, however far off: the poll then has a timeout.
        let timer = UVTimer(loop: loop) {}
        timer.start(afterMs: 60_000)
        #expect(uv_backend_timeout(loop) > 0)
        timer.close()

        // Should the tick never come, a far timer ends the wait, and the test fails instead of hanging.
        var gaveUp = false
        let deadline = UVTimer(loop: loop) { gaveUp = true }
        deadline.start(afterMs: 60_000)
        while ticks < 3, !gaveUp { uv_run(loop, UV_RUN_ONCE) }
        #expect(ticks >= 3)
        deadline.close()
        periodic.close()
        uv_run(loop, UV_RUN_DEFAULT)
        #expect(uv_loop_close(loop) == 0, "every handle closed, the timerfd's with it")
    }
}
