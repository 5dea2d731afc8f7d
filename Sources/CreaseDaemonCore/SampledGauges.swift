import CreaseCore

/// What the core cannot know by itself, sampled by the shell when the core asks
/// (`DaemonActions.Action.sampleGauges`) and handed back as the `gauges` input: the
/// resident size, the log's dropped lines and the trace writer's figures. An input like any
/// other, so a recording holds it and a replay hands back the same values.
public struct SampledGauges: Equatable, Sendable {
    public var residentKiB: Int
    public var logDroppedLines: UInt64
    /// The trace writer's figures; nil without a trace.
    public var trace: TraceFigures?

    public init(residentKiB: Int, logDroppedLines: UInt64, trace: TraceFigures?) {
        self.residentKiB = residentKiB
        self.logDroppedLines = logDroppedLines
        self.trace = trace
    }
}

/// The trace writer's own figures, as `stats` reports them under `trace`. The writer
/// owns them (it alone knows what reached the disk); the core only reports them.
public struct TraceFigures: Equatable, Sendable {
    public var file: String
    /// Why the trace is failing; nil while it writes.
    public var failure: String?
    public var fsync: String
    public var records: Int
    public var bytes: Int
    public var lost: Int
    public var gaps: Int
    public var files: Int
    /// Files and bytes retention removed, when `--trace-keep-*` is set.
    public var removed: Removed?

    public struct Removed: Equatable, Sendable {
        public var files: Int
        public var bytes: Int
        public init(files: Int, bytes: Int) {
            self.files = files
            self.bytes = bytes
        }
    }

    public init(file: String, failure: String?, fsync: String, records: Int, bytes: Int, lost: Int, gaps: Int, files: Int,
                removed: Removed?) {
        self.file = file
        self.failure = failure
        self.fsync = fsync
        self.records = records
        self.bytes = bytes
        self.lost = lost
        self.gaps = gaps
        self.files = files
        self.removed = removed
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("file"); w.string(file)
        w.key("state"); w.string(failure == nil ? "writing" : "failing")
        if let failure { w.key("error"); w.string(failure) }
        w.key("fsync"); w.string(fsync)
        w.key("records"); w.int(records)
        w.key("bytes"); w.int(bytes)
        w.key("lost"); w.int(lost)
        w.key("gaps"); w.int(gaps)
        w.key("files"); w.int(files)
        if let removed {
            w.key("removedFiles"); w.int(removed.files)
            w.key("removedBytes"); w.int(removed.bytes)
        }
        w.endObject()
    }
}
