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
        // Every layout a trace passes through, in the plan's digest (crease64v, whatever the trace's version).
        var seen = Set<UInt64>()
        // With a tour: the class of every layout seen, as the tour tells classes apart.
        var seenClasses = Set<UInt64>()
        func saw(_ digest: UInt64, _ engine: Engine) {
            guard seen.insert(digest).inserted, let observe = plan.observe else { return }
            seenClasses.insert(observe == .digest ? digest : PageSourceView.classDigest(of: engine.layout))
        }
        var steps = Set<[UInt64]>()
        var events = 0
        for path in traces {
            let file = try TraceIO.load(path)
            // A trace of another app or profile shows none of the plan's layouts: an error, not 0 %.
            if file.header.app.name != plan.app {
                throw UsageError("\(path) is a trace of app \"\(file.header.app.name)\"; the plan \(planPath) is for app \"\(plan.app)\"")
            }
            if let profile = plan.profile, file.header.profile.name != profile {
                throw UsageError("\(path) was recorded with profile \"\(file.header.profile.name)\"; the plan \(planPath) is for profile \"\(profile)\"")
            }
            var replayer = TraceReplayer(header: file.header, verify: false)
            var previous = DigestAlgorithm.crease64v.digest(replayer.engine.body)
            saw(previous, replayer.engine)
            var cursor = file.cursor()
            while let traced = try cursor.next() {
                if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                    throw UsageError("\(path): seq \(d.seq) cannot be applied: \(error)")
                }
                switch traced.record {
                case .event, .load, .gap:
                    if case .event = traced.record { events += 1 }
                    let now = DigestAlgorithm.crease64v.digest(replayer.engine.body)
                    if now != previous { steps.insert([previous, now]) }
                    saw(now, replayer.engine)
                    previous = now
                default: break
                }
            }
        }
        // A tour's layout stands for its class: any layout of the class covers it.
        let isCovered = { (i: Int) in plan.observe == nil ? seen.contains(plan.layouts[i].digest) : seenClasses.contains(plan.classes[i]) }
        let covered = plan.layouts.indices.filter(isCovered).map { plan.layouts[$0] }
        let missing = plan.layouts.indices.filter { !isCovered($0) }.map { plan.layouts[$0] }
        let coveredTransitions = plan.transitions.filter { steps.contains([$0.from, $0.to]) }.count
        let percent = plan.layouts.isEmpty ? 100 : Double(covered.count) * 100 / Double(plan.layouts.count)
        let outside = plan.classes.isEmpty ? seen.subtracting(plan.layouts.map(\.digest)).count : 0
        let coveredClasses = plan.classes.filter { seenClasses.contains($0) }.count
        let classPercent = plan.classes.isEmpty ? 100 : Double(coveredClasses) * 100 / Double(plan.classes.count)
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("app"); w.string(plan.app)
            w.key("traces"); w.int(traces.count)
            w.key("events"); w.int(events)
            w.key("layouts"); w.int(plan.layouts.count)
            w.key("covered"); w.int(covered.count)
            w.key("percent"); w.number((percent * 100).rounded() / 100)
            if let observe = plan.observe {
                w.key("observe"); w.string(observe.rawValue)
                w.key("classes"); w.int(plan.classes.count)
                w.key("classesCovered"); w.int(coveredClasses)
                w.key("classPercent"); w.number((classPercent * 100).rounded() / 100)
                // What `crease plan --tour --resume` skips, whichever layout of a class was seen.
                w.key("coveredClasses"); w.beginArray()
                for c in plan.classes where seenClasses.contains(c) { w.string(Digest.hex(c)) }
                w.endArray()
            }
            w.key("transitions"); w.int(plan.transitions.count)
            w.key("transitionsCovered"); w.int(coveredTransitions)
            w.key("outsidePlan"); w.int(outside)
            w.key("missing"); w.beginArray(); for m in missing { w.string(Digest.hex(m.digest)) }; w.endArray()
            // What `crease plan --tour --resume` skips: the plan's layouts the traces passed through.
            w.key("coveredDigests"); w.beginArray(); for c in covered { w.string(Digest.hex(c.digest)) }; w.endArray()
            w.endObject()
            Console.out(bytes: w.bytes)
        } else {
            Console.out("coverage: \(traces.count) trace\(traces.count == 1 ? "" : "s"), \(Format.grouped(events)) events, against the plan for \(plan.app)")
            if let observe = plan.observe {
                Console.out("classes      \(Format.grouped(coveredClasses)) of \(Format.grouped(plan.classes.count)) (\(Format.fixed(classPercent, 2)) %), by \(observe.rawValue)")
            } else {
                Console.out("layouts      \(Format.grouped(covered.count)) of \(Format.grouped(plan.layouts.count)) (\(Format.fixed(percent, 2)) %)")
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
        if let minimum, (plan.observe == nil ? percent : classPercent) < minimum { return ExitStatus.checkFailed }
        return ExitStatus.success
    }
}
