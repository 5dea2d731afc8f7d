import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// A plan as JSON Lines (`crease plan -o PLAN.jsonl`, docs/plan.md), in the tour's shape: a
/// header, then one line per step, each sequence from a reset. Read back for `crease
/// coverage` and `crease replay --to`, which also read the one JSON document of version 1.
enum PlanFile {
    static let version = 2

    /// `start`: the state every sequence begins in (each step's digest is replayed from it).
    static func encode(_ r: ModelExplorer.Result, app: App, profile: DeviceProfile, start: DeviceState, from: String?, maxDepth: Int) -> [UInt8] {
        let origin = Engine(profile: profile, app: app, state: start, seq: 0)
        let all = r.sequences + r.transitionSequences
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.key("crease"); w.string("plan")
        w.key("version"); w.int(version)
        w.key("app"); w.string(app.name)
        w.key("profile"); w.string(profile.name)
        w.key("from"); if let from { w.string(from) } else { w.string("default") }
        w.key("startDigest"); w.string(Digest.hex(origin.digest))
        w.key("maxDepth"); w.int(maxDepth)
        w.key("states"); w.int(r.states)
        w.key("layouts"); w.int(r.layouts)
        w.key("transitionsExplored"); w.int(r.transitionsExplored)
        w.key("truncated"); w.bool(r.truncated)
        w.key("sequences"); w.int(r.sequences.count)
        w.key("transitionSequences"); w.int(r.transitionSequences.count)
        w.key("steps"); w.int(all.reduce(0) { $0 + 1 + $1.events.count })
        w.endObject()
        var out = w.bytes
        out.append(0x0A)
        var step = 0
        for (i, s) in all.enumerated() {
            var engine = origin
            // The reset, then each event; the last step (the reset itself for the start) is the look.
            for k in 0...s.events.count {
                step += 1
                if k > 0 {
                    // The explorer found the sequence by applying these events from the start.
                    do { try engine.apply(s.events[k - 1]) } catch { preconditionFailure("a planned event was refused on its own path: \(error)") }
                }
                let observe = k == s.events.count
                precondition(!observe || engine.digest == s.digest, "a sequence replayed to another digest than the explorer's")
                var w = JSONWriter(capacity: 256)
                w.beginObject()
                w.key("step"); w.int(step)
                w.key("sequence"); w.int(i + 1)
                w.key("event"); if k > 0 { s.events[k - 1].write(to: &w) } else { w.null() }
                w.key("digest"); w.string(Digest.hex(engine.digest))
                w.key("why"); w.string(observe ? "observe" : (k == 0 ? "reset" : "move"))
                if observe {
                    if let from = s.from { w.key("from"); w.string(Digest.hex(from)) }
                    w.key("pose"); w.string(s.pose.rawValue)
                    w.key("orientation"); w.string(s.orientation.rawValue)
                }
                w.endObject()
                out += w.bytes
                out.append(0x0A)
            }
        }
        return out
    }

    /// One sequence of a plan as read back: its events (as the file holds them) and the
    /// layout it ends on; `from` for a transition's.
    struct Sequence {
        var number: Int
        var events: [JSONValue]
        var digest: UInt64
        var from: UInt64?
    }

    /// A plan's header (for version 1, the document without its lists) and its sequences,
    /// layouts' first; nil when `bytes` are not a plan.
    static func read(_ bytes: [UInt8], path: String) throws -> (header: JSONValue, sequences: [Sequence])? {
        let lines = Inputs.lines(bytes)
        guard let first = lines.first, let header = try? JSON.parse(Array(first.bytes)), case .string("plan") = header["crease"] else {
            // One document over several lines (a version-1 plan, pretty-printed) is still one.
            guard let document = try? JSON.parse(bytes), case .string("plan") = document["crease"] else { return nil }
            return try readDocument(document, path: path)
        }
        guard case .number(let v)? = header["version"] else { throw UsageError("\(path): a plan of version (none); this build reads versions 1 and 2") }
        if v == 1 { return try readDocument(header, path: path) }
        guard v == Double(version) else {
            var shown = JSONWriter()
            shown.value(.number(v))
            throw UsageError("\(path): a plan of version \(String(decoding: shown.bytes, as: UTF8.self)); this build reads versions 1 and 2")
        }
        var out: [Sequence] = []
        var current: (number: Int, events: [JSONValue])?
        for line in lines.dropFirst() where !line.bytes.isEmpty {
            let step: JSONValue
            do { step = try JSON.parse(Array(line.bytes)) } catch { throw UsageError("\(path): line \(line.number): not JSON: \(error)") }
            guard case .number(let n)? = step["sequence"], n >= 1, n == n.rounded(), case .string(let why)? = step["why"], let event = step["event"] else {
                throw UsageError("\(path): line \(line.number): a plan step needs \"sequence\", \"event\" and \"why\"")
            }
            if current?.number != Int(n) {
                guard current == nil else { throw UsageError("\(path): line \(line.number): sequence \(current!.number) ends without an observe step") }
                guard case .null = event, why == "reset" || why == "observe" else {
                    throw UsageError("\(path): line \(line.number): sequence \(Int(n)) does not begin with its reset (\"event\": null)")
                }
                current = (Int(n), [])
            } else {
                guard case .object = event else { throw UsageError("\(path): line \(line.number): a step after the reset needs an event") }
                current!.events.append(event)
            }
            guard why == "observe" else { continue }
            guard case .string(let d)? = step["digest"], let digest = Digest.parseHex(d) else {
                throw UsageError("\(path): line \(line.number): an observe step needs a 16-hex-digit \"digest\"")
            }
            var from: UInt64?
            if case .string(let f)? = step["from"] {
                guard let parsed = Digest.parseHex(f) else { throw UsageError("\(path): line \(line.number): \"from\" must be 16 hex digits") }
                from = parsed
            }
            out.append(Sequence(number: current!.number, events: current!.events, digest: digest, from: from))
            current = nil
        }
        if let open = current { throw UsageError("\(path): sequence \(open.number) ends without an observe step (the file is cut?)") }
        return (header, out)
    }

    /// A version-1 plan: one JSON document with `sequences` and `transitionSequences` lists.
    private static func readDocument(_ value: JSONValue, path: String) throws -> (header: JSONValue, sequences: [Sequence]) {
        guard case .number(let version)? = value["version"], version == 1, case .array(let layouts)? = value["sequences"] else {
            var shown = JSONWriter()
            if let v = value["version"] { shown.value(v) }
            throw UsageError("\(path): a plan of version \(shown.bytes.isEmpty ? "(none)" : String(decoding: shown.bytes, as: UTF8.self)); this build reads versions 1 and 2")
        }
        var transitions: [JSONValue] = []
        if case .array(let list)? = value["transitionSequences"] { transitions = list }
        var out: [Sequence] = []
        for (i, s) in (layouts + transitions).enumerated() {
            guard case .array(let events)? = s["events"], case .string(let d)? = s["digest"], let digest = Digest.parseHex(d) else {
                throw UsageError("\(path): sequence \(i + 1) needs \"events\" and a 16-hex-digit \"digest\"")
            }
            var from: UInt64?
            if i >= layouts.count {
                guard case .string(let f)? = s["from"], let parsed = Digest.parseHex(f) else {
                    throw UsageError("\(path): transition sequence \(i + 1 - layouts.count) needs a 16-hex-digit \"from\"")
                }
                from = parsed
            }
            out.append(Sequence(number: i + 1, events: events, digest: digest, from: from))
        }
        var header = value
        if case .object(let members) = value { header = .object(members.filter { $0.0 != "sequences" && $0.0 != "transitionSequences" }) }
        return (header, out)
    }

    /// What coverage needs of a plan: the layouts and transitions it holds, with their sequences' lengths.
    struct Loaded {
        var app: String
        /// The profile's name, nil in a plan that does not say.
        var profile: String?
        var layouts: [(digest: UInt64, events: Int)]
        var transitions: [(from: UInt64, to: UInt64)]
        /// A tour's observable classes (its observe steps'), in order; empty for a plan.
        var classes: [UInt64] = []
        /// How a tour tells classes apart; nil for a plan.
        var observe: RigProfile.ObserveMode?
    }

    /// A plan (JSON Lines, or a version-1 document) or a tour (JSON Lines whose first line says `"crease":"tour"`).
    static func load(_ path: String) throws -> Loaded {
        let bytes = try Inputs.readFile(path, what: "plan", limit: InputFile.traceLimit)
        if let tour = try loadTour(bytes, path: path) { return tour }
        guard let (header, sequences) = try read(bytes, path: path) else {
            throw UsageError("\(path): not a plan (crease plan -o PLAN writes one)")
        }
        // A layout (or transition) listed twice counts once: a plan concatenated with itself
        // is the same plan.
        var layouts: [(UInt64, Int)] = []
        var listed = Set<UInt64>()
        var transitions: [(UInt64, UInt64)] = []
        var listedSteps = Set<[UInt64]>()
        for s in sequences {
            if let from = s.from {
                if listedSteps.insert([from, s.digest]).inserted { transitions.append((from, s.digest)) }
            } else if listed.insert(s.digest).inserted {
                layouts.append((s.digest, s.events.count))
            }
        }
        guard !layouts.isEmpty else { throw UsageError("\(path): the plan has no layouts: nothing to cover") }
        let app: String
        if case .string(let a)? = header["app"] { app = a } else { app = "?" }
        var profile: String?
        if case .string(let p)? = header["profile"] { profile = p }
        return Loaded(app: app, profile: profile, layouts: layouts, transitions: transitions)
    }

    /// The layouts and classes of a tour's observe steps; nil when `bytes` is not a tour.
    private static func loadTour(_ bytes: [UInt8], path: String) throws -> Loaded? {
        let lines = Inputs.lines(bytes)
        guard let first = lines.first, let header = try? JSON.parse(Array(first.bytes)), case .string("tour") = header["crease"] else { return nil }
        guard case .number(let version)? = header["version"], version == 1 else {
            throw UsageError("\(path): a tour of another version; this build reads version 1")
        }
        guard case .string(let app)? = header["app"], case .string(let observeName)? = header["observe"],
              let observe = RigProfile.ObserveMode(rawValue: observeName) else {
            throw UsageError("\(path): line 1: a tour header needs \"app\" and \"observe\" (digest or page-source)")
        }
        var profile: String?
        if case .string(let p)? = header["profile"] { profile = p }
        var layouts: [(UInt64, Int)] = []
        var classes: [UInt64] = []
        var listed = Set<UInt64>()
        for line in lines.dropFirst() where !line.bytes.isEmpty {
            let step: JSONValue
            do { step = try JSON.parse(Array(line.bytes)) } catch { throw UsageError("\(path): line \(line.number): not JSON: \(error)") }
            guard case .string("observe")? = step["why"] else { continue }
            guard case .string(let d)? = step["digest"], let digest = Digest.parseHex(d),
                  case .string(let c)? = step["class"], let cls = Digest.parseHex(c), case .number(let n)? = step["step"] else {
                throw UsageError("\(path): line \(line.number): an observe step needs \"step\", and \"digest\" and \"class\" of 16 hex digits")
            }
            if listed.insert(cls).inserted {
                classes.append(cls)
                layouts.append((digest, Int(n)))
            }
        }
        guard !classes.isEmpty else { throw UsageError("\(path): the tour observes nothing: nothing to cover") }
        return Loaded(app: app, profile: profile, layouts: layouts, transitions: [], classes: classes, observe: observe)
    }

    /// Several tours (the parts of `--split`) as one: their classes together, each once. One
    /// plan is itself; plans of other apps, or tours that tell classes apart otherwise, are refused.
    static func merged(_ loaded: [Loaded], paths: [String]) throws -> Loaded {
        guard var whole = loaded.first else { throw UsageError("--plan PLAN is needed") }
        guard loaded.count > 1 else { return whole }
        var listed = Set(whole.classes)
        for (part, path) in zip(loaded.dropFirst(), paths.dropFirst()) {
            guard whole.observe != nil, let observe = part.observe else {
                throw UsageError("\(path): only the parts of a tour are given together; a plan is given alone")
            }
            guard part.app == whole.app, observe == whole.observe else {
                throw UsageError("\(path) is a tour of app \"\(part.app)\" by \(observe.rawValue); \(paths[0]) is of app \"\(whole.app)\" by \(whole.observe!.rawValue)")
            }
            for (layout, cls) in zip(part.layouts, part.classes) where listed.insert(cls).inserted {
                whole.layouts.append(layout)
                whole.classes.append(cls)
            }
        }
        return whole
    }
}
