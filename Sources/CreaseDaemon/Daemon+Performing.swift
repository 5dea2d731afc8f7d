#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseDaemonCore
import CreaseSystem

/// Feeding the core and performing what it decides, in order.
extension Daemon {
    // MARK: - Performing

    /// An input, into the recording under `--record-inputs`; built only then (the line and
    /// turn inputs go to the core through their own entry points, not as a `DaemonInput`).
    @inline(__always)
    func recordInput(_ input: @autoclosure () -> DaemonInput, at now: UInt64) {
        if let recorder { recorder.append(DaemonRecording.input(input(), at: now)) }
    }

    /// An input for the core (recorded first, under `--record-inputs`).
    @inline(__always)
    func feed(_ input: DaemonInput, at now: UInt64, into out: inout DaemonActions) {
        recordInput(input, at: now)
        core.handle(input, at: now, into: &out)
    }

    /// The loop finished an iteration: the open batch publishes, then what its relayouts
    /// evicted is freed, after the replies. One method, so the check handle's closure
    /// touches its unowned `self` once (each touch is a strong retain).
    func endIteration() {
        let now = uv_hrtime()
        recordInput(.endOfIteration, at: now)
        core.handleEndOfIteration(at: now, into: &actions)
        perform()
        recordInput(.repliesSent, at: 0)
        core.handleRepliesSent()
    }

    /// Performs what the core decided, in order, and empties the list.
    func perform() {
        var i = 0
        // Performing may add actions (a trace reopen's answer): read the list afresh each time.
        while i < actions.list.count {
            if let action = actions.frequent(at: i) {
                switch action {
                case .write(let client, let range):
                    if let c = connection(client) {
                        actions.bytes.withUnsafeBytes { c.send(UnsafeRawBufferPointer(rebasing: $0[range])) }
                        if !drops.isEmpty { handleDrops() }
                    }
                case .event(let event): record(event)
                case .queued(let tNs): trace.sink?.eventsQueued(atNs: tNs) { core.engine }
                case .flushTrace: trace.sink?.flush()
                }
                i += 1
                continue
            }
            switch actions.list[i] {
            case .write, .flushTrace:
                break   // performed above, as `frequent`
            case .closeAfterWrites(let client):
                connections[client]?.closeAfterWrites()
            case .startReading(let client):
                guard let c = connections[client] else { break }
                let r = c.startReading()
                if r != 0 {
                    log.warning("client \(client): cannot read: \(uvErrorName(r))")
                    c.close()
                }
            case .refuse(let client):
                guard let c = connections[client] else { break }
                forget(c)
                c.refuse(lingering: refusedPeers)
            case .record(let entry):
                record(entry)
            case .reopenTrace(let reason, let client, let id):
                let path = reopenTrace(reason: reason)
                if let client { feed(.traceReopened(path: path, client: client, id: id), at: uv_hrtime(), into: &actions) }
            case .log(let level, let message):
                log.log(level, message)
            case .sampleGauges:
                feed(.gauges(sampleGauges()), at: uv_hrtime(), into: &actions)
            case .metrics(let range):
                submitMetrics(actions.bytes[range])
            case .stopAccepting(let status):
                stopAccepting(status: status)
            case .closeTrace:
                closeTrace()
            case .closeConnections(let graceMs):
                closeConnections(graceMs: graceMs)
            }
            i += 1
        }
        if let recorder, !actions.isEmpty { recorder.append(DaemonRecording.actions(actions)) }
        actions.removeAll()
        if core.holdsAcks, let sink = trace.sink, let durable = sink.durableSeq {
            feed(.durable(seq: durable, awaitedRecords: sink.durableAwaitedRecords ?? .max), at: uv_hrtime(), into: &actions)
            if !actions.isEmpty { perform() }
        }
    }

    /// Clients the last write dropped (their queue passed its limit), told to the core.
    func handleDrops() {
        for (client, reason) in drops { feed(.dropped(client: client, reason: reason), at: uv_hrtime(), into: &actions) }
        drops.removeAll()
    }

    func record(_ entry: DaemonActions.TraceEntry) {
        guard let sink = trace.sink else { return }
        switch entry {
        case .event(let e):
            record(e)
        case .queued(let tNs):
            sink.eventsQueued(atNs: tNs) { core.engine }
        case .load(let tNs, let load):
            sink.recordLoad(tNs: tNs, load: load, state: core.engine)
        case .batch(let first, let last):
            sink.recordBatch(firstSeq: first, lastSeq: last)
        case .mark(let seq, let tNs, let label):
            sink.recordMark(seq: seq, tNs: tNs, label: label)
        case .frame(let seq, let tNs, let client, let verdict):
            sink.recordFrame(seq: seq, tNs: tNs, client: client, verdict: verdict)
        case .observation(let tNs, let client, let line, let result, let captured, let observedAs):
            actions.bytes.withUnsafeBytes {
                sink.recordObservation(tNs: tNs, client: client, commandLine: UnsafeRawBufferPointer(rebasing: $0[line]), result: result,
                                       captured: captured, observedAs: observedAs)
            }
        }
    }

    func record(_ e: EventRecord) {
        guard let sink = trace.sink else { return }
        actions.bytes.withUnsafeBytes { sink.recordEvent(e, in: $0) }
    }

    /// The trace writer moved its durable seq (or the trace is gone): held replies may go.
    func traceMovedOn() {
        feed(.durable(seq: trace.sink?.durableSeq ?? .max, awaitedRecords: trace.sink?.durableAwaitedRecords ?? .max), at: uv_hrtime(),
                    into: &actions)
        perform()
    }
}
