import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// `creased`'s command line, parsed purely.
public struct DaemonOptions: Sendable, Equatable {
    public enum AppSource: Sendable, Equatable {
        case builtin(String)
        case file(String)
    }

    public var socketPath: String?
    public var app: AppSource = .builtin("tabs")
    public var profilePath: String?
    public var budgetUs: UInt64 = 1000
    public var logLevel: LogLevel = .info
    public var trace = true
    public var traceDirectory: String?
    /// `--resume`: continue from the newest trace in the trace directory.
    public var resume = false
    public var traceWriter = TraceWriterOptions()
    /// Bytes a connection may have queued, unsent, before it is dropped.
    public var maxQueueBytes = 1 << 20
    /// The longest line a client may send: a `load` or `app` carrying a large manifest
    /// needs more than the default 64 KiB (`crease replay --to` says how much).
    public var maxLineBytes = LineFramer.defaultLimit
    /// Read-only connections one uid may hold at once.
    public var maxReadersPerUid = 64
    /// How often subscribers of the `stats` topic get a push, in milliseconds.
    public var statsIntervalMs: UInt64 = 1000
    /// `--metrics-textfile`: where the stats go as Prometheus text, and how often.
    public var metricsTextfile: String?
    /// `--record-inputs PATH`: the core's inputs, readings and actions, written at the end (`DaemonRecording`).
    public var recordInputs: String?
    /// `--ready-fd N`: a descriptor the starter passed, written one byte and closed once the socket listens.
    public var readyFd: Int32?
    public var metricsIntervalMs: UInt64 = 5000
    /// How long a replaced layout still makes an observation stale rather than a mismatch.
    public var settleMs: UInt64 = 500
    /// `--trace-whole-looks`: record every observed object whole, never as a view of a layout.
    public var wholeLooks = false
    /// The socket's mode and group, and who may read or publish.
    public var access = AccessOptions()
    /// `--label KEY=VALUE`, in the order given: in `hello`, `stats`, trace headers and the trace index.
    public var labels: [Label] = []

    public init() {}

    public enum Parsed: Sendable, Equatable {
        case run(DaemonOptions)
        case help
        case version
    }

    public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public static let usage = """
        usage: creased [options]
          --socket PATH          Unix socket to listen on (default: $CREASE_SOCKET,
                                 else $XDG_RUNTIME_DIR/crease/creased.sock, else /run/crease/creased.sock)
          --app FILE|builtin:NAME  app manifest (default builtin:tabs; builtins: tabs, split, sidebar)
          --profile FILE         device profile (default: the built-in one)
          --budget-us N          latency budget per event in microseconds (default 1000)
          --max-queue-bytes N    unsent bytes a client may leave unread before it is dropped (default 1048576)
          --max-line-bytes N     the longest line a client may send (default 65536; more for large manifests)
          --max-readers-per-uid N  read-only connections one uid may hold (default 64; publishers are not limited)
          --stats-interval-ms N  period of `stats` pushes (default 1000)
          --label KEY=VALUE      what the rig says about itself (rig id, device serial, build, app version);
                                 repeatable; shown in hello, stats, trace headers and the trace index.
                                 KEY: a letter, then up to 63 letters, digits, _ . -; VALUE: up to 256 bytes
          --metrics-textfile PATH  write the stats as Prometheus text to PATH (replaced atomically)
                                 for node_exporter's textfile collector
          --metrics-interval-ms N  how often (default 5000)
          --settle-ms N          how long a replaced layout still makes an observation stale, not a mismatch (default 500)
          --trace-dir DIR        where trace files go
          --no-trace             record no trace
          --trace-whole-looks    record every look's observed object whole; by default a look that is exactly
                                 a layout's page-source or complete view is kept as a reference to that layout
          --resume               continue from the newest trace in the trace directory: its last state and seq
                                 (a cut tail truncated first); the new file names the one it continues
        \(TraceWriterOptions.usage)
          --log-level LEVEL      debug, info, notice, warning or error (default info)
          --ready-fd N           write one byte to descriptor N (a pipe the starter passed; 1 is
                                 standard output) and close it once the socket accepts clients
          --record-inputs PATH   write every input the daemon's decision core took, what it read of
                                 its surroundings and the actions it decided to PATH when it stops
                                 (debugging the daemon itself; docs/architecture.md)
        \(AccessOptions.usage)
          --version, --help
        A socket-activated start (LISTEN_FDS/LISTEN_PID) uses the passed socket instead.
        \(EnvironmentOptions.usage)
        Signals: TERM or INT stop (subscribers get a shutdown push), HUP begins a new trace file.
        Exit status: 0 stopped cleanly, 1 could not start, 2 bad option. Documentation: docs/daemon.md,
        docs/traces.md and docs/lab.md (installed under PREFIX/share/doc/crease).
        """

    /// Flags that only mean something for a recorded trace.
    static let traceFlags: Set<String> = TraceWriterOptions.valueFlags.union(["--trace-dir", "--trace-layouts", "--trace-whole-looks", "--resume"])

    /// `fromEnvironment`: how many of the first arguments came from `EnvironmentOptions`
    /// (flags the command line may override without contradicting them).
    public static func parse(_ arguments: [String], fromEnvironment: Int = 0) throws(UsageError) -> Parsed {
        // --flag=value is accepted too.
        let args = arguments.enumerated().flatMap { n, a -> [String] in
            guard n >= fromEnvironment, a.hasPrefix("--"), let eq = a.firstIndex(of: "=") else { return [a] }
            return [String(a[..<eq]), String(a[a.index(after: eq)...])]
        }
        let given = Array(args[min(fromEnvironment, args.count)...])
        if given.contains("--no-trace"), let flag = given.first(where: { traceFlags.contains($0) }) {
            throw UsageError(description: "--no-trace records nothing, so \(flag) means nothing with it: give one or the other")
        }
        var o = DaemonOptions()
        var i = 0
        func value(_ flag: String) throws(UsageError) -> String {
            i += 1
            guard i < args.count else { throw UsageError(description: "\(flag) needs a value") }
            return args[i]
        }
        func number(_ flag: String, min: UInt64) throws(UsageError) -> UInt64 {
            let s = try value(flag)
            guard let n = UInt64(s), n >= min else { throw UsageError(description: "\(flag) needs an integer >= \(min), not \"\(s)\"") }
            return n
        }
        while i < args.count {
            let arg = args[i]
            switch arg {
            case "-h", "--help": return .help
            case "--version": return .version
            case "--socket":
                let p = try value(arg)
                guard !p.isEmpty else { throw UsageError(description: "--socket needs a path") }
                o.socketPath = p
            case "--app":
                let a = try value(arg)
                if a.hasPrefix("builtin:") {
                    o.app = .builtin(String(a.dropFirst("builtin:".count)))
                } else {
                    o.app = .file(a)
                }
            case "--profile": o.profilePath = try value(arg)
            case "--budget-us": o.budgetUs = try number(arg, min: 1)
            case "--max-queue-bytes": o.maxQueueBytes = Int(try number(arg, min: 1024))
            case "--max-readers-per-uid": o.maxReadersPerUid = Int(try number(arg, min: 1))
            case "--max-line-bytes":
                o.maxLineBytes = Int(try number(arg, min: UInt64(LineFramer.defaultLimit)))
                guard o.maxLineBytes <= 64 << 20 else { throw UsageError(description: "--max-line-bytes takes at most 67108864 (64 MiB)") }
            case "--stats-interval-ms": o.statsIntervalMs = try number(arg, min: 10)
            case "--label":
                let text = try value(arg)
                let label: Label
                do { label = try Label(parsing: text) } catch { throw UsageError(description: "--label: \(error.message)") }
                guard !o.labels.contains(where: { $0.key == label.key }) else {
                    throw UsageError(description: "--label: \"\(label.key)\" is given twice")
                }
                o.labels.append(label)
            case "--metrics-textfile":
                let p = try value(arg)
                guard !p.isEmpty else { throw UsageError(description: "--metrics-textfile needs a path") }
                o.metricsTextfile = p
            case "--metrics-interval-ms": o.metricsIntervalMs = try number(arg, min: 100)
            case "--ready-fd":
                let n = try number(arg, min: 1)
                guard n <= 65_535 else { throw UsageError(description: "--ready-fd takes a descriptor from 1 to 65535") }
                o.readyFd = Int32(n)
            case "--record-inputs":
                let p = try value(arg)
                guard !p.isEmpty else { throw UsageError(description: "--record-inputs needs a path") }
                o.recordInputs = p
            case "--settle-ms":
                o.settleMs = try number(arg, min: 0)
                guard o.settleMs <= 3_600_000 else { throw UsageError(description: "--settle-ms takes 0 to 3600000 milliseconds") }
            case "--trace-dir": o.traceDirectory = try value(arg)
            case "--no-trace": o.trace = false
            case "--resume": o.resume = true
            case "--trace-layouts": o.traceWriter.layouts = true
            case "--trace-whole-looks": o.wholeLooks = true
            case _ where TraceWriterOptions.valueFlags.contains(arg): try o.traceWriter.set(arg, try value(arg))
            case _ where AccessOptions.valueFlags.contains(arg): try o.access.set(arg, try value(arg))
            case "--log-level":
                let l = try value(arg)
                guard let level = LogLevel(name: l) else {
                    throw UsageError(description: "--log-level must be one of \(LogLevel.allCases.map(\.name).joined(separator: ", ")), not \"\(l)\"")
                }
                o.logLevel = level
            default:
                throw UsageError(description: "unknown argument \"\(arg)\"")
            }
            i += 1
        }
        return .run(o)
    }
}
