#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseDaemonCore
import CreaseSystem

/// Stopping, in the order the core decides (`DaemonCore.shutdown`).
extension Daemon {
    // MARK: - Stopping

    /// Stopping: the core says in which order (`DaemonCore.shutdown`); the loop then ends.
    func shutdown(reason: String) {
        feed(.shutdown(reason: reason), at: uv_hrtime(), into: &actions)
        perform()
    }

    func stopAccepting(status: String) {
        notifier.send(NotifyMessage.stopping(status: status))
        if serverOpen {
            serverOpen = false
            uv_close(asHandle(server), nil)
        }
        if let p = boundPath {
            unlink(p)
            boundPath = nil
        }
    }

    /// Performed inside `perform`: what the core answers joins the list being performed.
    func closeTrace() {
        trace.sink?.close()
        // The metrics file's last figures are sampled after this: the trace's final counts stay in it.
        closedTraceFigures = trace.sink?.figures
        closeMetrics()
        trace.sink = nil
        feed(.traceClosed, at: uv_hrtime(), into: &actions)
    }

    /// The last figures asked for: performed inside `perform`, where the `metrics` action they
    /// end in writes them and then stops the metrics file's thread (once).
    func closeMetrics() {
        guard metrics != nil, !metricsClosing else { return }
        metricsClosing = true
        feed(.metricsTick, at: uv_hrtime(), into: &actions)
    }

    func closeConnections(graceMs: Int) {
        closeMetrics()
        traceWake?.close()
        traceWake = nil
        for id in connections.keys.sorted() { connections[id]?.closeAfterWrites() }
        check?.close()
        check = nil
        _ = turns.nextRound()
        backlogTurn?.close()
        backlogTurn = nil
        for s in signals { s.close() }
        signals.removeAll()
        for t in ticks { t.close() }
        ticks.removeAll()
        // Peers that do not read would hold their connection open: give them a moment.
        let grace = UVTimer(loop: loop) { [unowned self] in self.forceClose() }
        grace.start(afterMs: UInt64(graceMs))
        grace.unref()
        self.grace = grace
    }

    func forceClose() {
        uv_walk(loop, { h, _ in
            guard let h, uv_is_closing(h) == 0, h.pointee.type == UV_NAMED_PIPE else { return }
            Connection.from(h.pointee.data).close()
        }, nil)
        grace?.close()
        grace = nil
    }
}
