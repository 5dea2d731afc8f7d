import CreaseCore
import CreaseDaemonCore

/// Where the daemon records what it did, so a replay reproduces the same layouts
/// (contract section 6). The trace writer implements it; the daemon runs without
/// one (`--no-trace`). All calls come from the loop thread.
public protocol TraceSink: AnyObject {
    /// One applied event (`EventRecord`), its line and layout line ranges of `bytes` (valid
    /// only during the call). The line is as received, the sender's `ts` included; an `app`
    /// event's line holds the new manifest, so a replay follows the replacement. The layout
    /// line comes when the event changed the layout and the sink `recordsLayouts`.
    func recordEvent(_ record: EventRecord, in bytes: UnsafeRawBufferPointer)
    /// Whether event records carry their layout lines (`--trace-layouts`).
    var recordsLayouts: Bool { get }
    /// The layouts of every event recorded since the last call were queued to every
    /// subscriber at `tNs`: each event's record carries its latency, read to queued.
    /// Comes before the batch record and the flush of the batch those events ended.
    /// `state` gives the engine now: a file begun (a rotation) or a gap marked before the
    /// state changes again holds it. The sink calls it only when it will need it (a
    /// rotation is due, or the trace is failing), because copying an engine costs more
    /// than recording a batch of one event.
    func eventsQueued(atNs tNs: UInt64, state: () -> Engine)
    /// A `load` command whose line was read at `tNs`: what it put in place, one seq on
    /// (`load.t` is the sink's to set), and `state`, the engine it made. A load is a flush
    /// point: every earlier event is queued.
    func recordLoad(tNs: UInt64, load: TraceLoad, state: Engine)
    /// Events `firstSeq...lastSeq` were published as one layout (only for batches
    /// of two or more; a seq not covered by a batch was published alone, if it
    /// changed the layout).
    func recordBatch(firstSeq: Int, lastSeq: Int)
    /// A `mark` command, at the seq of the last applied event.
    func recordMark(seq: Int, tNs: UInt64, label: String)
    /// A frame judge's verdict on the device's screen (`{"cmd": "frame"}`), read at `tNs`.
    func recordFrame(seq: Int, tNs: UInt64, client: Int, verdict: FrameVerdict)
    /// An `observe` command as received (`commandLine`, valid only during the call), read
    /// at `tNs`, and the verdict the daemon gave it (its `seq` is the last applied event's).
    /// `captured`: when the screen was read (`capturedAt` as sent, on the daemon's clock).
    /// `observedAs`: the look is kept as a view of a layout, and `commandLine` is the command without `observed`.
    func recordObservation(tNs: UInt64, client: Int, commandLine: UnsafeRawBufferPointer, result: ConformanceResult, captured: ClosedRange<UInt64>?,
                           observedAs: ObservedReference?)
    /// A flush point (a batch was published): what is recorded so far may go to the disk.
    /// Sinks that write from another thread wake it here, once per batch rather than per event.
    func flush()
    /// Closes the current file and starts a new one (SIGHUP, `trace rotate`) whose
    /// header holds `state`, the engine now; returns the new file's path.
    func reopen(reason: String, state: Engine) throws -> String
    /// With `--fsync always`, the highest seq whose record is on disk (or counted
    /// lost): the daemon holds each event's reply until its seq is covered, and
    /// checks again when the sink calls `TraceContext.wake`. Nil: replies need not wait.
    var durableSeq: Int? { get }
    /// With `--fsync always`, how many observation and mark records (counted from the first
    /// `recordObservation` or `recordMark`) are on disk or counted lost: an `observe` or
    /// `mark` reply waits for its record as an event's does (a load's waits for its seq).
    /// Nil exactly when `durableSeq` is nil.
    var durableAwaitedRecords: Int? { get }
    /// The sink's figures (file, records, lost records, state), for `stats`: sampled by the
    /// shell when the core asks for its gauges.
    var figures: TraceFigures { get }
    /// Flushes and closes, at shutdown.
    func close()
}

/// What a trace writer needs to write its header, and its ways back into the daemon.
public struct TraceContext {
    public let daemonVersion: String
    /// The engine as the daemon starts: profile, app and initial state.
    public let engine: Engine
    /// The daemon's configuration as a JSON object.
    public let configJSON: [UInt8]
    /// `--trace-dir`, if given.
    public let directory: String?
    /// `--label`s, for every header and the directory's index.
    public let labels: [Label]
    public let log: Logger
    /// Thread-safe: tells the loop that `durableSeq` moved.
    public let wake: @Sendable () -> Void
    /// The monotonic time (ns) the daemon's clock counts from: the trace's `t = 0`, so
    /// each record's `t` is the time the engine was given (a motion sample's settle time is
    /// measured on it). Nil: the writer's own start.
    public let originNs: UInt64?
    /// The file this run continues (`--resume`), for the first file's header.
    public let resumedFrom: TraceHeader.ResumedFrom?

    public init(daemonVersion: String, engine: Engine, configJSON: [UInt8],
                directory: String?, labels: [Label] = [], log: Logger, originNs: UInt64? = nil,
                resumedFrom: TraceHeader.ResumedFrom? = nil, wake: @escaping @Sendable () -> Void) {
        self.originNs = originNs
        self.resumedFrom = resumedFrom
        self.labels = labels
        self.daemonVersion = daemonVersion
        self.engine = engine
        self.configJSON = configJSON
        self.directory = directory
        self.log = log
        self.wake = wake
    }
}

public typealias TraceSinkFactory = (TraceContext) throws -> any TraceSink
