import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation
import Synchronization

/// `crease replay --verify PATH...`: a lab's corpus checked in one run. Files and
/// directories (searched recursively for `*.jsonl`, in natural order so rotated parts come
/// in order), verified on `--jobs` threads, each file on its own (every part has its own
/// header). `--shard I/N` keeps the files whose stable hash of their path, relative to the
/// argument they came from, falls in shard I (1…N): N machines split a corpus without
/// talking to each other. Exit 1 on a divergence, 2 when a file could not be read (that
/// wins over 1), every file checked either way.
enum BatchVerify {
    struct Options {
        var jobs: Int
        var shard: (index: Int, count: Int)?
        var junit: String?
        var json: Bool
        /// `--daemon`: each trace through the daemon's decision core as well.
        var daemon = false
    }

    /// One trace to verify: its path and its name relative to the argument it came from.
    struct Input: Sendable {
        var path: String
        var relative: String
        /// Why a directory under an argument could not be listed: that entry fails, the rest go on.
        var unlisted: String? = nil
    }

    enum Outcome: Sendable {
        case verified(events: Int, observations: Int, unchecked: Int, digest: UInt64, cut: String?)
        case diverged(seq: Int, report: [String], events: Int)
        case unreadable(String)
    }

    struct Result: Sendable {
        var input: Input
        var outcome: Outcome
        var ns: UInt64
    }

    // MARK: the files

    /// The traces the arguments name, in order, each file once (the same file named twice, or
    /// reached through two arguments, is listed at its first place); `excluding`: a directory
    /// whose files are not inputs (a command's own output directory). An argument that is
    /// neither a regular file nor a directory is an error; a directory below an argument that
    /// cannot be listed is an entry of its own that fails, so the rest is still verified.
    static func collect(_ arguments: [String], excluding: String? = nil) throws -> [Input] {
        var out: [Input] = []
        var seen = Set<OutputFile.FileIdentity>()
        let skip = excluding.flatMap { OutputFile.FileIdentity(path: $0) }
        for argument in arguments {
            var st = stat()
            guard stat(argument, &st) == 0 else {
                throw UsageError("\(argument): \(errno == ENOENT ? "no such file or directory" : String(cString: strerror(errno)))")
            }
            guard st.st_mode & S_IFMT == S_IFDIR else {
                if seen.insert(OutputFile.FileIdentity(st)).inserted {
                    out.append(Input(path: argument, relative: (argument as NSString).lastPathComponent))
                }
                continue
            }
            guard opendir(argument).map({ closedir($0); return true }) ?? false else {
                throw UsageError("\(argument): cannot be listed: \(String(cString: strerror(errno)))")
            }
            var found: [Input] = []
            walk(argument, relative: "", skipping: skip, into: &found)
            found.sort { naturalOrder($0.relative, $1.relative) }
            for input in found {
                if input.unlisted == nil {
                    guard let id = OutputFile.FileIdentity(path: input.path), seen.insert(id).inserted else { continue }
                }
                out.append(input)
            }
        }
        return out
    }

    /// The `*.jsonl` regular files under `directory`, by their paths relative to it. With
    /// readdir's own file types (a stat only where the file system gives none): listing
    /// 23,000 files through FileManager's URLs took three seconds. Symbolic links are not
    /// followed (a link to a parent would never end); hidden entries (a writer's
    /// .index.lock, editors' files) are skipped; a directory that cannot be listed is an
    /// entry with the reason.
    static func walk(_ directory: String, relative: String, skipping skip: OutputFile.FileIdentity?, into found: inout [Input]) {
        guard let dir = opendir(directory) else {
            found.append(Input(path: directory, relative: relative, unlisted: "cannot be listed: \(String(cString: strerror(errno)))"))
            return
        }
        defer { closedir(dir) }
        var subdirectories: [String] = []
        while let entry = readdir(dir) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard let name = String(validating: raw, as: UTF8.self) else {
                // Its name would be spelled with replacement characters that open nothing: an
                // entry of its own that says so, not "missing".
                let shown = String(decoding: raw, as: UTF8.self)
                if shown.hasSuffix(".jsonl") {
                    found.append(Input(path: (directory as NSString).appendingPathComponent(shown), relative: relative.isEmpty ? shown : relative + "/" + shown,
                                       unlisted: "its name is not UTF-8 (bytes \(raw.map { String($0, radix: 16) }.joined(separator: " "))): rename it to verify it"))
                }
                continue
            }
            guard !name.hasPrefix(".") else { continue }
            var type = Int32(entry.pointee.d_type)
            if type == Int32(DT_UNKNOWN) {
                var st = stat()
                guard lstat(directory + "/" + name, &st) == 0 else { continue }
                type = (st.st_mode & S_IFMT) == S_IFDIR ? Int32(DT_DIR) : ((st.st_mode & S_IFMT) == S_IFREG ? Int32(DT_REG) : Int32(DT_UNKNOWN))
            }
            let path = relative.isEmpty ? name : relative + "/" + name
            if type == Int32(DT_DIR) {
                subdirectories.append(name)
            } else if type == Int32(DT_REG), name.hasSuffix(".jsonl") {
                found.append(Input(path: (directory as NSString).appendingPathComponent(name), relative: path))
            }
        }
        for name in subdirectories {
            let path = directory + "/" + name
            if let skip, OutputFile.FileIdentity(path: path) == skip { continue }
            walk(path, relative: relative.isEmpty ? name : relative + "/" + name, skipping: skip, into: &found)
        }
    }

    /// Digit runs compared as numbers: `part-2` before `part-10`.
    static func naturalOrder(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var i = 0, j = 0
        func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
        while i < x.count, j < y.count {
            if isDigit(x[i]), isDigit(y[j]) {
                var ei = i, ej = j
                while ei < x.count, isDigit(x[ei]) { ei += 1 }
                while ej < y.count, isDigit(y[ej]) { ej += 1 }
                let a = x[i..<ei].drop { $0 == 0x30 }, b = y[j..<ej].drop { $0 == 0x30 }
                if a.count != b.count { return a.count < b.count }
                if !a.elementsEqual(b) { return a.lexicographicallyPrecedes(b) }
                i = ei; j = ej
            } else {
                if x[i] != y[j] { return x[i] < y[j] }
                i += 1; j += 1
            }
        }
        return x.count - i < y.count - j
    }

    /// The shard (1…count) a relative path falls in: FNV-1a of its bytes, the same on every machine.
    static func shard(of relative: String, count: Int) -> Int {
        var h: UInt64 = 0xCBF2_9CE4_8422_2325
        for b in relative.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        return Int(h % UInt64(count)) + 1
    }

    static func parseShard(_ text: String) throws -> (index: Int, count: Int) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, n <= 100_000, i >= 1, i <= n else {
            throw UsageError("--shard takes I/N with 1 <= I <= N (e.g. 2/8; a Kubernetes index counts from 0: use $((JOB_COMPLETION_INDEX+1))), not \"\(text)\"")
        }
        return (i, n)
    }

    // MARK: verifying

    static func verify(_ input: Input, daemon: Bool = false) -> Outcome {
        if let unlisted = input.unlisted { return .unreadable("\(input.path): \(unlisted)") }
        var file: TraceFile
        do { file = try TraceIO.load(input.path) } catch {
            return .unreadable("\(error)")
        }
        // A line that is no record is named, and the rest still verified.
        file.skipsBadRecords = true
        do {
            let outcome = try TraceReplay.run(file, verify: true)
            if let d = outcome.divergence {
                return .diverged(seq: d.seq, report: TraceIO.describe(d), events: outcome.eventsApplied)
            }
            if let first = outcome.skipped.first {
                return .unreadable("\(input.path): \(first): no record" + (outcome.skipped.count > 1 ? " (and \(outcome.skipped.count - 1) more lines)" : "")
                                   + "; the other \(outcome.eventsApplied) events verified")
            }
            if daemon, let d = try DaemonReplay.run(file).divergence {
                return .diverged(seq: d.seq, report: DaemonReplay.describe(d), events: outcome.eventsApplied)
            }
            return .verified(events: outcome.eventsApplied, observations: outcome.observationsChecked,
                             unchecked: outcome.observationsUnchecked, digest: outcome.engine.digest, cut: file.cutWarning)
        } catch {
            return .unreadable("\(input.path): \(error)")
        }
    }

    /// Results in input order, verified on `jobs` threads, with a progress line on a terminal.
    static func verifyAll(_ inputs: [Input], jobs: Int, daemon: Bool = false) -> [Result] {
        final class Shared: Sendable {
            let state: Mutex<(next: Int, done: Int, events: Int, lastShownNs: UInt64, results: [Result?])>
            init(count: Int) { state = Mutex((0, 0, 0, 0, [Result?](repeating: nil, count: count))) }
        }
        let shared = Shared(count: inputs.count)
        let showProgress = isatty(2) == 1
        let total = inputs.count
        DispatchQueue.concurrentPerform(iterations: max(1, min(jobs, inputs.count))) { _ in
            while true {
                let index: Int? = shared.state.withLock { s in
                    guard s.next < total else { return nil }
                    defer { s.next += 1 }
                    return s.next
                }
                guard let index else { return }
                let started = TraceIO.monotonicNs()
                let outcome = verify(inputs[index], daemon: daemon)
                let now = TraceIO.monotonicNs()
                var events = 0
                if case .verified(let e, _, _, _, _) = outcome { events = e }
                if case .diverged(_, _, let e) = outcome { events = e }
                let line: String? = shared.state.withLock { s in
                    s.results[index] = Result(input: inputs[index], outcome: outcome, ns: now - started)
                    s.done += 1
                    s.events += events
                    guard showProgress, s.done == total || now - s.lastShownNs > 200_000_000 else { return nil }
                    s.lastShownNs = now
                    return "\rverifying: \(s.done)/\(total) files, \(Format.grouped(s.events)) events"
                }
                if let line { FileHandle.standardError.write(Data(line.utf8)) }
            }
        }
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        return shared.state.withLock { $0.results.compactMap { $0 } }
    }

    // MARK: the run

    static func run(_ arguments: [String], options: Options) throws -> Int32 {
        var inputs = try collect(arguments)
        let listed = inputs.count
        if let shard = options.shard {
            inputs = inputs.filter { BatchVerify.shard(of: $0.relative, count: shard.count) == shard.index }
        }
        let started = TraceIO.monotonicNs()
        let results = verifyAll(inputs, jobs: options.jobs, daemon: options.daemon)
        let elapsed = TraceIO.monotonicNs() - started

        var events = 0, observations = 0, unchecked = 0
        var diverged: [Result] = [], unreadable: [Result] = []
        for r in results {
            switch r.outcome {
            case .verified(let e, let o, let u, _, _): events += e; observations += o; unchecked += u
            case .diverged(_, _, let e): events += e; diverged.append(r)
            case .unreadable: unreadable.append(r)
            }
        }
        let status = !unreadable.isEmpty ? ExitStatus.usage : (!diverged.isEmpty ? ExitStatus.checkFailed : ExitStatus.success)
        if let junit = options.junit { try TraceIO.write(Array(junitReport(results, seconds: Double(elapsed) / 1e9).utf8), to: junit) }
        if options.json {
            for r in results { Console.out(bytes: jsonLine(r)) }
            var w = JSONWriter()
            w.beginObject()
            w.key("summary"); w.beginObject()
            w.key("files"); w.int(results.count)
            w.key("listed"); w.int(listed)
            if let s = options.shard { w.key("shard"); w.string("\(s.index)/\(s.count)") }
            w.key("verified"); w.int(results.count - diverged.count - unreadable.count)
            w.key("diverged"); w.int(diverged.count)
            w.key("unreadable"); w.int(unreadable.count)
            w.key("events"); w.int(events)
            w.key("observations"); w.int(observations)
            w.key("observationsUnchecked"); w.int(unchecked)
            w.key("seconds"); w.number((Double(elapsed) / 1e6).rounded() / 1e3)
            w.key("jobs"); w.int(options.jobs)
            w.endObject()
            w.endObject()
            Console.out(bytes: w.bytes)
            return status
        }
        for r in diverged {
            guard case .diverged(_, let report, _) = r.outcome else { continue }
            Console.out("\(r.input.path): " + report.joined(separator: "\n  "))
        }
        for r in unreadable {
            guard case .unreadable(let message) = r.outcome else { continue }
            Console.out("\(r.input.path): cannot be read: \(message)")
        }
        let rate = elapsed > 0 ? Int(Double(events) / (Double(elapsed) / 1e9)) : 0
        let shardNote = options.shard.map { " (shard \($0.index)/\($0.count) of \(listed) listed)" } ?? ""
        Console.err("verified \(results.count) files\(shardNote): \(results.count - diverged.count - unreadable.count) green, "
                    + "\(diverged.count) diverged, \(unreadable.count) unreadable; \(Format.grouped(events)) events and "
                    + "\(Format.grouped(observations)) observation verdicts in \(elapsed / 1_000_000) ms on \(options.jobs) jobs "
                    + "(\(Format.grouped(rate)) events/s)")
        for r in diverged {
            guard case .diverged(let seq, _, _) = r.outcome else { continue }
            Console.err("  diverged: \(r.input.path) at seq \(seq)")
        }
        return status
    }

    static func jsonLine(_ r: Result) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("file"); w.string(r.input.path)
        w.key("relative"); w.string(r.input.relative)
        switch r.outcome {
        case .verified(let events, let observations, let unchecked, let digest, let cut):
            w.key("status"); w.string("verified")
            w.key("events"); w.int(events)
            w.key("observations"); w.int(observations)
            if unchecked > 0 { w.key("observationsUnchecked"); w.int(unchecked) }
            w.key("digest"); w.string(Digest.hex(digest))
            if let cut { w.key("warning"); w.string(cut) }
        case .diverged(let seq, let report, let events):
            w.key("status"); w.string("diverged")
            w.key("events"); w.int(events)
            w.key("seq"); w.int(seq)
            w.key("divergence"); w.beginArray(); for l in report { w.string(l) }; w.endArray()
        case .unreadable(let message):
            w.key("status"); w.string("unreadable")
            w.key("error"); w.string(message)
        }
        w.key("ms"); w.number((Double(r.ns) / 1e3).rounded() / 1e3)
        w.endObject()
        return w.bytes
    }

    /// One test case per trace: a divergence is a failure carrying its report, an
    /// unreadable file an error.
    static func junitReport(_ results: [Result], seconds: Double) -> String {
        var w = XMLWriter()
        let failures = results.filter { if case .diverged = $0.outcome { return true }; return false }.count
        let errors = results.filter { if case .unreadable = $0.outcome { return true }; return false }.count
        let counts: [(String, String)] = [("tests", String(results.count)), ("failures", String(failures)), ("errors", String(errors))]
        w.begin("testsuites", [("name", "crease replay --verify")] + counts + [("time", Timescale.decimals3(seconds))])
        w.begin("testsuite", [("name", "traces")] + counts + [("skipped", "0"), ("time", Timescale.decimals3(seconds))])
        for r in results {
            w.begin("testcase", [("classname", "crease.replay"), ("name", r.input.relative), ("file", r.input.path),
                                 ("time", Timescale.decimals3(Double(r.ns) / 1e9))])
            switch r.outcome {
            case .verified(let events, let observations, _, _, _):
                w.element("system-out", text: "\(events) events and \(observations) observation verdicts verified")
            case .diverged(let seq, let report, _):
                w.element("failure", [("type", "divergence"), ("message", "diverges at seq \(seq)")], text: report.joined(separator: "\n"))
            case .unreadable(let message):
                w.element("error", [("type", "unreadable"), ("message", message)], text: message)
            }
            w.end()
        }
        w.end()
        w.end()
        return w.finish()
    }
}
