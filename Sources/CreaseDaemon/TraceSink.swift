import CreaseCore

/// Where the daemon records what it did, so a replay reproduces the same layouts
/// (contract section 6). The trace writer implements it; the daemon runs without
/// one (`--no-trace`). All calls come from the loop thread.
public protocol TraceSink: AnyObject {
    /// One applied event: `tNs` is the monotonic time its line was read, `client`
    /// the connection's number, `ts` the sender's clock, `eventLine` the line as
    /// received, `digest` the layout digest after it.
    func recordEvent(seq: Int, tNs: UInt64, client: Int, ts: Int64?, eventLine: ArraySlice<UInt8>, digest: UInt64)
    /// Events `firstSeq...lastSeq` were published as one layout (only for batches
    /// of two or more; a seq not covered by a batch was published alone, if it
    /// changed the layout).
    func recordBatch(firstSeq: Int, lastSeq: Int)
    /// A `mark` command, at the seq of the last applied event.
    func recordMark(seq: Int, tNs: UInt64, label: String)
    /// An `app` event replaced the manifest as `seq` (recorded after its recordEvent).
    func recordApp(seq: Int, tNs: UInt64, app: App)
    /// Closes the current file and starts a new one (SIGHUP, `trace rotate`);
    /// returns the new file's path.
    func reopen() throws -> String
    /// Flushes and closes, at shutdown.
    func close()
}

/// What a trace writer needs to write its header.
public struct TraceContext {
    public let daemonVersion: String
    /// The engine as the daemon starts: profile, app and initial state.
    public let engine: Engine
    /// The daemon's configuration as a JSON object.
    public let configJSON: [UInt8]
    /// `--trace-dir`, if given.
    public let directory: String?
}

public typealias TraceSinkFactory = (TraceContext) throws -> any TraceSink
