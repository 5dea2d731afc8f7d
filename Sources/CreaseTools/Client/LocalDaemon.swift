#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A `creased` this process starts for itself (`crease demo`): spawned from the
/// binary next to the running `crease`, on a socket in a fresh temporary directory,
/// its stderr in a log file there. The directory goes when the value does.
final class LocalDaemon {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// How a child process ended.
    enum Exit: Equatable, CustomStringConvertible {
        case status(Int32)
        case signal(Int32)

        init(waitStatus s: Int32) {
            self = s & 0x7f == 0 ? .status((s >> 8) & 0xff) : .signal(s & 0x7f)
        }

        var description: String {
            switch self {
            case .status(let n): "exit status \(n)"
            case .signal(let n): "signal \(n) (\(String(cString: strsignal(n))))"
            }
        }
    }

    let executable: String
    let directory: String
    let socketPath: String
    let logPath: String
    let pid: pid_t
    private(set) var exit: Exit?

    /// `creased` in the directory of the running executable.
    static func besideSelf() throws(Failure) -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { throw Failure(description: "cannot find the running crease: \(String(cString: strerror(errno)))") }
        let me = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let path = (me as NSString).deletingLastPathComponent + "/creased"
        guard access(path, X_OK) == 0 else {
            throw Failure(description: "no creased next to crease (\(path)); build it with `swift build --product creased`")
        }
        return path
    }

    /// Starts `executable --socket DIR/creased.sock ARGUMENTS...` in a new temporary directory.
    init(executable: String, arguments: [String]) throws(Failure) {
        var template = Array("/tmp/crease-demo-XXXXXX".utf8CString)
        guard let d = mkdtemp(&template) else { throw Failure(description: "mkdtemp: \(String(cString: strerror(errno)))") }
        self.executable = executable
        directory = String(cString: d)
        socketPath = directory + "/creased.sock"
        logPath = directory + "/creased.log"

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        // Whatever this process blocks or ignores, the daemon starts with the defaults.
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGINT, SIGTERM, SIGHUP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // Not systemd's child: none of its variables apply to this daemon.
        let inherited = ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"]
        let env = ProcessInfo.processInfo.environment.filter { !inherited.contains($0.key) }.map { "\($0.key)=\($0.value)" }
        let argv = [executable, "--socket", socketPath] + arguments
        var cArgv = argv.map { strdup($0) } + [nil]
        var cEnv = env.map { strdup($0) } + [nil]
        defer { for p in cArgv + cEnv { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attr, &cArgv, &cEnv)
        guard rc == 0 else {
            Self.removeDirectory(directory)
            throw Failure(description: "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
    }

    /// A daemon still running (the demo failed half way) is stopped the regular way,
    /// killed if that takes more than two seconds.
    deinit {
        if reap() == nil {
            kill(pid, SIGTERM)
            if waitForExit(timeout: 2) == nil {
                kill(pid, SIGKILL)
                _ = waitForExit(timeout: 5)
            }
        }
        Self.removeDirectory(directory)
    }

    /// Connects once the daemon accepts, trying every 10 ms for up to `timeout` seconds.
    func connect(timeout: Double = 10) throws(Failure) -> DaemonConnection {
        let deadline = Self.now() + timeout
        while true {
            if let c = try? DaemonConnection(path: socketPath) { return c }
            if let e = reap() { throw Failure(description: "creased stopped before it accepted (\(e))\(logTail())") }
            if Self.now() > deadline { throw Failure(description: "creased did not accept on \(socketPath) within \(timeout) s\(logTail())") }
            usleep(10_000)
        }
    }

    /// The exit, if the daemon has ended (reaps it).
    @discardableResult
    func reap() -> Exit? {
        if exit == nil {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { exit = Exit(waitStatus: status) }
        }
        return exit
    }

    /// Waits up to `timeout` seconds for the daemon to end.
    func waitForExit(timeout: Double) -> Exit? {
        let deadline = Self.now() + timeout
        while reap() == nil, Self.now() < deadline { usleep(5_000) }
        return exit
    }

    func signal(_ s: Int32) { if exit == nil { kill(pid, s) } }

    /// The daemon's stderr so far.
    func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// The last lines of the log, for an error message ("" when empty).
    func logTail(lines: Int = 15) -> String {
        let tail = log().split(separator: "\n").suffix(lines)
        return tail.isEmpty ? "" : "\ncreased's log:\n" + tail.joined(separator: "\n")
    }

    private static func removeDirectory(_ dir: String) {
        try? FileManager.default.removeItem(atPath: dir)
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
