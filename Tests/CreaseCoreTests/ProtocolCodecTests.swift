@testable import CreaseCore
import Testing

/// Replies, pushes and commands as the daemon writes and reads them.
@Suite struct ProtocolCodecTests {
    private func line(_ f: (inout [UInt8]) -> Void) -> String {
        var out: [UInt8] = []
        f(&out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func eventAckEchoesTheIdVerbatim() {
        #expect(line { Reply.appendEventAck(id: .number(7), seq: 3, changed: true, digest: 0xAB, latencyNs: 12_345, to: &$0) }
                == "{\"id\":7,\"ok\":true,\"seq\":3,\"changed\":true,\"digest\":\"00000000000000ab\",\"latencyUs\":12.3}\n")
        #expect(line { Reply.appendEventAck(id: .string("a\"b"), seq: 1, changed: false, digest: .max, latencyNs: 1000, to: &$0) }
                == "{\"id\":\"a\\\"b\",\"ok\":true,\"seq\":1,\"changed\":false,\"digest\":\"ffffffffffffffff\",\"latencyUs\":1}\n")
        #expect(line { Reply.appendEventAck(id: .bool(true), seq: 1, changed: false, digest: 0, latencyNs: 49, to: &$0) }
                .hasPrefix("{\"id\":true,"))
        #expect(line { Reply.appendEventAck(id: .number(1.5), seq: 1, changed: false, digest: 0, latencyNs: 0, to: &$0) }
                .hasPrefix("{\"id\":1.5,"))
    }

    /// Whole-number ids take the one-copy path: every id is written as `appendValue` writes
    /// it, at the edges of that path (0, -0, 1e15 - 1, 1e15, negatives, fractions) too.
    @Test func eventAckWritesEveryIdAsTheGeneralEncoderDoes() {
        let ids: [JSONValue] = [.number(0), .number(-0.0), .number(1), .number(99), .number(123_456_789), .number(999_999_999_999_999),
                                .number(1e15), .number(9_007_199_254_740_993), .number(-1), .number(-42), .number(0.5), .number(7.25),
                                .string("x"), .null, .bool(false), .array([.number(1)]), .object([("k", .number(2))])]
        for id in ids {
            for (seq, latencyNs) in [(0, UInt64(0)), (Int.max, UInt64.max), (12, UInt64(12_345))] {
                var value: [UInt8] = []
                Reply.appendValue(id, to: &value)
                let fields = line { Reply.appendEventAck(id: .null, seq: seq, changed: seq == 12, digest: 0xF00D, latencyNs: latencyNs, to: &$0) }
                    .dropFirst("{\"id\":null".count)
                let expected = "{\"id\":" + String(decoding: value, as: UTF8.self) + fields
                #expect(line { Reply.appendEventAck(id: id, seq: seq, changed: seq == 12, digest: 0xF00D, latencyNs: latencyNs, to: &$0) }
                        == expected, "id \(id)")
            }
        }
    }

    @Test("the bounded-line encoder writes every number of digits as String(value) does")
    func boundedDecimals() {
        // Every value the no-loop paths write (under 10,000) and past them, then every length.
        var values: [UInt64] = Array(0..<12_000) + [UInt64.max, UInt64.max - 1]
        var power: UInt64 = 1
        for _ in 0..<20 {
            values += [power - 1, power, power + 1, power &* 7 &+ 3]
            power = power.multipliedReportingOverflow(by: 10).partialValue
        }
        for v in values {
            let written = line { out in BoundedLine.append(to: &out, atMost: 20) { BoundedLine.putDecimal(v, &$0) } }
            #expect(written == String(v))
        }
        for v in [0, -1, 42, -1_000_000_007, Int.min, Int.max] {
            let written = line { out in BoundedLine.append(to: &out, atMost: 20) { BoundedLine.putDecimal(v, &$0) } }
            #expect(written == String(v))
        }
    }

    @Test func errorsWithAndWithoutIdAndField() {
        #expect(line { Reply.appendError(InputError(.badValue, "no", field: "angle", id: .string("x")), to: &$0) }
                == "{\"id\":\"x\",\"ok\":false,\"error\":{\"code\":\"badValue\",\"message\":\"no\",\"field\":\"angle\"}}\n")
        #expect(line { Reply.appendError(InputError(.badJSON, "bad"), to: &$0) }
                == "{\"ok\":false,\"error\":{\"code\":\"badJSON\",\"message\":\"bad\"}}\n")
    }

    @Test func okRepliesAndPushes() {
        #expect(line { Reply.appendOK(id: .number(2), to: &$0) { w in w.key("seq"); w.int(4) } }
                == "{\"id\":2,\"ok\":true,\"seq\":4}\n")
        #expect(line { Reply.appendOK(id: nil, to: &$0) { _ in } } == "{\"ok\":true}\n")
        #expect(line { Reply.appendPush("shutdown", seq: 9, to: &$0) { _ in } } == "{\"push\":\"shutdown\",\"seq\":9}\n")
        #expect(line { Reply.appendLayoutPush(seq: 2, digest: 1, to: &$0) { $0.append(contentsOf: Array("{\"a\":1}".utf8)) } }
                == "{\"push\":\"layout\",\"seq\":2,\"digest\":\"0000000000000001\",\"layout\":{\"a\":1}}\n")
        // Appending keeps what was there.
        var out = Array("x".utf8)
        Reply.appendOK(id: nil, to: &out) { _ in }
        #expect(String(decoding: out, as: UTF8.self) == "x{\"ok\":true}\n")
    }

    @Test func hexAndLatency() {
        var out: [UInt8] = []
        Digest.appendHex(0x0123_4567_89ab_cdef, to: &out)
        #expect(out == Array("0123456789abcdef".utf8))
        for (ns, text) in [(0, "0"), (49, "0"), (50, "0.1"), (999, "1"), (1_234_567, "1234.6"), (.max, "18446744073709551.6")] as [(UInt64, String)] {
            var o: [UInt8] = []
            Reply.appendEventAck(id: .null, seq: Int.max, changed: false, digest: 0, latencyNs: ns, to: &o)
            let line = String(decoding: o, as: UTF8.self)
            #expect(line.hasSuffix(",\"latencyUs\":\(text)}\n"), "\(line)")
            #expect(line.contains("\"seq\":\(Int.max),"))
        }
    }

    private func command(_ json: String) throws(InputError) -> Command {
        let v = try! JSON.parse(Array(json.utf8))
        guard case .string(let name) = v["cmd"]! else { fatalError() }
        return try Command.decode(name: name, body: v)
    }

    @Test func decodesCommands() throws {
        #expect(try command(#"{"cmd":"hello","id":1}"#) == .hello)
        #expect(try command(#"{"cmd":"subscribe","topics":["layout","stats","layout"]}"#) == .subscribe([.layout, .stats]))
        #expect(try command(#"{"cmd":"unsubscribe"}"#) == .unsubscribe([]))
        #expect(try command(#"{"cmd":"mark","label":"fold"}"#) == .mark(label: "fold"))
        #expect(try command(#"{"cmd":"trace","action":"rotate"}"#) == .trace(.rotate))
        #expect(try command(#"{"cmd":"sync"}"#) == .sync)
    }

    @Test func commandErrorsNameTheFieldAndKeepTheId() {
        func error(_ json: String) -> InputError? {
            do { _ = try command(json); return nil } catch { return error }
        }
        #expect(error(#"{"cmd":"nope","id":4}"#)?.code == .unknownCommand)
        #expect(error(#"{"cmd":"nope","id":4}"#)?.id == .number(4))
        #expect(error(#"{"cmd":"subscribe","topics":["weather"]}"#)?.field == "topics[0]")
        #expect(error(#"{"cmd":"subscribe","topics":[]}"#)?.field == "topics")
        #expect(error(#"{"cmd":"subscribe"}"#)?.field == "topics")
        #expect(error(#"{"cmd":"mark"}"#)?.field == "label")
        #expect(error(#"{"cmd":"trace","action":"spin"}"#)?.field == "action")
        #expect(error(#"{"cmd":"hello","extra":1}"#)?.field == "extra")
    }
}
