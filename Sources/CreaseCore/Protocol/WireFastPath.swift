/// A decode fast path for the events rigs send at a high rate (and `motion` likewise, below):
/// `hinge` with a number, with
/// or without `ts` and `id`, written the way rigs and `crease gen` write it:
/// `{"event":"hinge","angle":A}` where any of `,"ts":T` and `,"id":I` may follow the angle
/// (each at most once, in either order), with no whitespace. `T` is a whole number of at
/// most 16 digits, `I` a number or a string of printable ASCII without escapes.
///
/// It reads such a line without building a `JSONValue`, and gives exactly what the full
/// parser gives for it (the same number reader; tests and the wire fuzzer compare the two).
/// Any other line, valid or not, returns nil and takes the full parser, which also gives
/// every error its message.
public enum WireFastPath {
    /// A hinge line's fields: the daemon applies them without an `EventEnvelope`, which is
    /// as large as an event can be (an `app` event holds a manifest) and was copied and
    /// destroyed on the way, about 190 instructions of a round trip's 6,800.
    public struct Hinge: Sendable {
        public var angle: Double
        public var ts: Int64?
        public var id: JSONValue?
        public var envelope: EventEnvelope { EventEnvelope(event: .hinge(angle: angle), ts: ts, id: id) }
    }

    public static func hinge(_ b: UnsafeBufferPointer<UInt8>) -> EventEnvelope? {
        hingeFields(b)?.envelope
    }

    public static func hingeFields(_ b: UnsafeBufferPointer<UInt8>) -> Hinge? {
        var i = 0
        guard TraceFastPath.expect(b, &i, #"{"event":"hinge","angle":"#), i < b.count, b[i] != UInt8(ascii: "-"),
              let angle = number(b, &i), angle <= EventLimits.maxAngle,
              let (ts, id) = tail(b, &i) else { return nil }
        return Hinge(angle: angle, ts: ts, id: id)
    }

    /// A motion line's fields: `{"event":"motion","gravity":[X,Y,Z]}`, then `ts` and `id`
    /// as a hinge line's, each component within the decoder's bounds.
    public struct Motion: Sendable {
        public var gravity: Gravity
        public var ts: Int64?
        public var id: JSONValue?
        public var envelope: EventEnvelope { EventEnvelope(event: .motion(gravity), ts: ts, id: id) }
    }

    public static func motion(_ b: UnsafeBufferPointer<UInt8>) -> EventEnvelope? {
        motionFields(b)?.envelope
    }

    public static func motionFields(_ b: UnsafeBufferPointer<UInt8>) -> Motion? {
        var i = 0
        guard TraceFastPath.expect(b, &i, #"{"event":"motion","gravity":["#), let x = component(b, &i),
              TraceFastPath.expect(b, &i, ","), let y = component(b, &i),
              TraceFastPath.expect(b, &i, ","), let z = component(b, &i),
              TraceFastPath.expect(b, &i, "]"), let (ts, id) = tail(b, &i) else { return nil }
        return Motion(gravity: Gravity(x: x, y: y, z: z), ts: ts, id: id)
    }

    /// A gravity component as the decoder keeps it (-0 folded into 0), or nil past its bound.
    private static func component(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Double? {
        guard let n = number(b, &i), abs(n) <= EventLimits.maxGravity else { return nil }
        return n == 0 ? 0 : n
    }

    /// `,"ts":T` and `,"id":I` in either order, each at most once, then the closing brace
    /// that ends the line. Nil for anything else.
    private static func tail(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> (Int64?, JSONValue?)? {
        var ts: Int64?
        var id: JSONValue?
        while i < b.count, b[i] == UInt8(ascii: ",") {
            if ts == nil, TraceFastPath.expect(b, &i, #","ts":"#) {
                var negative = false
                if i < b.count, b[i] == UInt8(ascii: "-") { negative = true; i += 1 }
                guard let magnitude = TraceFastPath.unsigned(b, &i), magnitude < 1 << 53 else { return nil }
                ts = negative ? -Int64(magnitude) : Int64(magnitude)
            } else if id == nil, TraceFastPath.expect(b, &i, #","id":"#) {
                guard let value = idValue(b, &i) else { return nil }
                id = value
            } else {
                return nil
            }
        }
        guard i + 1 == b.count, b[i] == UInt8(ascii: "}") else { return nil }
        return (ts, id)
    }

    /// A JSON number, read by the full parser's own number reader.
    private static func number(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Double? {
        guard i < b.count else { return nil }
        var parser = JSONParser(b)
        parser.index = i
        guard let value = try? parser.parseNumber() else { return nil }
        i = parser.index
        return value
    }

    private static func idValue(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> JSONValue? {
        guard i < b.count else { return nil }
        guard b[i] == UInt8(ascii: "\"") else {
            // A whole number (what rigs send) straight, as exact as the parser reads it; any
            // other number (a fraction, an exponent, 2^53 and beyond) through the parser's reader.
            var end = i
            if let n = TraceFastPath.unsigned(b, &end), n < 1 << 53,
               end >= b.count || (b[end] != UInt8(ascii: ".") && b[end] | 0x20 != UInt8(ascii: "e")) {
                i = end
                return .number(Double(n))
            }
            return number(b, &i).map { .number($0) }
        }
        let start = i + 1
        var end = start
        while end < b.count, b[end] != UInt8(ascii: "\"") {
            guard b[end] >= 0x20, b[end] < 0x7F, b[end] != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        guard end < b.count else { return nil }
        i = end + 1
        return .string(String(decoding: UnsafeBufferPointer(rebasing: b[start..<end]), as: UTF8.self))
    }
}
