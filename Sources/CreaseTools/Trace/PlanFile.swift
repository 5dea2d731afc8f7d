import CreaseCore
import CreaseDaemon

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
        var layouts: [(digest: UInt64, events: Int)]
        var transitions: [(from: UInt64, to: UInt64)]
    }

    static func load(_ path: String) throws -> Loaded {
        let value: JSONValue
        do { value = try JSON.parse(try Inputs.readFile(path, what: "plan", limit: InputFile.traceLimit)) } catch let e as UsageError {
            throw e
        } catch {
            throw UsageError("\(path): not a plan (crease plan -o PLAN writes one): not one JSON document: \(error)")
        }
        guard case .string("plan") = value["crease"], case .array(let sequences)? = value["sequences"] else {
            throw UsageError("\(path): not a plan (crease plan -o PLAN writes one)")
        }
        func hex(_ v: JSONValue?) throws -> UInt64 {
            guard case .string(let text)? = v, let d = Digest.parseHex(text) else { throw UsageError("\(path): a sequence without a 16-hex-digit digest") }
            return d
        }
        var layouts: [(UInt64, Int)] = []
        for s in sequences {
            guard case .array(let events)? = s["events"] else { throw UsageError("\(path): a sequence without events") }
            layouts.append((try hex(s["digest"]), events.count))
        }
        var transitions: [(UInt64, UInt64)] = []
        if case .array(let list)? = value["transitionSequences"] {
            for s in list { transitions.append((try hex(s["from"]), try hex(s["digest"]))) }
        }
        let app: String
        if case .string(let a)? = value["app"] { app = a } else { app = "?" }
        return Loaded(app: app, layouts: layouts, transitions: transitions)
    }
}
