#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where the binaries are: `creased` (and `crease` itself, for the echo server) next to
/// the running executable.
struct BenchBinaries {
    let directory: String

    static func locate() throws -> BenchBinaries {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { throw UsageError("cannot find the running executable (/proc/self/exe)") }
        let exe = String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let dir = String(exe[..<(exe.lastIndex(of: "/") ?? exe.startIndex)])
        let found = BenchBinaries(directory: dir)
        for name in ["creased", "crease"] where access(found.path(name), X_OK) != 0 {
            throw UsageError("\(name) is not next to \(exe); build both with `swift build -c release`")
        }
        return found
    }

    func path(_ name: String) -> String { "\(directory)/\(name)" }
}

/// A temporary directory for sockets, logs and traces, removed at the end.
final class BenchDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/crease-bench-XXXXXX".utf8CString)
        guard let p = mkdtemp(&template) else { throw UsageError("mkdtemp: \(String(cString: strerror(errno)))") }
        path = String(cString: p)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// A child process of the bench (a `creased`, or `crease bench serve-echo`): spawned with
/// no signals blocked, its stderr in a log file, stopped with SIGTERM.
final class BenchChild {
    let pid: pid_t
    let name: String
    let logPath: String
    let socketPath: String
    private var exited = false
    private var stopped = false
    private(set) var exitStatus: Int32 = 0

    /// Spawns `executable` and waits until `socketPath` accepts a connection (at most
    /// `startupSeconds`: under valgrind a start takes seconds).
    init(name: String, executable: String, arguments: [String], socketPath: String, logPath: String, startupSeconds: Double = 10) throws {
        self.name = name
        self.logPath = logPath
        self.socketPath = socketPath
        pid = try BenchChild.spawn(executable: executable, arguments: arguments, logPath: logPath)
        let deadline = Clock.now() + UInt64(startupSeconds * 1e9)
        while true {
            if (try? BenchSocket(path: socketPath, timeoutSeconds: 1)) != nil { break }
            if reap(block: false) {
                throw UsageError("\(name) exited (status \(exitStatus)) before accepting on \(socketPath):\n\(logTail())")
            }
            guard Clock.now() < deadline else {
                kill(pid, SIGKILL)
                _ = reap(block: true)
                throw UsageError("\(name) did not accept on \(socketPath) within \(Int(startupSeconds)) s:\n\(logTail())")
            }
            usleep(5_000)
        }
    }

    /// Runs `executable` to its end (stdin and stdout /dev/null, stderr into `logPath`) and
    /// returns its exit status.
    static func runToEnd(executable: String, arguments: [String], logPath: String) throws -> Int32 {
        let pid = try spawn(executable: executable, arguments: arguments, logPath: logPath)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw CheckFailed("waitpid: \(String(cString: strerror(errno)))") }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// posix_spawn with no signals blocked, the defaults for those the daemon handles, and
    /// none of systemd's variables.
    private static func spawn(executable: String, arguments: [String], logPath: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attr, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for s in [SIGPIPE, SIGTERM, SIGINT, SIGHUP] { sigaddset(&defaults, s) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // The child must not talk to systemd or pick up another socket.
        let dropped: Set<String> = ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID",
                                    "JOURNAL_STREAM", "CREASE_SOCKET"]
        let env = ProcessInfo.processInfo.environment.filter { !dropped.contains($0.key) }.map { "\($0.key)=\($0.value)" }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup($0) } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var child = pid_t()
        let rc = posix_spawn(&child, executable, &actions, &attr, argv, envp)
        guard rc == 0 else { throw UsageError("cannot start \(executable): \(String(cString: strerror(rc)))") }
        return child
    }

    /// Whether the child has exited (collecting its status).
    private func reap(block: Bool) -> Bool {
        guard !exited else { return true }
        var status: Int32 = 0
        let r = waitpid(pid, &status, block ? 0 : WNOHANG)
        guard r == pid else { return false }
        exited = true
        // WIFEXITED / WEXITSTATUS, spelled out (the macros do not import).
        exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return true
    }

    /// SIGTERM, then waits up to 10 s for a clean exit; SIGKILL after that. Returns a
    /// problem to report (an unclean exit, a socket left behind), or nil; nil again when
    /// called a second time.
    @discardableResult
    func stop() -> String? {
        guard !stopped else { return nil }
        stopped = true
        guard !exited else { return exitStatus == 0 ? nil : "\(name) had exited with status \(exitStatus)" }
        kill(pid, SIGTERM)
        let deadline = Clock.now() + 10_000_000_000
        while !reap(block: false) {
            if Clock.now() > deadline {
                kill(pid, SIGKILL)
                _ = reap(block: true)
                return "\(name) did not stop within 10 s of SIGTERM and was killed"
            }
            usleep(2_000)
        }
        if exitStatus != 0 { return "\(name) exited with status \(exitStatus):\n\(logTail())" }
        if access(socketPath, F_OK) == 0 { return "\(name) left its socket \(socketPath) behind" }
        return nil
    }

    /// Resident set size, its peak, and its anonymous (heap, stacks) and file-backed
    /// (the binary and shared libraries) parts, in KiB, from /proc/PID/status.
    func memoryKiB() -> Memory {
        let status = MachineInfo.readText("/proc/\(pid)/status") ?? ""
        func field(_ name: String) -> Int { MachineInfo.field(name, in: status) ?? 0 }
        return Memory(rss: field("VmRSS"), peak: field("VmHWM"), anon: field("RssAnon"), file: field("RssFile"))
    }

    struct Memory {
        var rss: Int
        var peak: Int
        var anon: Int
        var file: Int

        var mib: String {
            "\(Format.fixed(Double(rss) / 1024, 1)) MiB (anonymous \(Format.fixed(Double(anon) / 1024, 1)), files \(Format.fixed(Double(file) / 1024, 1)))"
        }
    }

    func logTail() -> String {
        let text = MachineInfo.readText(logPath) ?? ""
        return text.split(separator: "\n").suffix(10).joined(separator: "\n")
    }
}

/// The children a scenario started: whatever happens, each is stopped at the end, and
/// what went wrong in stopping them becomes a problem of the report.
final class Children {
    private var list: [BenchChild] = []

    func add(_ c: BenchChild) -> BenchChild {
        list.append(c)
        return c
    }

    func stopAll() -> [String] { list.reversed().compactMap { $0.stop() } }

    static func scope(_ body: (Children) throws -> ScenarioReport) throws -> ScenarioReport {
        let children = Children()
        var report: ScenarioReport
        do { report = try body(children) } catch {
            _ = children.stopAll()
            throw error
        }
        report.problems += children.stopAll()
        return report
    }
}
