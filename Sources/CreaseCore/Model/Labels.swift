/// What a rig says about itself (`creased --label rig=bench-3`): ordered key/value
/// pairs, written into `hello`, `stats`, trace headers and the trace index so traces
/// from many rigs can be told apart. Kept in the order given, never hashed.
public struct Label: Sendable, Equatable {
    public var key: String
    public var value: String

    /// 1 to 64 characters: a letter, then letters, digits, `_`, `.` or `-`.
    public static let maxKeyLength = 64
    /// At most 256 bytes of UTF-8, no control characters.
    public static let maxValueBytes = 256

    public init(key: String, value: String) throws(InputError) {
        try Label.check(key: key, value: value)
        self.key = key
        self.value = value
    }

    /// `KEY=VALUE`, split at the first `=`.
    public init(parsing text: String) throws(InputError) {
        guard let eq = text.firstIndex(of: "=") else {
            throw InputError(.badValue, "a label is KEY=VALUE, got \"\(text)\"", field: "label")
        }
        try self.init(key: String(text[..<eq]), value: String(text[text.index(after: eq)...]))
    }

    static func check(key: String, value: String) throws(InputError) {
        let k = Array(key.utf8)
        func isLetter(_ c: UInt8) -> Bool { (c >= 65 && c <= 90) || (c >= 97 && c <= 122) }
        func isKeyByte(_ c: UInt8) -> Bool { isLetter(c) || (c >= 48 && c <= 57) || c == UInt8(ascii: "_") || c == UInt8(ascii: ".") || c == UInt8(ascii: "-") }
        guard !k.isEmpty, k.count <= maxKeyLength, isLetter(k[0]), k.allSatisfy(isKeyByte) else {
            throw InputError(.badValue, "label key \"\(key)\" must be 1 to \(maxKeyLength) characters: a letter, then letters, digits, \"_\", \".\" or \"-\"",
                             field: "label")
        }
        guard value.utf8.count <= maxValueBytes else {
            throw InputError.outOfRange("label \(key)", "must be at most \(maxValueBytes) bytes", got: "\(value.utf8.count) bytes")
        }
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw InputError(.badValue, "the value of label \"\(key)\" must not contain control characters", field: "label")
        }
    }

    /// Labels as one JSON object, in order.
    public static func write(_ labels: [Label], to w: inout JSONWriter) {
        w.beginObject()
        for l in labels { w.key(l.key); w.string(l.value) }
        w.endObject()
    }

    /// Reads an object written by `write`; keys are checked as `--label` checks them.
    public static func decode(_ value: JSONValue, field: String) throws(InputError) -> [Label] {
        guard case .object(let members) = value else { throw InputError.wrongType(field, expected: "an object of strings", got: value) }
        var labels: [Label] = []
        for (k, v) in members {
            guard case .string(let s) = v else { throw InputError.wrongType("\(field).\(k)", expected: "a string", got: v) }
            guard !labels.contains(where: { $0.key == k }) else { throw InputError(.duplicateId, "label \"\(k)\" is given twice", field: "\(field).\(k)") }
            do { labels.append(try Label(key: k, value: s)) } catch {
                var e = error
                e.field = "\(field).\(k)"
                throw e
            }
        }
        return labels
    }
}
