/// One field where two layouts differ, by its path (`bars[0].items[2].frame.y`),
/// with each side's value as compact JSON (`nil` where the field is missing).
public struct LayoutDifference: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    public var expected: String?
    public var actual: String?

    public var description: String { "\(path): \(expected ?? "(absent)") -> \(actual ?? "(absent)")" }
}

/// Field-by-field comparison of two JSON documents (layouts, in practice). Object
/// members are matched by name in the first document's order, then the second's
/// extra members; array elements by index. `seq` and `digest` are skipped at the top:
/// they always differ when anything does.
public enum LayoutDiff {
    /// How many differences a report lists.
    public static let defaultLimit = 40

    public static func differences(expected: [UInt8], actual: [UInt8], limit: Int = defaultLimit) -> [LayoutDifference] {
        guard let a = try? JSON.parse(expected), let b = try? JSON.parse(actual) else {
            return expected == actual ? [] : [LayoutDifference(path: "", expected: "(unreadable)", actual: "(unreadable)")]
        }
        return differences(expected: a, actual: b, limit: limit)
    }

    public static func differences(expected: JSONValue, actual: JSONValue, limit: Int = defaultLimit) -> [LayoutDifference] {
        var out: [LayoutDifference] = []
        walk(expected, actual, path: "", top: true, into: &out, limit: limit)
        return out
    }

    private static func compact(_ v: JSONValue) -> String {
        var w = JSONWriter()
        w.value(v)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    private static func walk(_ a: JSONValue?, _ b: JSONValue?, path: String, top: Bool, into out: inout [LayoutDifference], limit: Int) {
        guard out.count < limit else { return }
        switch (a, b) {
        case (.object(let am)?, .object(let bm)?):
            for (k, v) in am where !(top && (k == "seq" || k == "digest")) {
                walk(v, member(bm, k), path: path.isEmpty ? k : "\(path).\(k)", top: false, into: &out, limit: limit)
            }
            for (k, v) in bm where member(am, k) == nil {
                walk(nil, v, path: path.isEmpty ? k : "\(path).\(k)", top: false, into: &out, limit: limit)
            }
        case (.array(let aa)?, .array(let ba)?):
            for i in 0..<max(aa.count, ba.count) {
                walk(i < aa.count ? aa[i] : nil, i < ba.count ? ba[i] : nil, path: "\(path)[\(i)]", top: false, into: &out, limit: limit)
            }
        default:
            if a != b { out.append(LayoutDifference(path: path, expected: a.map(compact), actual: b.map(compact))) }
        }
    }

    private static func member(_ members: [(String, JSONValue)], _ key: String) -> JSONValue? {
        for (k, v) in members where k == key { return v }
        return nil
    }
}
