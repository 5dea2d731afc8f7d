import CreaseCore
import Foundation

/// `crease trace glitches` and `crease trace minimize`.
extension TraceCommand {
    // MARK: glitches

    static func glitches(_ args: inout Arguments) throws -> Int32 {
        let output = try GlitchCLI.parse(&args)
        let path = try onePath(&args)
        try args.finish()
        let file = try TraceIO.loadForReading(path).file
        TraceIO.warnIfCut(file, name: path)
        let report = try TraceGlitches.check(file, options: output.options)
        output.print(report.glitches)
        output.summary(report.glitches, of: "\(report.events) events (\(report.layouts) layouts published)")
        return report.glitches.contains(where: output.options.fails) ? ExitStatus.checkFailed : ExitStatus.success
    }

    // MARK: minimize

    static func minimize(_ args: inout Arguments) throws -> Int32 {
        let kindName = try args.option("--glitch")
        let subject = try args.option("--subject")
        let other = try args.option("--diverges")
        let command = try args.option("--until")
        let out = try args.option("-o") ?? args.option("--output")
        let rigPath = try args.option("--rig")
        let glitchOutput = try GlitchCLI.parse(&args)
        let path = try onePath(&args)
        try args.finish()
        guard [kindName != nil, other != nil, command != nil].filter({ $0 }).count == 1 else {
            throw UsageError("give one property: --glitch KIND [--subject ID], --diverges OTHER_BUILD_TRACE or --until 'CMD'")
        }
        if subject != nil, kindName == nil { throw UsageError("--subject goes with --glitch") }
        guard let out, out != "-" else { throw UsageError("-o OUT is needed (a file: the candidates are checked by replaying it)") }
        let hingeTolerance = try rigPath.map { path -> Double in
            let rig = try TourCommand.loadRig(path)
            guard let hinge = rig.hinge else { throw UsageError("--rig \(path): the rig cannot fold the phone (moves.hinge is null)") }
            return hinge.tolerance
        } ?? 0
        let file = try TraceIO.load(path)
        TraceIO.warnIfCut(file, name: path)
        let header = file.header

        var property: Property
        if let kindName {
            guard let kind = GlitchKind(rawValue: kindName) else {
                throw UsageError("--glitch \(kindName): one of \(GlitchKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            let probe = GlitchTarget(kind: kind, subject: subject, options: glitchOutput.options)
            let original = try TraceMinimize.steps(file, observations: probe.needsObservations)
            switch GlitchTarget.resolve(kind: kind, subject: subject, options: glitchOutput.options, header: header, steps: original) {
            case .target(let target):
                property = .glitch(target)
            case .ambiguous(let subjects):
                throw UsageError("\(path) shows a \(kind.rawValue) glitch of \(subjects.count) subjects: \(subjects.map { "\"\($0)\"" }.joined(separator: ", ")); "
                                 + "say which with --subject ID")
            case .absent:
                let events = original.count { $0.event != nil }
                throw CheckFailed("\(path) does not show \(probe.name) to begin with (\(events) events): nothing to minimize")
            }
        } else if let other {
            property = .diverges(try otherBuild(other, header: header))
        } else {
            property = .until(command!, scratch: out + ".candidate")
        }
        defer { if case .until(_, let scratch) = property { unlink(scratch) } }
        let steps = try TraceMinimize.steps(file, observations: property.needsObservations)
        let events = steps.count { $0.event != nil }
        let observations = steps.count - events

        let started = TraceIO.monotonicNs()
        guard try property.holds(header: header, steps: steps) else {
            throw CheckFailed("\(path) does not show \(property.name) to begin with (\(events) events)")
        }
        Console.err("minimize: \(path): \(events) events" + (observations > 0 ? " and \(observations) observations" : "") + " show \(property.name)")
        var lastShown: (TraceShrinker.Phase, Int)?
        let result = try TraceShrinker.shrink(steps, profile: header.profile, origin: header.initialT, hingeTolerance: hingeTolerance, progress: { p in
            guard lastShown.map({ $0 != p.phase || $1 != p.steps }) ?? true else { return }
            lastShown = (p.phase, p.steps)
            Console.err("  \(p.tests) tests: \(p.phase.rawValue), \(p.steps) steps left")
        }, test: { (candidate: [TraceStep]) throws -> Bool in try property.holds(header: header, steps: candidate) })
        let elapsed = TraceIO.monotonicNs() - started

        guard let bytes = TraceMinimize.encode(header: header, steps: result) else {
            throw CheckFailed("the minimized steps do not apply (a bug: every candidate kept was tested)")
        }
        try TraceIO.write(bytes, to: out)
        // The written file must replay with --verify and still show the property.
        let written = try TraceIO.load(out)
        let replay = try TraceReplay.run(written, verify: true)
        if let d = replay.divergence { throw CheckFailed("\(out) does not verify: \(d.summary)") }
        let shown = try property.shown(in: written)
        let keptEvents = result.count { $0.event != nil }
        Console.err("minimized \(path): \(events) events -> \(keptEvents)"
                    + (observations > 0 ? ", \(observations) observations -> \(result.count - keptEvents)" : "")
                    + " in \(elapsed / 1_000_000) ms; \(out) replays with --verify")
        for line in shown { Console.out(line) }
        if rigPath != nil {
            for warning in closeToThresholds(result, profile: header.profile, tolerance: hingeTolerance) { Console.err("warning: \(warning)") }
        }
        return ExitStatus.success
    }

    /// Hinge angles of the repro closer to a threshold than the rig's tolerance: the value
    /// shrinking keeps clear of them, but an original angle it could not move stays (a fold
    /// that lands on the other side may not show the glitch).
    static func closeToThresholds(_ steps: [TraceStep], profile: DeviceProfile, tolerance: Double) -> [String] {
        var out: [String] = []
        for (i, step) in steps.enumerated() {
            guard case .event(let e) = step, case .hinge(let angle) = e.envelope.event else { continue }
            // Where a pose changes: each threshold, the hysteresis either side of it.
            let boundaries = [profile.partialOpenThreshold, profile.fullyOpenThreshold].flatMap { [$0 - profile.hingeHysteresis, $0 + profile.hingeHysteresis] }
            for boundary in boundaries where abs(angle - boundary) < tolerance {
                out.append("step \(i + 1): the hinge at \(Format.fixed(angle, 2))° is \(Format.fixed(abs(angle - boundary), 2))° from "
                           + "\(Format.fixed(boundary, 1))°, where the pose changes, inside the rig's \(Format.fixed(tolerance, 2))° tolerance: "
                           + "a fold that lands on the other side may not show it")
            }
        }
        return out
    }

    static func otherBuild(_ path: String, header: TraceHeader) throws -> OtherBuildDigests {
        let file = try TraceIO.load(path)
        let result = Result { () throws(TraceError) in try OtherBuildDigests(other: file, header: header) }
        switch result {
        case .success(let digests): return digests
        case .failure(let e): throw UsageError("\(path): \(e)")
        }
    }

    /// What a candidate must still show.
    enum Property {
        case glitch(GlitchTarget)
        case diverges(OtherBuildDigests)
        /// A shell command, exit 0 = still interesting; the candidate file is `$1`.
        case until(String, scratch: String)

        var name: String {
            switch self {
            case .glitch(let target): target.name
            case .diverges: "a layout the other build computes differently"
            case .until(let cmd, _): "what `\(cmd)` accepts"
            }
        }

        /// Observations are kept for a mismatch, and for a command (which may read them).
        var needsObservations: Bool {
            switch self {
            case .glitch(let target): target.needsObservations
            case .diverges: false
            case .until: true
            }
        }

        func holds(header: TraceHeader, steps: [TraceStep]) throws -> Bool {
            switch self {
            case .glitch(let target):
                return target.holds(header: header, steps: steps)
            case .diverges(let other):
                return other.diverges(header: header, events: steps.compactMap(\.event))
            case .until(let command, let scratch):
                guard let bytes = TraceMinimize.encode(header: header, steps: steps) else { return false }
                try TraceIO.write(bytes, to: scratch)
                return try Shell.succeeds(command, argument: scratch)
            }
        }

        /// Lines that show the property in the written trace.
        func shown(in file: TraceFile) throws -> [String] {
            switch self {
            case .glitch(let target):
                let found = try TraceGlitches.check(file, options: target.options).glitches.filter(target.matches)
                guard !found.isEmpty else { throw CheckFailed("the written trace no longer shows \(name)") }
                return found.map(GlitchCLI.line)
            case .diverges(let other):
                let events = try TraceMinimize.events(file)
                guard other.diverges(header: file.header, events: events) else { throw CheckFailed("the written trace no longer diverges") }
                return ["the other build lays out a state of this trace differently"]
            case .until:
                return []
            }
        }
    }
}

enum Shell {
    /// Runs `sh -c COMMAND sh ARGUMENT` with its output discarded; true when it exits 0.
    static func succeeds(_ command: String, argument: String) throws -> Bool {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", command, "sh", argument]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        do { try p.run() } catch { throw UsageError("cannot run /bin/sh: \(error.localizedDescription)") }
        p.waitUntilExit()
        return p.terminationReason == .exit && p.terminationStatus == 0
    }
}
