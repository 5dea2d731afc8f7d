#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseDaemon
import CreaseDaemonCore
import Foundation
import Testing
import CreaseTestSupport

/// A lab's deployment: scripts/install into a temporary prefix, a rig's configuration
/// file, trace retention.

/// `VARIABLE=value` lines of an environment file as systemd reads them (comments,
/// blank lines, one level of double quotes).
func readEnvironmentFile(_ path: String) throws -> [String: String] {
    var env: [String: String] = [:]
    for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
        let l = line.trimmingCharacters(in: .whitespaces)
        guard !l.isEmpty, !l.hasPrefix("#"), let eq = l.firstIndex(of: "=") else { continue }
        var value = String(l[l.index(after: eq)...])
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        env[String(l[..<eq])] = value
    }
    return env
}

/// Files under `dir`, relative, sorted.
func filesBelow(_ dir: String) -> [String] {
    (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).filter { rel in
        var isDir: ObjCBool = false
        return FileManager.default.fileExists(atPath: "\(dir)/\(rel)", isDirectory: &isDir) && !isDir.boolValue
    }.sorted()
}

@Suite(.serialized) struct InstallTests {
    let script = packageRoot.appendingPathComponent("scripts/install").path

    @Test func installsIntoAPrefixVerifiesAndUninstalls() throws {
        let prefix = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        let build = URL(fileURLWithPath: try creasedBinary()).deletingLastPathComponent().path
        let first = try run(script, ["--prefix", prefix, "--from-build", build, "--files-only"])
        #expect(first.status == 0, "\(first.err)")
        let files = filesBelow(prefix)
        for expected in ["bin/crease", "bin/creased", "lib/systemd/system/creased@.service", "lib/systemd/system/creased@.socket",
                         "lib/systemd/system/creased.service", "lib/sysusers.d/crease.conf", "share/doc/crease/lab.md",
                         "share/doc/crease/daemon.md", "share/doc/crease/rig.conf.example",
                         "share/doc/crease/systemd-lab/creased.service.d/lab.conf"] {
            #expect(files.contains(expected), "\(expected) missing from \(files)")
        }

        // ExecStart= names the installed binary, and its flags parse with creased's parser.
        let unitDir = "\(prefix)/lib/systemd/system"
        let service = try String(contentsOfFile: "\(unitDir)/creased@.service", encoding: .utf8)
        let execStart = try #require(service.split(separator: "\n").first { $0.hasPrefix("ExecStart=") })
        let words = execStart.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
        #expect(words.first == "\(prefix)/bin/creased")
        #expect(FileManager.default.isExecutableFile(atPath: words[0]))
        #expect(throws: Never.self) { try DaemonOptions.parse(Array(words.dropFirst())) }
        #expect(service.contains("EnvironmentFile=/etc/crease/%i.conf"))
        #expect(service.contains("Documentation=file://\(prefix)/share/doc/crease/daemon.md"))
        #expect(!service.contains("/usr/local"))

        // The installed units, and the template as instance rig1, pass systemd-analyze verify.
        var units = ["creased.service", "creased.socket", "creased@.service", "creased@.socket"].map { "\(unitDir)/\($0)" }
        let instances = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: instances) }
        for name in ["creased@.service", "creased@.socket"] {
            let path = "\(instances)/\(name.replacingOccurrences(of: "@", with: "@rig1"))"
            try FileManager.default.copyItem(atPath: "\(unitDir)/\(name)", toPath: path)
            units.append(path)
        }
        let verify = try run(try findTool("systemd-analyze"), ["verify", "--man=no"] + units)
        #expect(verify.status == 0 && verify.err.isEmpty, "\(verify.err)")

        // Again: the same files, nothing added.
        let again = try run(script, ["--prefix", prefix, "--from-build", build, "--files-only"])
        #expect(again.status == 0, "\(again.err)")
        #expect(filesBelow(prefix) == files)

        let removed = try run(script, ["--uninstall", "--prefix", prefix, "--files-only"])
        #expect(removed.status == 0, "\(removed.err)")
        #expect(filesBelow(prefix) == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: prefix) == [])
    }

    @Test func refusesARelativePrefix() throws {
        let r = try run(script, ["--prefix", "relative/dir", "--from-build", "/nonexistent", "--files-only"])
        #expect(r.status == 2)
        #expect(r.err.contains("absolute"))
    }
}

@Suite struct RigConfigurationTests {
    let example = packageRoot.appendingPathComponent("systemd/rig.conf.example").path

    @Test func theExampleFileConfiguresADaemon() throws {
        var env = try readEnvironmentFile(example)
        #expect(env["CREASE_APP"] == "builtin:tabs")
        env["CREASE_BUDGET_US"] = "777"
        env["CREASE_FSYNC"] = "never"
        // As creased@rig7.service starts it: the unit names the rig, the file the rest.
        let d = try DaemonProcess(arguments: ["--label", "rig=rig7"], environment: env)
        let c = try Client(d.socketPath)
        #expect(try c.request(#"{"cmd":"hello"}"#)["budgetUs"] == .number(777), "\(d.log())")
        let stats = try #require(try c.request(#"{"cmd":"stats"}"#)["stats"])
        #expect(stats["trace"]?["fsync"] == .string("never"))
        // Retention from the file is on: its counters are reported.
        #expect(stats["trace"]?["removedFiles"] == .number(0))
        let labels = try #require(env[EnvironmentOptions.labelsVariable])
        #expect(!labels.contains("rig="), "the unit passes --label rig=%i; the file must not repeat it")
        #expect(stats["labels"]?["rig"] == .string("rig7") && stats["labels"]?["site"] == .string("lab1"), "\(stats)")
    }

    @Test func theCommandLineWinsOverTheEnvironment() throws {
        let d = try DaemonProcess(arguments: ["--budget-us", "555"], environment: ["CREASE_BUDGET_US": "777"])
        #expect(try Client(d.socketPath).request(#"{"cmd":"hello"}"#)["budgetUs"] == .number(555))
    }

    @Test func aBadValueInTheEnvironmentIsNamed() throws {
        let r = try run(try creasedBinary(), ["--socket", "/nonexistent/x.sock"], environment: ["CREASE_FSYNC": "sometimes", "PATH": "/usr/bin:/bin"])
        #expect(r.status == 2)
        #expect(r.err.contains("in the environment") && r.err.contains("--fsync"), "\(r.err)")
    }

    @Test func environmentVariablesBecomeFlags() throws {
        let args = try EnvironmentOptions.arguments(["CREASE_APP": "builtin:split", "CREASE_PROFILE": "", "CREASE_LABELS": "rig=a  site=b",
                                                 "CREASE_TRACE_KEEP_DAYS": "7", "UNRELATED": "x"])
        #expect(args == ["--app", "builtin:split", "--trace-keep-days", "7", "--label", "rig=a", "--label", "site=b"])
    }

    /// A label with a space could not be set through CREASE_LABELS: values are quoted as a shell would.
    @Test func labelsInTheEnvironmentMayBeQuoted() throws {
        let args = try EnvironmentOptions.arguments(["CREASE_LABELS": #"rig=a site="Lab 3" 'note=it'\''s here' path=x\ y"#])
        #expect(args == ["--label", "rig=a", "--label", "site=Lab 3", "--label", "note=it's here", "--label", "path=x y"])
        #expect(throws: DaemonOptions.UsageError.self) { try EnvironmentOptions.arguments(["CREASE_LABELS": #"site="Lab 3"#]) }
    }

    /// `--no-trace --fsync always` was accepted without a word; a trace flag from the
    /// environment is overridden by --no-trace on the command line, as every flag is.
    @Test func optionsThatContradictEachOtherAreRefused() throws {
        for flag in [["--fsync", "always"], ["--trace-dir", "/tmp/x"], ["--trace-layouts"], ["--trace-keep-days", "3"]] {
            #expect(throws: DaemonOptions.UsageError.self, "\(flag)") { try DaemonOptions.parse(["--no-trace"] + flag) }
            #expect(throws: DaemonOptions.UsageError.self, "\(flag)") { try DaemonOptions.parse(flag + ["--no-trace"]) }
        }
        let e = #expect(throws: DaemonOptions.UsageError.self) { try DaemonOptions.parse(["--no-trace", "--fsync=always"]) }
        #expect(e?.description.contains("--no-trace records nothing, so --fsync means nothing with it") == true)
        guard case .run(let o) = try DaemonOptions.parse(["--fsync", "always", "--no-trace"], fromEnvironment: 2) else {
            Issue.record("not a run"); return
        }
        #expect(!o.trace)
    }

    /// `--trace-dir /proc/x` printed Foundation's error object; the log now says what failed and what to do.
    @Test func anUncreatableTraceDirectoryIsSaidPlainly() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/file", contents: Data())
        let d = try DaemonProcess(arguments: ["--trace-dir", "\(dir)/file/traces"])
        try waitUntil("the trace's failure logged") { d.log().contains("cannot open the trace") }
        #expect(d.log().contains("the trace directory \(dir)/file/traces cannot be made: \(dir)/file is not a directory"), "\(d.log())")
        #expect(d.log().contains("--no-trace to mean it"))
        #expect(!d.log().contains("NSCocoaErrorDomain"))
    }
}

@Suite struct TraceRetentionTests {
    typealias File = TraceRetention.File
    let day = 86_400
    let now = 1_800_000_000

    @Test func byAgeRemovesOnlyWhatIsOlder() {
        let r = TraceRetention(keepBytes: 0, keepDays: 7)
        let files = [File(name: "old", bytes: 10, modified: now - 8 * day), File(name: "new", bytes: 10, modified: now - 6 * day),
                     File(name: "cur", bytes: 10, modified: now - 9 * day)]
        #expect(r.filesToRemove(files, current: "cur", now: now).map(\.name) == ["old"])
    }

    @Test func bySizeRemovesTheOldestFirstAndNeverTheCurrent() {
        let r = TraceRetention(keepBytes: 250, keepDays: 0)
        let files = [File(name: "c", bytes: 100, modified: now - 1), File(name: "a", bytes: 100, modified: now - 300),
                     File(name: "b", bytes: 100, modified: now - 200), File(name: "cur", bytes: 100, modified: now)]
        #expect(r.filesToRemove(files, current: "cur", now: now).map(\.name) == ["a", "b"])
        let tiny = TraceRetention(keepBytes: 1, keepDays: 0)
        #expect(tiny.filesToRemove(files, current: "cur", now: now).map(\.name) == ["a", "b", "c"])
        #expect(TraceRetention(keepBytes: 0, keepDays: 0).filesToRemove(files, current: "cur", now: now).isEmpty)
    }

    @Test func onlyTraceFilesAreCandidates() {
        #expect(TraceRetention.isTraceFile("creased-20261130T012623Z-4242-0.jsonl"))
        #expect(!TraceRetention.isTraceFile("notes.jsonl"))
        #expect(!TraceRetention.isTraceFile("creased-20261130T012623Z-4242-0.jsonl.gz"))
    }

    /// Trace files named as creased names them, `bytes` long, last written `age` seconds ago.
    func plantTraces(in dir: String, ages: [Int], bytes: Int = 1000) throws -> [String] {
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return try ages.enumerated().map { i, age in
            let name = "creased-20200101T00000\(i)Z-1-0.jsonl"
            let path = "\(dir)/\(name)"
            try Data(repeating: 0x20, count: bytes).write(to: URL(fileURLWithPath: path))
            var times = [timeval(tv_sec: time(nil) - age, tv_usec: 0), timeval(tv_sec: time(nil) - age, tv_usec: 0)]
            #expect(utimes(path, &times) == 0)
            return name
        }
    }

    func traceFiles(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).filter(TraceRetention.isTraceFile).sorted()
    }

    /// Polls until `condition` holds (the writer thread prunes on its own time); the
    /// deadline is a loaded machine's worst pause, not a measure of speed.
    func eventually(_ condition: () -> Bool) -> Bool { pollUntil(condition) }

    @Test func aDaemonRemovesExpiredFilesAtStartAndKeepsOthers() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let traces = "\(dir)/traces"
        let planted = try plantTraces(in: traces, ages: [40 * day, 31 * day, 2 * day])
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: "\(traces)/notes.txt"))
        let d = try DaemonProcess(arguments: ["--trace-dir", traces, "--trace-keep-days", "30"])
        #expect(eventually { !traceFiles(traces).contains(planted[1]) }, "\(d.log())")
        let left = traceFiles(traces)
        #expect(!left.contains(planted[0]))
        #expect(left.contains(planted[2]))
        #expect(left.count == 2)
        #expect(FileManager.default.fileExists(atPath: "\(traces)/notes.txt"))
        let c = try Client(d.socketPath)
        #expect(eventually { (try? c.request(#"{"cmd":"stats"}"#))?["stats"]?["trace"]?["removedFiles"] == .number(2) })
        #expect(try c.request(#"{"cmd":"stats"}"#)["stats"]?["trace"]?["removedBytes"] == .number(2000))
    }

    @Test func aSizeLimitKeepsOnlyTheFileBeingWrittenAcrossRotations() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let traces = "\(dir)/traces"
        _ = try plantTraces(in: traces, ages: [300, 200])
        // --fsync never: a rotation syncs the old file first, which a busy disk can hold up for seconds.
        let d = try DaemonProcess(arguments: ["--trace-dir", traces, "--trace-keep-bytes", "1", "--fsync", "never"])
        let c = try Client(d.socketPath)
        // Even alone over the limit, the file being written stays.
        #expect(eventually { traceFiles(traces).count == 1 }, "\(traceFiles(traces)) \(d.log())")
        let first = try #require(traceFiles(traces).first)
        #expect(first.contains("-\(d.process.processIdentifier)-0.jsonl"))
        for i in 0..<3 {
            #expect(try c.request(toggle(i, id: "e\(i)"))["ok"] == .bool(true))
            let rotated = try c.request(#"{"cmd":"trace","action":"rotate"}"#)["trace"]?.str
            let name = try #require(rotated?.split(separator: "/").last.map(String.init))
            #expect(eventually { traceFiles(traces) == [name] }, "\(traceFiles(traces))")
        }
        // The count follows the last removal a moment later (same writer thread, after the unlink).
        #expect(eventually { (try? c.request(#"{"cmd":"stats"}"#))?["stats"]?["trace"]?["removedFiles"] == .number(5) })
        // The index keeps up with the removals: it names only files that are there (it once
        // grew for ever, a line per file ever begun).
        #expect(eventually {
            let index = (try? String(contentsOfFile: "\(traces)/index.ndjson", encoding: .utf8)) ?? ""
            let named = index.split(separator: "\n").compactMap { parseJSON(String($0))?["file"]?.str }
            return named == traceFiles(traces)
        }, "\((try? String(contentsOfFile: "\(traces)/index.ndjson", encoding: .utf8)) ?? "")")
    }
}

@Suite struct MetricsTextfileTests {
    @Test func theStatsLandInTheFileAtomicallyAsPrometheusText() throws {
        let dir = try makeTempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/rig.prom"
        let d = try DaemonProcess(arguments: ["--metrics-textfile", path, "--metrics-interval-ms", "100"])
        let c = try Client(d.socketPath)
        for i in 0..<3 { #expect(try c.request(toggle(i, id: "e\(i)"))["ok"] == .bool(true)) }
        // Series are labelled with the rig, named after the socket (run/creased.sock).
        // Readers only ever see whole files: each read ends with the last family's line.
        var reads = 0
        var sawAll = false
        pollUntil {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return false }
            reads += 1
            #expect(text.hasSuffix("\n") && text.contains("\ncrease_trace_failing{rig=\"creased\"} 0\n"), "a partial file: \(text.suffix(200))")
            if text.contains("\ncrease_events_total{rig=\"creased\"} 3\n") { sawAll = true }
            return sawAll && reads >= 50
        }
        #expect(sawAll, "\(d.log())")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("# TYPE crease_events_total counter"))
        #expect(text.contains("# TYPE crease_latency_seconds histogram"))
        #expect(!text.contains("# EOF"))
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["rig.prom"])

        // At a clean stop the file keeps the last figures.
        #expect(try c.request(toggle(3, id: "last"))["ok"] == .bool(true))
        d.signal(SIGTERM)
        #expect(d.waitForExit() == 0)
        #expect(try String(contentsOfFile: path, encoding: .utf8).contains("\ncrease_events_total{rig=\"creased\"} 4\n"))
    }

    @Test func aFileThatCannotBeWrittenIsLoggedAndTheDaemonServesOn() throws {
        let d = try DaemonProcess(arguments: ["--metrics-textfile", "/nonexistent-dir/rig.prom", "--metrics-interval-ms", "100"])
        let c = try Client(d.socketPath)
        let said = "metrics: cannot write /nonexistent-dir/rig.prom: cannot create /nonexistent-dir/rig.prom.crease-"
        pollUntil { d.log().contains(said) }
        #expect(d.log().contains(said), "\(d.log())")
        #expect(try c.request(toggle(0, id: "e"))["ok"] == .bool(true))
    }
}
