import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// A plan as a JSON document (`crease plan -o PLAN`), and read back for `crease coverage`.
enum PlanFile {
    static func encode(_ r: ModelExplorer.Result, app: App, profile: DeviceProfile, from: String?, maxDepth: Int) -> [UInt8] {
        var w = JSONWriter(capacity: 64 * 1024)
        w.beginObject()
        w.key("crease"); w.string("plan")
        w.key("version"); w.int(1)
        w.key("app"); w.string(app.name)
        w.key("profile"); w.string(profile.name)
        w.key("from"); if let from { w.string(from) } else { w.string("default") }
        w.key("maxDepth"); w.int(maxDepth)
        w.key("states"); w.int(r.states)
        w.key("layouts"); w.int(r.layouts)
        w.key("transitionsExplored"); w.int(r.transitionsExplored)
        w.key("truncated"); w.bool(r.truncated)
        w.key("sequences"); writeSequences(r.sequences, to: &w)
        w.key("transitionSequences"); writeSequences(r.transitionSequences, to: &w)
        w.endObject()
        return w.bytes
    }

    private static func writeSequences(_ list: [ModelExplorer.Sequence], to w: inout JSONWriter) {
        w.beginArray()
        for s in list {
            w.beginObject()
            if let from = s.from { w.key("from"); w.string(Digest.hex(from)) }
            w.key("digest"); w.string(Digest.hex(s.digest))
            w.key("pose"); w.string(s.pose.rawValue)
            w.key("orientation"); w.string(s.orientation.rawValue)
            w.key("events"); w.beginArray(); for e in s.events { e.write(to: &w) }; w.endArray()
            w.endObject()
        }
        w.endArray()
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

    /// A plan (one JSON document) or a tour (JSON Lines whose first line says `"crease":"tour"`).
    static func load(_ path: String) throws -> Loaded {
        let bytes = try Inputs.readFile(path, what: "plan", limit: InputFile.traceLimit)
        if let tour = try loadTour(bytes, path: path) { return tour }
        let value: JSONValue
        do { value = try JSON.parse(bytes) } catch {
            throw UsageError("\(path): not a plan (crease plan -o PLAN writes one): not one JSON document: \(error)")
        }
        guard case .string("plan") = value["crease"], case .array(let sequences)? = value["sequences"] else {
            throw UsageError("\(path): not a plan (crease plan -o PLAN writes one)")
        }
        guard case .number(let version)? = value["version"], version == 1 else {
            var shown = JSONWriter()
            if let v = value["version"] { shown.value(v) }
            throw UsageError("\(path): a plan of version \(shown.bytes.isEmpty ? "(none)" : String(decoding: shown.bytes, as: UTF8.self)); this build reads version 1")
        }
        guard !sequences.isEmpty else { throw UsageError("\(path): the plan has no layouts: nothing to cover") }
        func hex(_ v: JSONValue?) throws -> UInt64 {
            guard case .string(let text)? = v, let d = Digest.parseHex(text) else { throw UsageError("\(path): a sequence without a 16-hex-digit digest") }
            return d
        }
        // A layout (or transition) listed twice counts once: a plan concatenated with itself
        // is the same plan.
        var layouts: [(UInt64, Int)] = []
        var listed = Set<UInt64>()
        for s in sequences {
            guard case .array(let events)? = s["events"] else { throw UsageError("\(path): a sequence without events") }
            let digest = try hex(s["digest"])
            if listed.insert(digest).inserted { layouts.append((digest, events.count)) }
        }
        var transitions: [(UInt64, UInt64)] = []
        var listedSteps = Set<[UInt64]>()
        if case .array(let list)? = value["transitionSequences"] {
            for s in list {
                let step = (try hex(s["from"]), try hex(s["digest"]))
                if listedSteps.insert([step.0, step.1]).inserted { transitions.append(step) }
            }
        }
        let app: String
        if case .string(let a)? = value["app"] { app = a } else { app = "?" }
        var profile: String?
        if case .string(let p)? = value["profile"] { profile = p }
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
