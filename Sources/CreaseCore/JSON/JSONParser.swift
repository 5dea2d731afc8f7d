/// A strict RFC 8259 parser: rejects trailing garbage, duplicate keys, invalid
/// UTF-8, lone surrogates, numbers that overflow a Double, and nesting deeper
/// than `maxDepth` (so hostile input cannot exhaust the stack).
public enum JSON {
    public static let maxDepth = 256

    public static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONValue {
        try bytes.withUnsafeBytes { raw in Result { () throws(JSONError) in try parse(raw) } }.get()
    }

    public static func parse(_ bytes: ArraySlice<UInt8>) throws(JSONError) -> JSONValue {
        try bytes.withUnsafeBytes { raw in Result { () throws(JSONError) in try parse(raw) } }.get()
    }

    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes.bindMemory(to: UInt8.self))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else {
            throw JSONError("unexpected data after the JSON value", at: parser.index)
        }
        return value
    }
}

struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        guard index < bytes.count else { throw JSONError("unexpected end of input", at: index) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw JSONError("unexpected character", at: index)
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw JSONError("invalid literal", at: index) }
        let lit = literal.utf8Start
        for i in 0..<count where bytes[index + i] != lit[i] {
            throw JSONError("invalid literal", at: index)
        }
        index += count
    }

    mutating func parseObject(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= JSON.maxDepth else { throw JSONError("nesting deeper than \(JSON.maxDepth)", at: index) }
        index += 1
        var members: [(String, JSONValue)] = []
        // Past a few members, duplicates are found by hashing: comparing each key
        // with every earlier one would let one 64 KiB line of distinct keys stall
        // the daemon for seconds. (Only membership is asked: no order depends on it.)
        var keys: Set<[UInt8]> = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw JSONError("expected a member name", at: index)
            }
            let keyOffset = index
            let key = try parseString()
            if members.count < 16 {
                for (existing, _) in members where existing.sameBytes(key) {
                    throw JSONError("duplicate member \"\(key)\"", at: keyOffset)
                }
            } else {
                if keys.isEmpty { for (k, _) in members { keys.insert(Array(k.utf8)) } }
                guard keys.insert(Array(key.utf8)).inserted else { throw JSONError("duplicate member \"\(key)\"", at: keyOffset) }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw JSONError("expected ':'", at: index) }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue(depth: depth)))
            skipWhitespace()
            guard index < bytes.count else { throw JSONError("unexpected end of input in object", at: index) }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw JSONError("expected ',' or '}'", at: index)
        }
    }

    mutating func parseArray(depth: Int) throws(JSONError) -> JSONValue {
        guard depth <= JSON.maxDepth else { throw JSONError("nesting deeper than \(JSON.maxDepth)", at: index) }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw JSONError("unexpected end of input in array", at: index) }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw JSONError("expected ',' or ']'", at: index)
        }
    }

    mutating func parseString() throws(JSONError) -> String {
        let start = index
        index += 1
        // Fast path: plain ASCII with no escapes is the common case for ids and names.
        var i = index
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<i]), as: UTF8.self)
                index = i + 1
                return s
            }
            if b == UInt8(ascii: "\\") || b >= 0x80 || b < 0x20 { break }
            i += 1
        }
        var out: [UInt8] = Array(bytes[index..<i])
        index = i
        while true {
            guard index < bytes.count else { throw JSONError("unterminated string", at: start) }
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw JSONError("unterminated escape", at: index) }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(into: &out)
                default: throw JSONError("invalid escape", at: index - 1)
                }
            case 0..<0x20:
                throw JSONError("control character in string", at: index)
            case 0x80...:
                try copyUTF8Sequence(into: &out)
            default:
                out.append(b)
                index += 1
            }
        }
    }

    mutating func readHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw JSONError("short \\u escape", at: index) }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let d: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw JSONError("invalid hex digit in \\u escape", at: index)
            }
            v = v << 4 | d
            index += 1
        }
        return v
    }

    mutating func appendUnicodeEscape(into out: inout [UInt8]) throws(JSONError) {
        let at = index
        var scalar = try readHex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw JSONError("lone high surrogate", at: at)
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw JSONError("invalid low surrogate", at: at) }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw JSONError("lone low surrogate", at: at)
        }
        guard let u = Unicode.Scalar(scalar) else { throw JSONError("invalid code point", at: at) }
        out.append(contentsOf: UTF8.encode(u)!)
    }

    /// Copies one multi-byte UTF-8 sequence, validating it (no overlongs, no surrogates).
    mutating func copyUTF8Sequence(into out: inout [UInt8]) throws(JSONError) {
        let b0 = bytes[index]
        let length: Int
        let minScalar: UInt32
        switch b0 {
        case 0xC2...0xDF: length = 2; minScalar = 0x80
        case 0xE0...0xEF: length = 3; minScalar = 0x800
        case 0xF0...0xF4: length = 4; minScalar = 0x10000
        default: throw JSONError("invalid UTF-8", at: index)
        }
        guard index + length <= bytes.count else { throw JSONError("truncated UTF-8", at: index) }
        var scalar = UInt32(b0) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length {
            let c = bytes[index + k]
            guard c & 0xC0 == 0x80 else { throw JSONError("invalid UTF-8", at: index + k) }
            scalar = scalar << 6 | UInt32(c & 0x3F)
        }
        if scalar < minScalar || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) {
            throw JSONError("invalid UTF-8", at: index)
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<index + length]))
        index += length
    }

    mutating func parseNumber() throws(JSONError) -> Double {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") { negative = true; index += 1 }
        guard index < bytes.count else { throw JSONError("invalid number", at: start) }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        var truncated = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) {
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[index] - 48); digits += 1 } else { exponent += 1; truncated = true }
                index += 1
            }
        } else {
            throw JSONError("invalid number", at: start)
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                if digits < 19 { mantissa = mantissa &* 10 &+ UInt64(bytes[index] - 48); digits += 1; exponent -= 1 } else { truncated = true }
                index += 1
            }
            guard index > fractionStart else { throw JSONError("invalid number: digits expected after '.'", at: index) }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var expNegative = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                expNegative = bytes[index] == UInt8(ascii: "-"); index += 1
            }
            let expStart = index
            var e = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                if e < 100_000 { e = e * 10 + Int(bytes[index] - 48) }
                index += 1
            }
            guard index > expStart else { throw JSONError("invalid number: digits expected in exponent", at: index) }
            exponent += expNegative ? -e : e
        }
        // Exact fast path (Clinger): the mantissa and the power of ten are both exact doubles.
        if !truncated, mantissa < (1 << 53), exponent >= -22, exponent <= 22 {
            let m = Double(mantissa)
            let v = exponent >= 0 ? m * powersOfTen[exponent] : m / powersOfTen[-exponent]
            return negative ? -v : v
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let v = Double(text), v.isFinite else { throw JSONError("number out of range", at: start) }
        return v
    }
}

private let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]
