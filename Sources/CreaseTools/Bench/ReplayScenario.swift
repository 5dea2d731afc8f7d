import CreaseCore
import Foundation

/// `replay`: events per second of an in-process replay with verification (the trace
/// reader and `TraceReplay` of `crease replay --verify`), against the floor of any
/// replay: reading the same file and JSON-decoding each line. Without `--trace`, the
/// trace is recorded first by a real `creased` fed a rig-like stream.
enum ReplayScenario {
    struct Timing {
        var decodeNs: [UInt64] = []
        var replayNs: [UInt64] = []
        var events = 0
        var records = 0
        var bytes = 0
    }

    /// `settings` is needed only to record a trace (when `trace` is nil).
    static func run(events count: Int, trace: String?, rounds: Int, settings: DaemonSettings?, progress: Progress) throws -> ScenarioReport {
        try Children.scope { children in
            var report = ScenarioReport(name: "replay")
            let path: String
            if let trace {
                path = trace
                report.setup.append("trace: \(trace)")
            } else if let settings {
                path = try record(events: count, settings: settings, progress: progress, children: children, report: &report)
            } else {
                throw UsageError("replay needs --trace FILE or a creased to record one")
            }
            progress.phase("replay: \(rounds) rounds of read + decode and of replay --verify")
            let t = try measure(path: path, rounds: rounds)
            if let d = t.divergence { report.problems.append("the trace does not verify: \(d)") }
            let decodeBest = t.timing.decodeNs.min() ?? 0
            let replayBest = t.timing.replayNs.min() ?? 0
            let decodeRate = Double(t.timing.events) / (Double(max(1, decodeBest)) / 1e9)
            let replayRate = Double(t.timing.events) / (Double(max(1, replayBest)) / 1e9)
            report.setup.append("\(Format.grouped(t.timing.events)) events in \(Format.grouped(t.timing.records)) records, \(Format.grouped(t.timing.bytes)) bytes; best of \(rounds) rounds, each reading the file anew")
            report.figures.append(Figure(name: "read + JSON-decode every line", value: decodeRate.rounded(), unit: "events/s"))
            report.figures.append(Figure(name: "replay --verify in process", value: replayRate.rounded(), unit: "events/s"))
            report.figures.append(Figure(name: "replay / decode", value: replayRate / decodeRate, unit: "x"))
            report.figures.append(Figure(name: "replay time per event", value: Double(replayBest) / Double(max(1, t.timing.events)), unit: "ns"))
            report.figures.append(Figure(name: "decode time per event", value: Double(decodeBest) / Double(max(1, t.timing.events)), unit: "ns"))
            report.targets.append(TargetCheck(name: "replay with verification", measured: replayRate, bound: .atLeast, limit: 1_000_000, unit: "events/s"))
            return report
        }
    }

    /// Records a trace with a real daemon (tracing on whatever `--daemon-arg` says) and returns its path.
    static func record(events count: Int, settings: DaemonSettings, progress: Progress, children: Children,
                       report: inout ScenarioReport) throws -> String {
        progress.phase("replay: recording a trace of \(Format.grouped(count)) events")
        var recording = settings
        recording.extraArguments.removeAll { $0 == "--no-trace" }
        let session = try DaemonSession(recording, tag: "replay")
        _ = children.add(session.child)
        let generated = DaemonScenarios.generate(.rig, seed: 4, count: count)
        try DaemonScenarios.sendAll(DaemonScenarios.encode(generated), to: session.publisher, progress: progress, label: "recording")
        let seq = try session.sync()
        if seq != generated.count { report.problems.append("the daemon is at seq \(seq) after \(generated.count) events") }
        if let p = session.stop() { report.problems.append(p) }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: session.traceDirectory))?.filter { $0.hasSuffix(".jsonl") }.sorted() ?? []
        guard let first = files.first else { throw CheckFailed("replay: the daemon wrote no trace into \(session.traceDirectory)") }
        if files.count > 1 { report.notes.append("the recording rotated into \(files.count) files; the first is measured") }
        report.setup.append("trace recorded by creased from \(Format.grouped(generated.count)) events of crease gen's rig scenario (seed 4), sent as fast as possible")
        return "\(session.traceDirectory)/\(first)"
    }

    static func measure(path: String, rounds: Int) throws -> (timing: Timing, divergence: String?) {
        var t = Timing()
        var divergence: String?
        for _ in 0..<max(1, rounds) {
            var start = Clock.now()
            let bytes = try Inputs.readFile(path)
            var records = 0
            for (_, line) in Inputs.lines(bytes).dropFirst() where !line.isEmpty {
                _ = try? JSON.parse(line)
                records += 1
            }
            t.decodeNs.append(Clock.now() &- start)
            t.records = records
            t.bytes = bytes.count

            start = Clock.now()
            let file: TraceFile
            do { file = try TraceFile(bytes: try Inputs.readFile(path)) } catch let e as TraceError {
                throw UsageError("\(path): \(e)")
            }
            let outcome = try TraceReplay.run(file, verify: true)
            t.replayNs.append(Clock.now() &- start)
            t.events = outcome.eventsApplied
            divergence = outcome.divergence?.summary
        }
        return (t, divergence)
    }
}
