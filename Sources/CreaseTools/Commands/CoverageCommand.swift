import CreaseCore

/// `crease coverage --plan PLAN TRACE...`: which of a plan's layouts (and transitions)
/// a campaign's traces showed (docs/plan.md).
enum CoverageCommand {
    static let usage = "crease coverage --plan PLAN|TOUR [--plan TOUR-PART]... TRACE... [--min PERCENT] [--json]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let planPaths = try args.options("--plan")
        guard let planPath = planPaths.first else { throw UsageError("--plan PLAN is needed (crease plan -o PLAN makes one)") }
        let minimum = try args.double("--min")
        let json = args.flag("--json")
        let traces = args.remainingPositionals()
        try args.finish()
        guard !traces.isEmpty else { throw UsageError("at least one trace is needed") }
        if let m = minimum, !(0...100).contains(m) { throw UsageError("--min is a percentage, 0 to 100, not \(m)") }
        // The parts of a split tour (--plan NIGHT-1.jsonl --plan NIGHT-2.jsonl …) are one campaign.
        let plan = try PlanFile.merged(try planPaths.map(PlanFile.load), paths: planPaths)
        var tally = CoverageTally(observe: plan.observe)
        for path in traces {
            let file = try TraceIO.loadForReading(path).file
            // A trace of another app or profile shows none of the plan's layouts: an error, not 0 %.
            if file.header.app.name != plan.app {
                throw UsageError("\(path) is a trace of app \"\(file.header.app.name)\"; the plan \(planPath) is for app \"\(plan.app)\"")
            }
            if let profile = plan.profile, file.header.profile.name != profile {
                throw UsageError("\(path) was recorded with profile \"\(file.header.profile.name)\"; the plan \(planPath) is for profile \"\(profile)\"")
            }
            try tally.add(file, path: path)
        }
        // A plan's classes are its layouts; a tour's layout stands for its class.
        let classes = plan.observe == nil ? plan.layouts.map(\.digest) : plan.classes
        let passedClasses = tally.classes(of: tally.passed), observedClasses = tally.classes(of: tally.observed)
        let mismatchedClasses = tally.classes(of: tally.mismatched), flaggedClasses = tally.classes(of: tally.flagged)
        // The headline is what the device was seen to show; traces with no observation at all
        // say only what the model passed through, and the headline says so.
        let seenOnDevice = tally.observations > 0
        let headline = seenOnDevice ? observedClasses : passedClasses
        let covered = classes.indices.filter { headline.contains(classes[$0]) }
        let missing = classes.indices.filter { !headline.contains(classes[$0]) }.map { plan.layouts[$0] }
        let percent = classes.isEmpty ? 100 : Double(covered.count) * 100 / Double(classes.count)
        let observedCount = classes.filter { observedClasses.contains($0) }.count
        let observedPercent = classes.isEmpty ? 100 : Double(observedCount) * 100 / Double(classes.count)
        let coveredTransitions = plan.transitions.filter { tally.steps.contains([$0.from, $0.to]) }.count
        let outside = plan.observe == nil ? tally.passed.subtracting(classes).count : 0
        func counts(_ w: inout JSONWriter, _ list: [UInt64], passed: Set<UInt64>, observed: Set<UInt64>, mismatched: Set<UInt64>, flagged: Set<UInt64>) {
            w.beginObject()
            w.key("total"); w.int(list.count)
            w.key("passed"); w.int(list.filter(passed.contains).count)
            w.key("observed"); w.int(list.filter(observed.contains).count)
            w.key("mismatched"); w.int(list.filter(mismatched.contains).count)
            w.key("screenFlagged"); w.int(list.filter(flagged.contains).count)
            w.endObject()
        }
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("app"); w.string(plan.app)
            w.key("traces"); w.int(traces.count)
            w.key("events"); w.int(tally.events)
            w.key("observations"); w.int(tally.observations)
            w.key("frameVerdicts"); w.int(tally.frameVerdicts)
            if let observe = plan.observe { w.key("observe"); w.string(observe.rawValue) }
            w.key("classes"); counts(&w, classes, passed: passedClasses, observed: observedClasses, mismatched: mismatchedClasses,
                                         flagged: flaggedClasses)
            w.key("layouts"); counts(&w, plan.layouts.map(\.digest), passed: tally.passed, observed: tally.observed,
                                         mismatched: tally.mismatched, flagged: tally.flagged)
            w.key("observedPercent"); w.number((observedPercent * 100).rounded() / 100)
            // The headline: observed with a match, or (no observation in the traces) passed.
            w.key("headline"); w.string(seenOnDevice ? "observed" : "passed")
            w.key("covered"); w.int(covered.count)
            w.key("percent"); w.number((percent * 100).rounded() / 100)
            w.key("transitions"); w.int(plan.transitions.count)
            w.key("transitionsCovered"); w.int(coveredTransitions)
            w.key("outsidePlan"); w.int(outside)
            w.key("missing"); w.beginArray(); for m in missing { w.string(Digest.hex(m.digest)) }; w.endArray()
            w.key("mismatchedClasses"); w.beginArray(); for c in classes where mismatchedClasses.contains(c) { w.string(Digest.hex(c)) }; w.endArray()
            w.key("screenFlaggedClasses"); w.beginArray(); for c in classes where flaggedClasses.contains(c) { w.string(Digest.hex(c)) }; w.endArray()
            // What `crease plan --tour --resume` skips: the headline's classes (a plan's: its layouts).
            w.key("coveredClasses"); w.beginArray(); for i in covered { w.string(Digest.hex(classes[i])) }; w.endArray()
            w.endObject()
            Console.out(bytes: w.bytes)
        } else {
            Console.out("coverage: \(traces.count) trace\(traces.count == 1 ? "" : "s"), \(Format.grouped(tally.events)) events, "
                        + "\(Format.grouped(tally.observations)) observations, against the plan for \(plan.app)")
            let label = plan.observe == nil ? "layouts    " : "classes    "
            let by = plan.observe.map { ", by \($0.rawValue)" } ?? ""
            if seenOnDevice {
                let mismatchedCount = classes.filter { mismatchedClasses.contains($0) }.count
                let passedCount = classes.filter { passedClasses.contains($0) }.count
                Console.out("\(label)  \(Format.grouped(observedCount)) of \(Format.grouped(classes.count)) seen on the device with a match "
                            + "(\(Format.fixed(observedPercent, 2)) %)\(by); \(Format.grouped(passedCount)) passed by the model, \(Format.grouped(mismatchedCount)) mismatched")
            } else {
                Console.out("\(label)  \(Format.grouped(covered.count)) of \(Format.grouped(classes.count)) (\(Format.fixed(percent, 2)) %) passed by the model\(by)"
                            + "; the traces hold no observation, so none was seen on a device")
            }
            if tally.frameVerdicts > 0 {
                let flaggedCount = classes.filter { flaggedClasses.contains($0) }.count
                Console.out("screen       \(Format.grouped(tally.frameVerdicts)) frame\(tally.frameVerdicts == 1 ? "" : "s") flagged by a frame judge, "
                            + "at \(Format.grouped(flaggedCount)) of the \(plan.observe == nil ? "layouts" : "classes")")
            }
            if !plan.transitions.isEmpty {
                Console.out("transitions  \(Format.grouped(coveredTransitions)) of \(Format.grouped(plan.transitions.count))")
            }
            if outside > 0 { Console.out("outside      \(outside) layouts the traces showed are not in the plan (another start, depth, or keyboard height)") }
            let next = missing.sorted { $0.events < $1.events }.prefix(10)
            if !next.isEmpty {
                if plan.observe == nil {
                    Console.out("next to run (shortest first; their events are in the plan):")
                    for m in next { Console.out("  \(Digest.hex(m.digest))  \(m.events) events") }
                } else {
                    Console.out("not yet seen (earliest first; crease plan --tour --resume plans them):")
                    for m in next { Console.out("  \(Digest.hex(m.digest))  at step \(m.events)") }
                }
            }
        }
        if let minimum, percent < minimum { return ExitStatus.checkFailed }
        return ExitStatus.success
    }
}
