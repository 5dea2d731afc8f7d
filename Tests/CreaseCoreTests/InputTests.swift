import Testing
@testable import CreaseCore

@Suite struct JSONTests {
    @Test("parses and writes canonically, keeping member order")
    func roundTrip() throws {
        let text = #"{"b":1,"a":[true,false,null,"x\"\n\u00e9\ud83d\ude00"],"c":{"z":-0.5,"y":1e3}}"#
        let v = try JSON.parse(Array(text.utf8))
        var w = JSONWriter()
        w.value(v)
        #expect(String(decoding: w.bytes, as: UTF8.self) == #"{"b":1,"a":[true,false,null,"x\"\né😀"],"c":{"z":-0.5,"y":1000}}"#)
    }

    @Test("rejects bad JSON with an offset", arguments: [
        "{", "[1,]", #"{"a":1,"a":2}"#, "1e400", "-", "01", #""\ud800""#, "[1] x", "\"\u{01}\"", "tru",
    ])
    func rejects(text: String) {
        #expect(throws: JSONError.self) { try JSON.parse(Array(text.utf8)) }
    }

    @Test("rejects invalid UTF-8 and nesting deeper than the limit")
    func hostile() {
        #expect(throws: JSONError.self) { try JSON.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONError.self) { try JSON.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }   // an encoded surrogate
        let deep = Array(String(repeating: "[", count: 100_000).utf8)
        #expect(throws: JSONError.self) { try JSON.parse(deep) }
    }

    @Test("numbers: the exact fast path agrees with the slow path")
    func numbers() throws {
        for text in ["0", "-0", "12.5", "0.1", "123456789012345678901234567890", "1e-7", "87.345678", "179.99999999999997"] {
            guard case .number(let n) = try JSON.parse(Array(text.utf8)) else { Issue.record("not a number"); continue }
            #expect(n == Double(text)!)
        }
    }

    @Test("digests are written as 16 lowercase hex digits, as String(radix: 16) pads them")
    func hexDigits() {
        var values: [UInt64] = [0, 1, 9, 10, 15, 16, 0xABCD_EF01_2345_6789, 0x9999_9999_AAAA_AAAA, .max, .max - 1, 1 << 63, 0xF0F0_0F0F_A5A5_5A5A]
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2000 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            values.append(x)
        }
        for v in values {
            let plain = String(v, radix: 16)
            #expect(Digest.hex(v) == String(repeating: "0", count: 16 - plain.count) + plain)
        }
    }

    @Test("version-1 traces' digest is standard FNV-1a 64")
    func fnv1a() {
        #expect(Digest.fnv1a([]) == 0xcbf2_9ce4_8422_2325)
        #expect(Digest.hex(Digest.fnv1a(Array("a".utf8))) == "af63dc4c8601ec8c")
    }

    @Test("crease64v is the layout digest of the body bytes; in every crease digest every byte, its place and the length count",
          arguments: [DigestAlgorithm.crease64v, .crease64x4, .crease64])
    func creaseDigests(_ algorithm: DigestAlgorithm) throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        try e.apply(.hinge(angle: 175))
        #expect(e.digestAlgorithm == .crease64v && e.digest == Digest.crease64v(e.body))
        // Flipping any one bit changes the digest; so does appending a zero byte (padding).
        var seen: Set<UInt64> = [algorithm.digest(e.body)]
        for i in stride(from: 0, to: e.body.count, by: 37) {
            for bit in [0, 3, 7] {
                var b = e.body
                b[i] ^= UInt8(1 << bit)
                seen.insert(algorithm.digest(b))
            }
        }
        #expect(seen.count == 1 + 3 * ((e.body.count + 36) / 37))
        for n in 0..<40 {
            let bytes = [UInt8](repeating: 0, count: n)
            #expect(algorithm.digest(bytes) != algorithm.digest(bytes + [0]), "\(n)")
        }
        // Blocks swapped (in the same lane or in two, in one stripe or in two) change it: the
        // lanes keep their order, and each stripe has keys of its own.
        let blocks = (0..<160).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for (x, y) in [(0, 1), (0, 4), (1, 6), (3, 9), (1, 5)] {
            var swapped = blocks
            for k in 0..<16 { swapped.swapAt(x * 16 + k, y * 16 + k) }
            #expect(algorithm.digest(swapped) != algorithm.digest(blocks), "blocks \(x) and \(y)")
        }
    }

    /// The 16-byte blocks of `bytes` as docs/layout.md reads them: zero-padded, each two
    /// little-endian words.
    static func blocksByDefinition(_ bytes: [UInt8]) -> [(a: UInt64, b: UInt64)] {
        var padded = bytes
        while padded.count % 16 != 0 { padded.append(0) }
        func word(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(padded[at + $1]) << (8 * UInt64($1)) } }
        return stride(from: 0, to: padded.count, by: 16).map { (word($0), word($0 + 8)) }
    }

    /// Pseudo-random byte strings of every length from 0 to 300 (every remainder of 64 and of 16).
    static func everyLength(seed: UInt64) -> [[UInt8]] {
        var state = seed
        var bytes: [UInt8] = []
        var out: [[UInt8]] = [bytes]
        for _ in 0..<300 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            out.append(bytes)
        }
        return out
    }

    /// crease64x4 reads four blocks per turn into four lanes, and the tail's blocks one by
    /// one; its definition deals each block to lane `j % 4`. At every length the two agree.
    @Test("crease64x4's loop equals its definition, block by block into four lanes, at every length")
    func crease64x4BlockByBlock() {
        for bytes in Self.everyLength(seed: 0x9e37_79b9_7f4a_7c15) {
            var lanes: [UInt64] = [0, 0, 0, 0]
            for (j, block) in Self.blocksByDefinition(bytes).enumerated() { lanes[j % 4] = Digest.step(lanes[j % 4], block.a, block.b) }
            var h: UInt64 = 0
            for lane in lanes { h = Digest.chain(h, lane) }
            #expect(Digest.crease64x4(bytes) == Digest.fmix64(h ^ UInt64(bytes.count)), "\(bytes.count) bytes")
        }
    }

    /// crease64v reads a stripe as four vectors of two words; its definition reads word by
    /// word. At every length the two agree.
    @Test("crease64v's vector loop equals its definition, word by word, at every length")
    func crease64vWordByWord() {
        let k1 = Digest.k1, k2 = Digest.k2, k3 = Digest.k3
        let keys: [UInt64] = [k1, k2, k3, k1 ^ k2, k2 ^ k3, k1 ^ k3, ~k1, ~k2]
        for bytes in Self.everyLength(seed: 0xd6e8_feb8_6659_fd93) {
            var padded = bytes
            while padded.count % 64 != 0 { padded.append(0) }
            var acc = [UInt64](repeating: 0, count: 8)
            for s in 0..<padded.count / 64 {
                for i in 0..<8 {
                    let d = (0..<8).reduce(UInt64(0)) { $0 | UInt64(padded[64 * s + 8 * i + $1]) << (8 * UInt64($1)) }
                    let x = d ^ (keys[i] &+ UInt64(s) &* k3)
                    acc[i] &+= (x & 0xffff_ffff) &* (x >> 32)
                    acc[i ^ 1] &+= d
                }
            }
            var g = UInt64(bytes.count) &* k3
            for j in 0..<4 { g = Digest.mum(g ^ acc[2 * j] ^ k1, acc[2 * j + 1] ^ k2) }
            #expect(Digest.crease64v(bytes) == Digest.fmix64(g), "\(bytes.count) bytes")
        }
    }

    /// crease64 reads four blocks per turn; its definition is one block per step. At every
    /// length the two agree.
    @Test("crease64's four-block loop equals its definition, one block per step, at every length")
    func crease64BlockByBlock() {
        for bytes in Self.everyLength(seed: 0x2545_f491_4f6c_dd1d) {
            let h = Self.blocksByDefinition(bytes).reduce(0) { Digest.step($0, $1.a, $1.b) }
            #expect(Digest.crease64(bytes) == Digest.fmix64(h ^ UInt64(bytes.count)), "\(bytes.count) bytes")
        }
    }
}

@Suite struct EventDecodingTests {
    func decode(_ text: String) throws(InputError) -> Inbound { try Wire.decode(line: Array(text.utf8)) }

    @Test("every event of the contract decodes", arguments: [
        #"{"event":"hinge","angle":90.5,"ts":123,"id":7}"#, #"{"event":"orientation","value":"landscapeLeft"}"#,
        #"{"event":"keyboard","visible":true,"height":300}"#, #"{"event":"keyboard","visible":false}"#,
        #"{"event":"pip","active":true}"#, #"{"event":"liveActivities","count":2}"#, #"{"event":"splitView","side":"left"}"#,
        #"{"event":"layoutDirection","value":"rtl"}"#, #"{"event":"reduceTransparency","enabled":true}"#,
        #"{"event":"select","tab":"plan"}"#, #"{"event":"push","screen":"x"}"#, #"{"event":"pop"}"#,
        #"{"event":"present","sheet":"s"}"#, #"{"event":"dismiss"}"#, #"{"event":"inspector","presented":true}"#,
    ])
    func decodes(text: String) throws {
        guard case .event(let env) = try decode(text) else { Issue.record("not an event"); return }
        let again = try decode(String(decoding: env.event.jsonBytes(), as: UTF8.self))
        guard case .event(let env2) = again else { Issue.record("re-encoding broke it"); return }
        #expect(env2.event == env.event)
    }

    @Test("bad events name the field", arguments: [
        (#"{"event":"hinge"}"#, "missingField", "angle"), (#"{"event":"hinge","angle":"90"}"#, "wrongType", "angle"),
        (#"{"event":"hinge","angle":226}"#, "outOfRange", "angle"), (#"{"event":"hinge","angle":-46}"#, "outOfRange", "angle"),
        (#"{"event":"fold"}"#, "unknownEvent", "event"), (#"{"event":"orientation","value":"sideways"}"#, "badValue", "value"),
        (#"{"event":"keyboard","visible":true,"heigth":3}"#, "unknownField", "heigth"), (#"{"event":"liveActivities","count":1.5}"#, "wrongType", "count"),
        (#"{"event":"liveActivities","count":-1}"#, "outOfRange", "count"), (#"{"event":"pip","active":1}"#, "wrongType", "active"),
    ])
    func errors(text: String, code: String, field: String) {
        do {
            _ = try decode(text)
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.code.rawValue == code && error.field == field, "\(error)")
        }
    }

    @Test("blank lines and comments are ignorable; commands are recognised; the id comes back on errors")
    func framing() throws {
        guard case .ignorable = try decode("   ") else { Issue.record("blank"); return }
        guard case .ignorable = try decode("# a note") else { Issue.record("comment"); return }
        guard case .command(let command, let id) = try decode(#"{"cmd":"hello","id":"a"}"#) else { Issue.record("command"); return }
        #expect(command == .hello && command.name == "hello" && id == .string("a"))
        guard case .invalidCommand(let name, let error) = try decode(#"{"cmd":"mark","id":7}"#) else { Issue.record("invalid command"); return }
        #expect(name == "mark" && error.code == .missingField && error.field == "label" && error.id == .number(7))
        do {
            _ = try decode(#"{"event":"hinge","angle":500,"id":42}"#)
            Issue.record("accepted a hinge angle of 500")
        } catch {
            #expect(error.id == .number(42))
        }
    }
}

@Suite struct ManifestTests {
    @Test("the built-in manifests decode", arguments: BuiltinApps.names)
    func builtins(name: String) throws {
        let a = try App.decode(json: Array(BuiltinApps.source(named: name)!.utf8))
        #expect(!a.screens.isEmpty)
    }

    @Test("bad manifests are rejected naming the field or id", arguments: [
        (#"{"name":"x","root":{"kind":"navigationStack","id":"a","screens":[{"id":"a","toolbar":[]}]}}"#, "duplicateId", "root.screens[0].id"),
        (#"{"name":"x","root":{"kind":"navigationStack","id":"a","screens":[{"id":"s","toolbar":[{"id":"i","title":"I","placement":"top"}]}]}}"#, "badValue", "root.screens[0].toolbar[0].placement"),
        (#"{"name":"x","root":{"kind":"tabView","id":"t","tabs":[],"selected":"q"}}"#, "badValue", "root.tabs"),
        (#"{"name":"x","root":{"kind":"tabView","id":"t","tabs":[{"id":"a","title":"A","content":{"kind":"navigationStack","id":"n","screens":[{"id":"s","toolbar":[]}]}}],"selected":"q"}}"#, "unknownId", "root.selected"),
        (#"{"name":"x","root":{"kind":"navigationStack","id":"a","screens":[{"id":"s","toolbar":[{"id":"system.back","symbol":"x"}]}]}}"#, "badValue", "root.screens[0].toolbar[0].id"),
        (#"{"name":"x","root":{"kind":"navigationStack","id":"a","screens":[{"id":"s"}]}}"#, "missingField", "root.screens[0].toolbar"),
        (#"{"name":"x","root":{"kind":"grid","id":"a"}}"#, "badValue", "root.kind"),
        (#"{"name":"x","root":{"kind":"navigationStack","id":"a","screens":[{"id":"s","toolbar":[{"id":"i","title":"I","priority":"urgent"}]}]}}"#, "badValue", "root.screens[0].toolbar[0].priority"),
    ])
    func rejects(text: String, code: String, field: String) {
        do {
            _ = try App.decode(json: Array(text.utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.code.rawValue == code && error.field == field, "\(error)")
        }
    }

    @Test("a profile loads partially over the built-in values and rejects unknown fields")
    func profile() throws {
        let p = try DeviceProfile.decode(json: Array(#"{"name":"rig 7","partialOpenThreshold":25}"#.utf8))
        #expect(p.name == "rig 7" && p.partialOpenThreshold == 25 && p.columnWidth == 84)
        #expect(throws: InputError.self) { try DeviceProfile.decode(json: Array(#"{"colWidth":80}"#.utf8)) }
        var w = JSONWriter()
        p.write(to: &w)
        #expect(try DeviceProfile.decode(json: w.bytes) == p)
    }
}
