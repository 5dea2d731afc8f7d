import CreaseCore

/// Everything that happens to the daemon, as its core takes it: the shell turns each libuv
/// callback (and each signal) into one input and hands it to `DaemonCore.handle`, with the
/// time it read. The core answers with actions only.
public enum DaemonInput {
    /// A client connected as `peer` (nil when the kernel would not say). The core answers
    /// `.startReading` or `.refuse` (after telling it why).
    case connected(client: Int, peer: PeerCredentials?)
    /// One line of a client's (without its newline) read at `readNs`. The bytes are the
    /// caller's, valid for the call.
    case line(UnsafeRawBufferPointer, client: Int, readNs: UInt64)
    /// The line before was handled: the time is read after it (a batch the budget cuts here
    /// counts the time its last event took).
    case lineHandled
    /// The client hung up or its read failed, `unterminatedBytes` after its last newline.
    case endOfInput(client: Int, unterminatedBytes: Int)
    /// The client sent a line of `length`+ bytes, past the limit.
    case lineTooLong(client: Int, length: Int)
    /// The shell dropped a client whose queue passed its limit.
    case dropped(client: Int, reason: String)
    /// The client is gone (or going).
    case closed(client: Int)
    case bytesRead(Int)
    case bytesWritten(Int)
    /// The loop finished an iteration.
    case endOfIteration
    /// The iteration's replies are out.
    case repliesSent
    /// The trace's records up to `seq`, and `awaitedRecords` observation and mark records,
    /// are on disk (or counted lost).
    case durable(seq: Int, awaitedRecords: Int)
    /// The socket is listening: whether systemd handed it over, and how many read-only
    /// connections the descriptor limit leaves room for (per uid, and in all).
    case listening(socketActivated: Bool, readersPerUid: Int, readersTotal: Int)
    /// The stats timer fired.
    case statsTick
    /// The metrics timer fired (or the metrics file is written a last time).
    case metricsTick
    /// What the shell sampled when the core asked (`sampleGauges`).
    case gauges(SampledGauges)
    /// A signal asked for a new trace file (`reason`: its name).
    case rotateTrace(reason: String)
    /// The shell reopened the trace for `client`'s `trace rotate` (`path` nil: it failed).
    case traceReopened(path: String?, client: Int, id: JSONValue?)
    /// The trace opened, at start.
    case traceMode(DaemonCore.TraceMode)
    /// The trace closed (`.closeTrace`), every record on disk.
    case traceClosed
    /// Stopping (`reason`: the signal's name).
    case shutdown(reason: String)
}

extension DaemonCore {
    /// The one way in: every input, at `now` (the shell's clock, read once for it).
    @inline(__always)
    public mutating func handle(_ input: DaemonInput, at now: UInt64, into out: inout DaemonActions) {
        switch input {
        case .line(let line, let client, let readNs): handleLine(line, client: client, readNs: readNs, at: now, into: &out)
        case .lineHandled: handleLineHandled(at: now, into: &out)
        case .endOfIteration: handleEndOfIteration(at: now, into: &out)
        case .repliesSent: handleRepliesSent()
        case .bytesRead(let n): handleBytesRead(n)
        case .bytesWritten(let n): handleBytesWritten(n)
        case .durable(let seq, let awaited): durable(upTo: seq, awaitedRecords: awaited, at: now, into: &out)
        case .connected(let client, let peer): connected(client: client, peer: peer, at: now, into: &out)
        case .endOfInput(let client, let bytes): endOfInput(client: client, unterminatedBytes: bytes, at: now, into: &out)
        case .lineTooLong(let client, let length): lineTooLong(client: client, length: length, at: now, into: &out)
        case .dropped(let client, let reason): dropped(client: client, reason: reason, into: &out)
        case .closed(let client): closed(client: client)
        case .listening(let activated, let perUid, let total):
            config.socketActivated = activated
            config.readersPerUid = perUid
            config.readersTotal = total
        case .statsTick: statsTick(at: now, into: &out)
        case .metricsTick: metricsTick(at: now, into: &out)
        case .gauges(let sampled): gauges(sampled, into: &out)
        case .rotateTrace(let reason):
            // Events read before the signal are published first, so their records go into the old file.
            flush(at: now, into: &out)
            out.append(.reopenTrace(reason: reason, client: nil, id: nil))
        case .traceReopened(let path, let client, let id): traceReopened(path: path, client: client, id: id, into: &out)
        case .traceMode(let mode): trace = mode
        case .traceClosed: traceClosed(at: now, into: &out)
        case .shutdown(let reason): shutdown(reason: reason, at: now, into: &out)
        }
    }
}

extension DaemonCore {
    /// The inputs of every line and every loop turn, each as its own entry (what `handle` does
    /// for that case, and all it does): across the module boundary, building the input and
    /// switching on it again cost about 550 instructions a round trip. The shell records them
    /// as the inputs they are.
    ///
    /// `handle(.line(…))`, for the shell's call per line.
    public mutating func handleLine(_ line: UnsafeRawBufferPointer, client: Int, readNs: UInt64, at now: UInt64,
                                    into out: inout DaemonActions) {
        receive(line: line, from: client, readAt: readNs, now: now, into: &out)
    }

    /// `handle(.lineHandled)`, for the shell's call per line.
    public mutating func handleLineHandled(at now: UInt64, into out: inout DaemonActions) {
        lineHandled(at: now, into: &out)
    }

    /// `handle(.endOfIteration)` and `handle(.repliesSent)`, for the shell's calls per loop turn.
    public mutating func handleEndOfIteration(at now: UInt64, into out: inout DaemonActions) { endOfIteration(at: now, into: &out) }
    public mutating func handleRepliesSent() { repliesSent() }

    /// `handle(.bytesRead(n))` and `handle(.bytesWritten(n))`, for the shell's calls per read and write.
    public mutating func handleBytesRead(_ n: Int) { stats.bytesIn &+= UInt64(n) }
    public mutating func handleBytesWritten(_ n: Int) { stats.bytesOut &+= UInt64(n) }
}
