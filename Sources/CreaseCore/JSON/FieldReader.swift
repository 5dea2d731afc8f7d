/// Typed access to an object's fields for decoders, producing InputErrors that
/// name the field by its full path. Unknown fields are rejected so that a typo
/// (`"heigth"`) is reported instead of silently ignored.
struct FieldReader {
    let members: [(String, JSONValue)]
    let path: String
    let what: String

    init(_ value: JSONValue, path: String, what: String) throws(InputError) {
        guard case .object(let members) = value else {
            throw InputError(.wrongType, "\(what) must be a JSON object, not \(value.typeName)", field: path.isEmpty ? nil : path)
        }
        self.members = members
        self.path = path
        self.what = what
    }

    func fieldPath(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }

    func optional(_ name: String) -> JSONValue? {
        for (k, v) in members where k == name {
            if case .null = v { return nil }
            return v
        }
        return nil
    }

    func required(_ name: String) throws(InputError) -> JSONValue {
        guard let v = optional(name) else { throw InputError.missing(fieldPath(name), in: what) }
        return v
    }

    /// Rejects members not named in `allowed` (a short list: a linear scan beats hashing here).
    func rejectUnknown(allowed: [StaticString]) throws(InputError) {
        for (k, _) in members where !allowed.contains(where: { FieldReader.equal(k, $0) }) {
            throw InputError(.unknownField, "\(what): unknown field \"\(k)\"", field: fieldPath(k))
        }
    }

    func rejectUnknown(allowed: [String]) throws(InputError) {
        for (k, _) in members where !allowed.contains(k) {
            throw InputError(.unknownField, "\(what): unknown field \"\(k)\"", field: fieldPath(k))
        }
    }

    static func equal(_ s: String, _ t: StaticString) -> Bool {
        var s = s
        return s.withUTF8 { a in
            a.count == t.utf8CodeUnitCount && (a.isEmpty || memcmpBytes(a.baseAddress!, t.utf8Start, a.count))
        }
    }

    private static func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ n: Int) -> Bool {
        for i in 0..<n where a[i] != b[i] { return false }
        return true
    }

    func string(_ name: String) throws(InputError) -> String {
        let v = try required(name)
        guard case .string(let s) = v else { throw InputError.wrongType(fieldPath(name), expected: "a string", got: v) }
        return s
    }

    func optionalString(_ name: String) throws(InputError) -> String? {
        guard let v = optional(name) else { return nil }
        guard case .string(let s) = v else { throw InputError.wrongType(fieldPath(name), expected: "a string", got: v) }
        return s
    }

    func bool(_ name: String) throws(InputError) -> Bool {
        let v = try required(name)
        guard case .bool(let b) = v else { throw InputError.wrongType(fieldPath(name), expected: "true or false", got: v) }
        return b
    }

    func optionalBool(_ name: String) throws(InputError) -> Bool? {
        guard let v = optional(name) else { return nil }
        guard case .bool(let b) = v else { throw InputError.wrongType(fieldPath(name), expected: "true or false", got: v) }
        return b
    }

    func number(_ name: String) throws(InputError) -> Double {
        let v = try required(name)
        guard case .number(let n) = v else { throw InputError.wrongType(fieldPath(name), expected: "a number", got: v) }
        return n
    }

    func optionalNumber(_ name: String) throws(InputError) -> Double? {
        guard let v = optional(name) else { return nil }
        guard case .number(let n) = v else { throw InputError.wrongType(fieldPath(name), expected: "a number", got: v) }
        return n
    }

    func integer(_ name: String, min: Int, max: Int) throws(InputError) -> Int {
        let n = try number(name)
        return try FieldReader.checkInteger(n, field: fieldPath(name), min: min, max: max)
    }

    func optionalInteger(_ name: String, min: Int, max: Int) throws(InputError) -> Int? {
        guard let n = try optionalNumber(name) else { return nil }
        return try FieldReader.checkInteger(n, field: fieldPath(name), min: min, max: max)
    }

    static func checkInteger(_ n: Double, field: String, min: Int, max: Int) throws(InputError) -> Int {
        guard n == n.rounded() else { throw InputError.wrongType(field, expected: "an integer", got: .number(n)) }
        guard n >= Double(min), n <= Double(max) else { throw InputError.outOfRange(field, "must be between \(min) and \(max)", got: n) }
        return Int(n)
    }

    func array(_ name: String) throws(InputError) -> [JSONValue] {
        let v = try required(name)
        guard case .array(let a) = v else { throw InputError.wrongType(fieldPath(name), expected: "an array", got: v) }
        return a
    }

    func optionalArray(_ name: String) throws(InputError) -> [JSONValue]? {
        guard let v = optional(name) else { return nil }
        guard case .array(let a) = v else { throw InputError.wrongType(fieldPath(name), expected: "an array", got: v) }
        return a
    }

    func enumeration<E: RawRepresentable & CaseIterable>(_ name: String, _ type: E.Type) throws(InputError) -> E where E.RawValue == String {
        let s = try string(name)
        guard let e = E(rawValue: s) else { throw InputError.badValue(fieldPath(name), s, allowed: E.allCases.map(\.rawValue)) }
        return e
    }

    func optionalEnumeration<E: RawRepresentable & CaseIterable>(_ name: String, _ type: E.Type) throws(InputError) -> E? where E.RawValue == String {
        guard let s = try optionalString(name) else { return nil }
        guard let e = E(rawValue: s) else { throw InputError.badValue(fieldPath(name), s, allowed: E.allCases.map(\.rawValue)) }
        return e
    }
}
