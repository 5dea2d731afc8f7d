import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// `crease plan --tour`: one walk over the phone, with no reset, that shows it every
/// observable class once at the least estimated device time found (docs/plan.md).
enum TourCommand {
    static let usage = "crease plan --tour [--app FILE|builtin:NAME] [--profile FILE] [--from STATE] [--rig RIG.json] "
        + "[--observe digest|page-source] [--probes] [--calibration CALIBRATE.json] [--resume COVERAGE.json] [--budget SECONDS] [--split N] [--max-depth N] [--max-states N] "
        + "[-o TOUR.jsonl] [--json]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let app = try Inputs.app(try args.option("--app"))
        let profile = try Inputs.profile(try args.option("--profile"))
        let fromPath = try args.option("--from")
        let rigPath = try args.option("--rig")
        let observeName = try args.option("--observe")
        let resumePath = try args.option("--resume")
        let budget = try args.double("--budget")
        let split = try args.int("--split") ?? 1
        let maxDepth = try args.int("--max-depth") ?? 64
        let maxStates = try args.int("--max-states") ?? 200_000
        let output = try args.option("-o")
        let json = args.flag("--json")
        let calibrationPath = try args.option("--calibration")
        // A calibration is for the probes: it places them.
        let probes = args.flag("--probes") || calibrationPath != nil
        try args.finish()
        guard (1...1_000).contains(maxDepth) else { throw UsageError("--max-depth must be between 1 and 1000, not \(maxDepth)") }
        guard (1...5_000_000).contains(maxStates) else { throw UsageError("--max-states must be between 1 and 5000000, not \(maxStates)") }
        guard (1...1_000).contains(split) else { throw UsageError("--split must be between 1 and 1000 phones, not \(split)") }
        if let budget, !(budget > 0 && budget <= 10_000_000) { throw UsageError("--budget is seconds of device time, more than 0, not \(budget)") }
        if split > 1, output == nil || output == "-" { throw UsageError("--split \(split) writes one file a part: give -o TOUR.jsonl") }
        if json, output == nil || output == "-" { throw UsageError("--json prints the summary on stdout, where the tour goes without -o: give -o TOUR.jsonl") }
        let rig = try rigPath.map(loadRig) ?? RigProfile.standard
        var observe = rig.observe
        if let observeName {
            guard let o = RigProfile.ObserveMode(rawValue: observeName) else {
                throw UsageError("--observe is digest or page-source, not \(observeName)")
            }
            observe = o
        }
        let start = try fromPath.map { try PlanCommand.startState($0, app: app, profile: profile) } ?? DeviceState(app: app)
        let (done, doneClasses) = try resumePath.map { try resumed($0, app: app, observe: observe) } ?? ([], [])
        let intervals = try calibrationPath.map(probeIntervals) ?? TourProbes.Intervals()

        let began = TraceIO.monotonicNs()
        let tour: Tour
        do {
            tour = try Tour.plan(app: app, profile: profile, rig: rig, from: start,
                                 options: .init(observe: observe, parts: split, budget: budget, done: done, doneClasses: doneClasses, maxDepth: maxDepth, maxStates: maxStates, probes: probes,
                                                probeIntervals: intervals))
        } catch { throw UsageError("\(rigPath ?? "the default rig"): \(error)") }
        let seconds = Double(TraceIO.monotonicNs() - began) / 1e9

        let header = { (part: Int) in
            TourFile.Header(app: app.name, profile: profile.name, rig: rig.name, observe: observe, from: fromPath ?? "default",
                            part: split > 1 ? (part + 1, split) : nil)
        }
        let paths = split > 1 ? partPaths(output!, parts: split) : [output]
        for (i, path) in paths.enumerated() {
            try TraceIO.write(TourFile.encode(tour, part: i, header: header(i)), to: path)
        }
        let total = tour.parts.reduce(0) { $0 + $1.seconds }
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("app"); w.string(app.name)
            w.key("rig"); w.string(rig.name)
            w.key("observe"); w.string(observe.rawValue)
            w.key("classes"); w.int(tour.classes)
            w.key("unreachable"); w.int(tour.unreachable.count)
            w.key("unobserved"); w.int(tour.unobserved)
            w.key("estimatedSeconds"); w.number(TourPlanner.microseconds(total))
            w.key("lowerBoundSeconds"); w.number(TourPlanner.microseconds(tour.lowerBound))
            w.key("parts"); w.beginArray()
            for (p, path) in zip(tour.parts, paths) {
                w.beginObject()
                w.key("path"); w.string(path ?? "-")
                w.key("steps"); w.int(p.steps.count)
                w.key("observations"); w.int(p.observations)
                w.key("estimatedSeconds"); w.number(TourPlanner.microseconds(p.seconds))
                w.endObject()
            }
            w.endArray()
            w.key("seconds"); w.number((seconds * 1000).rounded() / 1000)
            w.endObject()
            Console.out(bytes: w.bytes)
        }
        summarize(tour, app: app, rig: rig, observe: observe, total: total, seconds: seconds, paths: paths)
        return ExitStatus.success
    }

    /// The summary, on stderr: the tour itself may be on stdout.
    static func summarize(_ tour: Tour, app: App, rig: RigProfile, observe: RigProfile.ObserveMode, total: Double, seconds: Double, paths: [String?]) {
        let steps = tour.parts.reduce(0) { $0 + $1.steps.count }
        let over = tour.lowerBound > 0 ? (total / tour.lowerBound - 1) * 100 : 0
        Console.err("tour: \(app.name) on \(rig.name), classes by \(observe.rawValue)")
        Console.err("\(Format.grouped(tour.states)) states the rig reaches, \(Format.grouped(tour.classes)) classes to observe; "
                    + "planned in \(Format.fixed(seconds, 2)) s")
        if tour.truncated {
            Console.err("\(Format.grouped(steps)) steps, estimated \(duration(total)) of device time "
                        + "(every class would take at least \(duration(tour.lowerBound)))")
        } else {
            Console.err("\(Format.grouped(steps)) steps, estimated \(duration(total)) of device time "
                        + "(lower bound \(duration(tour.lowerBound)), \(Format.fixed(over, 1)) % over it)")
        }
        if tour.parts.count > 1 {
            for (i, p) in tour.parts.enumerated() {
                Console.err("  part \(i + 1): \(Format.grouped(p.steps.count)) steps, \(p.observations) looks, \(duration(p.seconds)) → \(paths[i] ?? "-")")
            }
        }
        if tour.truncated { Console.err("cut by --budget: \(tour.unobserved) classes left unobserved (--resume with the coverage continues)") }
        else if tour.unobserved > 0 { Console.err("\(tour.unobserved) classes cannot be reached again from where the tour went (no reset is planned)") }
        if !tour.unreachable.isEmpty {
            var needs: [(String, Int)] = []
            for u in tour.unreachable {
                if let i = needs.firstIndex(where: { $0.0 == u.needs }) { needs[i].1 += 1 } else { needs.append((u.needs, 1)) }
            }
            Console.err("\(tour.unreachable.count) classes the rig cannot reach: "
                        + needs.map { "\($0.1) need \($0.0)" }.joined(separator: ", "))
        }
    }

    static func duration(_ s: Double) -> String {
        let total = Int(s.rounded())
        return total >= 3600 ? "\(total / 3600) h \(total % 3600 / 60) min" : "\(total / 60) min \(total % 60) s"
    }

    /// `TOUR.jsonl` → `TOUR-1.jsonl` … `TOUR-N.jsonl`.
    static func partPaths(_ path: String, parts: Int) -> [String?] {
        let stem = path.hasSuffix(".jsonl") ? String(path.dropLast(".jsonl".count)) : path
        return (1...parts).map { "\(stem)-\($0).jsonl" }
    }

    static func loadRig(_ path: String) throws -> RigProfile {
        do { return try RigProfile.decode(json: try Inputs.readFile(path, what: "rig file", limit: InputFile.profileLimit)) } catch let e as InputError {
            throw UsageError("\(path): \(e)")
        }
    }

    /// `--resume COVERAGE.json` (`crease coverage --json`, same app): what it covered. The
    /// coverage of a tour lists classes, which must be counted as this tour counts them;
    /// the coverage of a plan lists layout digests.
    /// `--calibration`: what `crease calibrate --json` left open of each field the probes
    /// sweep (its `fields[].interval` for the two hinge thresholds, `orientationHysteresis`,
    /// `flatTilt` and `orientationSettleMs`).
    static func probeIntervals(_ path: String) throws -> TourProbes.Intervals {
        let value: JSONValue
        do { value = try JSON.parse(try Inputs.readFile(path, what: "calibration", limit: InputFile.manifestLimit)) } catch let e as UsageError {
            throw e
        } catch {
            throw UsageError("\(path): not JSON (crease calibrate --json writes what --calibration reads): \(error)")
        }
        guard case .array(let fields)? = value["fields"] else {
            throw UsageError("\(path): no \"fields\": not the output of crease calibrate --json")
        }
        var intervals = TourProbes.Intervals()
        var named: [String] = []
        for (i, f) in fields.enumerated() {
            guard case .string(let name)? = f["field"] else { throw UsageError("\(path): fields[\(i)] has no \"field\"") }
            named.append(name)
            // Each swept field, with the values its interval may hold.
            let limits: ClosedRange<Double>
            switch name {
            case "partialOpenThreshold", "fullyOpenThreshold": limits = 0...EventLimits.maxAngle
            case "orientationHysteresis": limits = 0...44
            case "flatTilt": limits = 10...89
            case "orientationSettleMs": limits = 0...10_000
            default: continue
            }
            guard case .array(let bounds)? = f["interval"], bounds.count == 2, case .number(let lo) = bounds[0], case .number(let hi) = bounds[1],
                  lo <= hi, limits.contains(lo), limits.contains(hi) else {
                throw UsageError("\(path): fields[\(i)] (\(name)) has no interval [low, high] within \(Int(limits.lowerBound))…\(Int(limits.upperBound))")
            }
            switch name {
            case "partialOpenThreshold": intervals.partialOpen = lo...hi
            case "fullyOpenThreshold": intervals.fullyOpen = lo...hi
            case "orientationHysteresis": intervals.motion.orientationHysteresis = lo...hi
            case "flatTilt": intervals.motion.flatTilt = lo...hi
            default: intervals.motion.orientationSettleMs = lo...hi
            }
        }
        guard intervals != TourProbes.Intervals() else {
            throw UsageError("\(path) calibrates none of the fields the probes sweep (its fields: \(named.isEmpty ? "none" : named.joined(separator: ", "))): "
                             + "crease calibrate --fit partialOpenThreshold,fullyOpenThreshold,orientationHysteresis,flatTilt --json")
        }
        return intervals
    }

    static func resumed(_ path: String, app: App, observe: RigProfile.ObserveMode) throws -> (digests: Set<UInt64>, classes: Set<UInt64>) {
        let value: JSONValue
        do { value = try JSON.parse(try Inputs.readFile(path, what: "coverage", limit: InputFile.manifestLimit)) } catch let e as UsageError {
            throw e
        } catch {
            throw UsageError("\(path): not JSON (crease coverage --json writes what --resume reads): \(error)")
        }
        if case .string(let other)? = value["app"], other != app.name {
            throw UsageError("\(path) is the coverage of app \"\(other)\"; the tour is for app \"\(app.name)\"")
        }
        guard case .array(let list)? = value["coveredClasses"] else {
            throw UsageError("\(path): no \"coveredClasses\": not the output of crease coverage --json")
        }
        var covered = Set<UInt64>()
        for v in list {
            guard case .string(let text) = v, let d = Digest.parseHex(text) else {
                throw UsageError("\(path): a covered class that is not 16 hex digits")
            }
            covered.insert(d)
        }
        guard let counted = value["observe"] else { return (covered, []) }
        guard counted == .string(observe.rawValue) else {
            var shown = JSONWriter()
            shown.value(counted)
            throw UsageError("\(path) counts classes by \(Console.printable(String(decoding: shown.bytes, as: UTF8.self))); this tour counts them by \(observe.rawValue)")
        }
        return ([], covered)
    }
}
