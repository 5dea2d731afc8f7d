import CreaseCore

/// `crease why`: the rule behind a control or field of a layout, the inputs it read, and the
/// events that set them. `crease trace why` asks it of a recorded trace; `crease why --events`
/// of an event list (as `crease layout` applies it).
enum WhyCommand {
    static let usage = "crease why --events FILE|- [--app FILE|builtin:NAME] [--profile FILE] [--seq N] [--item ID | --field PATH] [--json]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let app = try Inputs.app(try args.option("--app"))
        let profile = try Inputs.profile(try args.option("--profile"))
        guard let eventsPath = try args.option("--events") else { throw UsageError("--events FILE is needed: the events whose layout to explain") }
        let seq = try args.int("--seq")
        let subject = try subject(&args)
        let json = args.flag("--json")
        try args.finish()
        let name = eventsPath == "-" ? "stdin" : eventsPath
        let events = try Inputs.events(try Inputs.readFile(eventsPath), name: name)
        // The events become a trace in memory, each at its `ts` (else a millisecond apart),
        // so the answer is the one `crease trace why` gives for the same events recorded.
        let engine = Engine(profile: profile, app: app)
        let header = TraceHeader(daemon: "crease why", started: "", part: 0, reason: "start", config: .object([]),
                                 layouts: false, monotonicOrigin: nil, t: 0, engine: engine)
        var bytes = header.encode() + [0x0A]
        var last: UInt64 = 0
        for (i, (line, envelope)) in events.enumerated() {
            let t = envelope.ts.map { UInt64(max(0, $0)) } ?? UInt64(i + 1) * 1_000_000
            guard t >= last else { throw UsageError("\(name):\(line): field \"ts\" goes back: \(t) after \(last); the events' times must not decrease") }
            last = t
            TraceEncoding.appendEvent(TraceEvent(seq: i + 1, t: t, client: 1, envelope: envelope, digest: 0), to: &bytes)
        }
        let file = try TraceFile(bytes: bytes)
        let why = try TraceWhy.explain(file, seq: seq ?? events.count, subject: subject)
        print(why, origin: 0, json: json)
        return ExitStatus.success
    }

    /// `--item ID` or `--field PATH`; the bar's axis when neither is given.
    static func subject(_ args: inout Arguments) throws -> WhySubject {
        let item = try args.option("--item"), field = try args.option("--field")
        switch (item, field) {
        case (let id?, nil): guard !id.isEmpty else { throw UsageError("--item needs a control's id") }; return .item(id)
        case (nil, let path?): guard !path.isEmpty else { throw UsageError("--field needs a path, such as barAxis or bars.0.overflow") }; return .field(path)
        case (nil, nil): return .field("barAxis")
        default: throw UsageError("--item and --field ask about different things: give one")
        }
    }

    static func print(_ why: TraceWhy, origin: UInt64, json: Bool) {
        if json {
            Console.out(bytes: why.json())
            return
        }
        func ms(_ t: UInt64) -> String { Format.fixed(Double(t - min(t, origin)) / 1e6, 1) + " ms" }
        Console.out("the layout at seq \(why.seq) (\(ms(why.t)), digest \(Digest.hex(why.digest)))")
        explain(why.explanation, ms: ms, indent: "")
        for m in why.mismatches {
            Console.out(Console.printable("an observation at this seq disagreed: \(m.path): the model expected \(m.expected), the device showed \(m.observed)"))
            if let e = m.explanation { explain(e, ms: ms, indent: "  ") }
        }
    }

    static func explain(_ e: TraceWhy.Explanation, ms: (UInt64) -> String, indent: String) {
        let what = e.subject.description
        Console.out(Console.printable("\(indent)\(what): \(e.outcome)"))
        Console.out("\(indent)rule: \(e.rule.name) (docs/rules.md)")
        Console.out(Console.printable("\(indent)  \(e.rule.passage)"))
        if let b = e.because, let s = b.setBy {
            Console.out(Console.printable("\(indent)because of seq \(s.seq) at \(ms(s.t)), which set \(b.name): \(s.event)"))
        } else {
            Console.out("\(indent)no input it read was decisive since the trace began: the manifest or the start state decided it")
        }
        Console.out("\(indent)it read:")
        let width = e.inputs.map(\.name.count).max() ?? 0
        for i in e.inputs {
            let name = i.name.padding(toLength: width, withPad: " ", startingAt: 0)
            guard let s = i.setBy else {
                Console.out(Console.printable("\(indent)  \(name)  \(i.value)  (as the trace began)"))
                continue
            }
            var line = "\(indent)  \(name)  \(i.value)  set by seq \(s.seq) at \(ms(s.t)): \(s.event)"
            if let b = i.before, let was = i.previousValue { line += "; before that \(was), set by seq \(b.seq)" }
            else if let was = i.previousValue { line += "; before that \(was) (as the trace began)" }
            if i.decisive == true { line += "  <- decisive: at its earlier value \(i.previousValue ?? "") \(what) would differ" }
            Console.out(Console.printable(line))
        }
    }
}
