import CreaseDaemonCore
/// `creased`'s trace flags (the daemon's parser hands them here).
public struct TraceWriterOptions: Sendable, Equatable {
    public enum Fsync: String, Sendable, CaseIterable {
        /// Every record is on disk before the daemon answers the event it records.
        case always
        /// fsync at most once per `fsyncIntervalMs`; a crash of the machine may lose that much.
        case interval
        /// Leave it to the kernel.
        case never
    }

    public var fsync = Fsync.interval
    public var fsyncIntervalMs: UInt64 = 1000
    /// `--trace-layouts`: a layout record after each event that changed the layout.
    public var layouts = false
    /// A new file once the current one reaches this many bytes (0: never).
    public var rotateBytes: UInt64 = 256 << 20
    /// A new file once the current one spans this many seconds of events (0: never).
    public var rotateSeconds: UInt64 = 86_400
    /// `--trace-keep-bytes`: the directory's trace files are kept within this many bytes (0: no limit).
    public var keepBytes: UInt64 = 0
    /// `--trace-keep-days`: files last written longer ago than this are removed (0: no limit).
    public var keepDays: UInt64 = 0
    /// Bytes the loop may queue for the writer thread; past this, records are counted lost
    /// rather than letting a stalled disk grow memory without bound.
    public var queueLimitBytes = 8 << 20   // keeps the daemon inside its 32 MiB RSS budget whatever the disk does
    /// How often a failing trace tries to write again.
    public var retryMs: UInt64 = 1000

    public init() {}

    public static let usage = """
          --fsync MODE           always, interval (default: once a second) or never
          --trace-layouts        also record the full layout whenever it changes
          --trace-rotate-bytes N start a new trace file past N bytes (default 268435456; 0 never)
          --trace-rotate-seconds N  start a new trace file after N seconds (default 86400; 0 never)
          --trace-keep-bytes N   at start and each new file, remove the oldest trace files of
                                 the directory until they total at most N bytes (default 0: keep all)
          --trace-keep-days N    likewise remove files last written more than N days ago (default 0: keep all)
        """

    /// Flags that take a value.
    public static let valueFlags: Set<String> = ["--fsync", "--trace-rotate-bytes", "--trace-rotate-seconds",
                                                       "--trace-keep-bytes", "--trace-keep-days"]

    /// Sets one valued flag; the error is the message to show.
    public mutating func set(_ flag: String, _ value: String) throws(DaemonOptions.UsageError) {
        switch flag {
        case "--fsync":
            guard let mode = Fsync(rawValue: value) else {
                throw .init(description: "--fsync must be always, interval or never, not \"\(value)\"")
            }
            fsync = mode
        case "--trace-rotate-bytes": rotateBytes = try Self.whole(flag, value)
        case "--trace-rotate-seconds": rotateSeconds = try Self.whole(flag, value)
        case "--trace-keep-bytes": keepBytes = try Self.whole(flag, value)
        case "--trace-keep-days": keepDays = try Self.whole(flag, value)
        default:
            throw .init(description: "unknown trace flag \(flag)")
        }
    }

    private static func whole(_ flag: String, _ value: String) throws(DaemonOptions.UsageError) -> UInt64 {
        guard let n = UInt64(value) else { throw .init(description: "\(flag) needs a whole number, not \"\(value)\"") }
        return n
    }
}

/// Where trace files go: `--trace-dir`, else systemd's `$STATE_DIRECTORY` (its first
/// entry), else `./traces`.
public enum TraceDirectory {
    public static func resolve(explicit: String?, environment: [String: String]) -> String {
        if let d = explicit, !d.isEmpty { return d }
        if let s = environment["STATE_DIRECTORY"], let first = s.split(separator: ":").first, !first.isEmpty {
            return String(first)
        }
        return "./traces"
    }
}
