import Testing
@testable import CreaseCore

/// The hinge fast path against the full parser (`JSON.parse` + `Event.decode`, what
/// `Wire.decode` does for any other event line): wherever the fast path answers, it must
/// answer exactly what the full parser does; where it declines, `Wire.decode` still decodes.
@Suite struct WireFastPathTests {
    func fast(_ line: [UInt8]) -> EventEnvelope? { line.withUnsafeBufferPointer { WireFastPath.hinge($0) } }

    func full(_ line: [UInt8]) -> Result<EventEnvelope, InputError> {
        Result { () throws(InputError) in
            let value: JSONValue
            do { value = try JSON.parse(line) } catch let e as JSONError { throw InputError(.badJSON, e.message) } catch { throw InputError(.badJSON, "\(error)") }
            return try Event.decode(value)
        }
    }

    /// The fast path's answer, when it gives one, equals the full parser's; returns whether it answered.
    @discardableResult
    func agree(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let line = Array(text.utf8)
        guard let f = fast(line) else { return false }
        guard case .success(let reference) = full(line) else {
            Issue.record("the fast path accepted a line the full parser rejects: \(text)", sourceLocation: sourceLocation)
            return true
        }
        #expect(f == reference, "\(text)", sourceLocation: sourceLocation)
        #expect(f.id == reference.id && f.ts == reference.ts, "\(text)", sourceLocation: sourceLocation)
        if case .event(let wire)? = try? Wire.decode(line: line) {
            #expect(wire == reference, "\(text)", sourceLocation: sourceLocation)
        } else {
            Issue.record("Wire.decode does not decode an event the fast path accepts: \(text)", sourceLocation: sourceLocation)
        }
        return true
    }

    @Test("the shapes rigs send take the fast path and decode as the full parser decodes them")
    func commonShapesTakeTheFastPath() {
        for text in [#"{"event":"hinge","angle":90.25}"#, #"{"event":"hinge","angle":0}"#, #"{"event":"hinge","angle":180}"#,
                     #"{"event":"hinge","angle":90.25,"id":7}"#, #"{"event":"hinge","angle":3.31,"ts":2174082663624}"#,
                     #"{"event":"hinge","angle":1e2,"ts":-5,"id":"rig-1"}"#, #"{"event":"hinge","angle":45,"id":-0.5,"ts":0}"#,
                     #"{"event":"hinge","angle":0.000001,"id":"","ts":9007199254740991}"#] {
            #expect(agree(text), "not on the fast path: \(text)")
        }
    }

    @Test("numeric ids: whole numbers read straight, any other number through the parser's reader, as the full parser reads them")
    func numericIdsAgree() {
        // Taken on the fast path, each decoding as the full parser decodes it.
        for id in ["0", "7", "42", "9007199254740991", "9007199254740992", "1234567890123456", "1.5", "0.25", "1e3", "2E-2",
                   "12.0", "-3", "-0.5", "0.1"] {
            #expect(agree(#"{"event":"hinge","angle":3,"id":"# + id + "}"), "id \(id)")
            #expect(agree(#"{"event":"hinge","angle":3,"id":"# + id + #","ts":5}"#), "id \(id), then ts")
        }
        // Not JSON: left to the full parser, which rejects them.
        for id in ["01", "00", "1.", "1e", "-", "12345678901234567890x"] {
            #expect(!agree(#"{"event":"hinge","angle":3,"id":"# + id + "}"), "id \(id)")
        }
    }

    @Test("edge cases either agree with the full parser or are left to it")
    func edgeCasesAgreeOrFallBack() {
        let declined = [
            #"{"event":"hinge","angle":-0}"#, #"{"event":"hinge","angle":-1}"#, #"{"event":"hinge","angle":180.5}"#,
            #"{"event":"hinge","angle":01}"#, #"{"event":"hinge","angle":1.}"#, #"{"event":"hinge","angle":"3"}"#,
            #"{"event":"hinge","angle":3,"ts":1.5}"#, #"{"event":"hinge","angle":3,"ts":1e3}"#, #"{"event":"hinge","angle":3,"ts":01}"#,
            #"{"event":"hinge","angle":3,"ts":12345678901234567}"#, #"{"event":"hinge","angle":3,"ts":9007199254740992}"#,
            #"{"event":"hinge","angle":3,"ts":1,"ts":2}"#, #"{"event":"hinge","angle":3,"id":1,"id":2}"#,
            #"{"event":"hinge","angle":3,"id":"a\"b"}"#, #"{"event":"hinge","angle":3,"id":"é"}"#, #"{"event":"hinge","angle":3,"id":"\u{1}"}"#,
            #"{"event":"hinge","angle":3,"id":true}"#, #"{"event":"hinge","angle":3,"id":null}"#, #"{"event":"hinge","angle":3,"id":[1]}"#,
            #"{"event":"hinge","angle":3,"extra":1}"#, #"{"event":"hinge","angle":3,}"#, #"{"event":"hinge","angle":3"#,
            #"{"event":"hinge","angle":3} "#, #" {"event":"hinge","angle":3}"#, #"{"event":"hinge", "angle":3}"#,
            #"{"event":"hinge","angle":3}}"#, #"{"angle":3,"event":"hinge"}"#, #"{"event":"hinge","angle":}"#,
            #"{"event":"hinge","angle":3,"id":"unterminated}"#, #"{"event":"hinge","angle":1e999}"#, #"{"event":"hinge","angle":"#, "",
        ]
        for text in declined {
            #expect(!agree(text), "the fast path should leave this to the full parser: \(text)")
        }
        // Declined lines still decode (or fail) through Wire.decode exactly as the full parser says.
        for text in declined {
            let line = Array(text.utf8)
            let wire = Result { () throws(InputError) in try Wire.decode(line: line) }
            switch (wire, full(line)) {
            case (.success(.event(let a)), .success(let b)): #expect(a == b, "\(text)")
            case (.failure, .failure), (.success(.ignorable), _): break
            default: Issue.record("Wire.decode and the full parser part on \(text)")
            }
        }
    }

    @Test("random hinge lines: where the fast path answers, it agrees (20,000 lines)")
    func randomLinesAgree() {
        var rng = SplitMix64(seed: 1414)
        let pieces = [",", "}", "\"", "-", "0", "1", "9", ".", "e", "E", "+", " ", "\\", "id", "ts", ":", "\"id\":", "\"ts\":", "é", "\u{7F}"]
        var answered = 0
        for n in 0..<20_000 {
            var text = #"{"event":"hinge","angle":"#
            switch rng.next() % 4 {
            case 0: text += String(Double(rng.next() % 200_000) / 1000)
            case 1: text += String(rng.next() % 200)
            default: text += String(Double(rng.next() % 1000) / 7)
            }
            for _ in 0..<Int(rng.next() % 3) {
                if rng.next() % 2 == 0 { text += #","ts":"# + (rng.next() % 5 == 0 ? "-" : "") + String(rng.next() >> UInt64(rng.next() % 64)) }
                else { text += #","id":"# + (rng.next() % 2 == 0 ? String(rng.next() % 100_000) : "\"r\(rng.next() % 1000)\"") }
            }
            text += "}"
            // Every third line is damaged at a random place.
            if n % 3 == 0 {
                var chars = Array(text)
                let at = Int(rng.next() % UInt64(chars.count))
                switch rng.next() % 3 {
                case 0: chars.remove(at: at)
                case 1: chars.insert(contentsOf: pieces[Int(rng.next() % UInt64(pieces.count))], at: at)
                default: chars[at] = Array(pieces[Int(rng.next() % UInt64(pieces.count))])[0]
                }
                text = String(chars)
            }
            if agree(text) { answered += 1 }
        }
        #expect(answered > 10_000, "the fast path answered only \(answered) of 20,000")
    }
}
