import CreaseCore
import CreaseSystem

/// A saved `crease bench` run (`--save FILE`), read back by `--compare FILE`: the repeats'
/// values of every compared figure, the command and commit that measured them, and the
/// machine. BENCHMARKS.md describes the file.
struct BenchBaseline: Sendable, Equatable {
    static let format = "crease-bench-baseline"
    static let version = 1
    /// A baseline is a few hundred figures; anything larger is not one.
    static let sizeLimit = 16 << 20

    var command: String
    var commit: String
    var machine: String
    var repeats: BenchRepeats

    func json() -> [UInt8] {
        var w = JSONWriter(capacity: 16 * 1024)
        w.beginObject()
        w.key("format"); w.string(Self.format)
        w.key("version"); w.int(Self.version)
        w.key("command"); w.string(command)
        w.key("commit"); w.string(commit)
        w.key("machine"); w.string(machine)
        w.key("repeats"); w.int(repeats.count)
        w.key("figures"); w.beginArray()
        for f in repeats.figures {
            // A figure a line: a baseline committed to a repository diffs figure by figure.
            w.bytes.append(0x0A)
            w.beginObject()
            w.key("key"); w.string(f.key)
            w.key("unit"); w.string(f.unit)
            w.key("better"); w.string(f.better.rawValue)
            w.key("median"); w.number(f.median)
            w.key("values"); w.beginArray(); for v in f.values { w.number(v) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
        var bytes = w.bytes
        bytes.append(0x0A)
        return bytes
    }

    /// Reads a baseline file, with an error that names the file and what is wrong with it.
    static func read(_ path: String) throws -> BenchBaseline {
        let bytes = try Inputs.readFile(path, what: "bench baseline", limit: sizeLimit)
        let value: JSONValue
        do { value = try JSON.parse(bytes) } catch { throw UsageError("\(path) is not a bench baseline: \(error)") }
        return try decode(value, path: path)
    }

    static func decode(_ value: JSONValue, path: String) throws -> BenchBaseline {
        func fail(_ what: String) -> UsageError { UsageError("\(path) is not a bench baseline of this build: \(what)") }
        guard case .string(Self.format)? = value["format"] else {
            throw fail("no \"format\":\"\(Self.format)\" (write one with crease bench --save FILE)")
        }
        guard case .number(let version)? = value["version"], version == Double(Self.version) else {
            let found: String
            if case .number(let n)? = value["version"] { found = "version \(Format.fixed(n, 0))" } else { found = "no version" }
            throw fail("\(found); this build reads version \(Self.version)")
        }
        guard case .number(let count)? = value["repeats"], count >= 1, count == count.rounded() else { throw fail("no repeat count") }
        guard case .array(let list)? = value["figures"] else { throw fail("no \"figures\" array") }
        var figures: [ComparableFigure] = []
        var seen = Set<String>()
        for (i, item) in list.enumerated() {
            guard case .string(let key)? = item["key"], !key.isEmpty else { throw fail("figure \(i + 1) has no key") }
            guard case .string(let unit)? = item["unit"] else { throw fail("figure \"\(key)\" has no unit") }
            guard case .string(let b)? = item["better"], let better = Better(rawValue: b) else {
                throw fail("figure \"\(key)\" has no \"better\" (lower or higher)")
            }
            guard case .array(let raw)? = item["values"], !raw.isEmpty else { throw fail("figure \"\(key)\" has no values") }
            let values = raw.compactMap { v -> Double? in if case .number(let n) = v, n.isFinite { n } else { nil } }
            guard values.count == raw.count else { throw fail("figure \"\(key)\" has a value that is not a number") }
            guard seen.insert(key).inserted else { throw fail("figure \"\(key)\" appears twice") }
            figures.append(ComparableFigure(key: key, unit: unit, better: better, values: values))
        }
        func text(_ k: String) -> String { if case .string(let s)? = value[k] { s } else { "" } }
        return BenchBaseline(command: text("command"), commit: text("commit"), machine: text("machine"),
                             repeats: BenchRepeats(figures: figures, count: Int(count)))
    }
}
