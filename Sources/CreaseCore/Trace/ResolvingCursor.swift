/// Walks a file's records as `TraceCursor` does, with every look the trace keeps as a
/// reference (`observedAs`) rebuilt from the layouts a replay with the trace's own profile
/// makes current: for readers that take observations without replaying the trace
/// themselves (`trace diff`, `trace minimize`, `calibrate`'s candidates).
///
/// A record the replay cannot apply (a structural error) leaves it where it was; a look it
/// cannot rebuild stays unresolved (`isResolved` false) for the reader to name.
public struct ResolvingCursor: Sendable {
    private var cursor: TraceCursor
    private var replayer: TraceReplayer

    public init(_ file: TraceFile) {
        cursor = file.cursor()
        replayer = TraceReplayer(header: file.header, verify: false)
    }

    public mutating func next() throws(TraceError) -> TracedRecord? {
        guard var traced = try cursor.next() else { return nil }
        guard case .observation(let recorded) = traced.record else {
            _ = try? replayer.apply(traced)
            return traced
        }
        do { _ = try replayer.apply(traced) } catch { return traced }
        if let o = replayer.lastObservation, o.seq == recorded.seq, o.t == recorded.t { traced.record = .observation(o) }
        return traced
    }
}

extension TraceFile {
    public func resolvingCursor() -> ResolvingCursor { ResolvingCursor(self) }
}

extension TraceObservation {
    /// The error for a look a reader needs whole but the trace keeps as a view of a layout
    /// the replay never reaches (a trace recorded by a build whose rules differ).
    public func unresolvedError(line: Int, offset: Int, reader: String) -> TraceError {
        TraceError("the look at seq \(seq) is kept as the \(observedAs?.view.rawValue ?? "?") view of layout \(Digest.hex(observedAs?.layout ?? 0)), "
                   + "which replaying the trace does not give: \(reader) cannot use it (record with --trace-whole-looks to keep every look whole)",
                   line: line, offset: offset)
    }
}
