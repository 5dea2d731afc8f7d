import CreaseCore
import Testing

/// Inputs that hardening found harmful, kept as regression tests of the pure
/// parsers (the same inputs reach a real daemon in HostileClientTests).
@Suite struct HostileInputRegressionTests {
    /// Keys `k0...k(n-1)` with `extra` appended, as one object.
    private func object(keys n: Int, extra: String = "") -> [UInt8] {
        Array(("{" + (0..<n).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + extra + "}").utf8)
    }

    @Test func duplicateMembersAreFoundInSmallAndLargeObjects() throws {
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 5, extra: #","k3":0"#)) }
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 15, extra: #","k14":0"#)) }
        // Past the point where the parser switches to hashing, early and late duplicates alike.
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 16, extra: #","k0":0"#)) }
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 40, extra: #","k2":0"#)) }
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 40, extra: #","k39":0"#)) }
        do throws(JSONError) {
            _ = try JSON.parse(object(keys: 40, extra: #","k20":0,"x":1"#))
            Issue.record("a duplicate went unnoticed")
        } catch {
            #expect(error.message == #"duplicate member "k20""#)
        }
        // Member order is kept.
        guard case .object(let members) = try JSON.parse(object(keys: 100)) else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.0) == (0..<100).map { "k\($0)" })
    }

    @Test func anObjectWithThirtyThousandKeysParsesInLinearTime() throws {
        // Compared pairwise this is 4.5e8 key comparisons (tens of seconds in a debug
        // build); hashed, a few milliseconds.
        let bytes = object(keys: 30_000)
        let t0 = monotonicSeconds()
        let value = try JSON.parse(bytes)
        let elapsed = monotonicSeconds() - t0
        #expect(value["k29999"] == .number(29_999))
        #expect(elapsed < 5, "\(elapsed) s")
    }

    @Test func aManifestWithThirtyThousandUnknownKeysIsRefusedQuickly() throws {
        let bytes = Array(#"{"name":"x","root":{"kind":"navigationStack","id":"s","screens":[{"id":"a","toolbar":[]}]},"#.utf8)
            + object(keys: 30_000).dropFirst()
        let t0 = monotonicSeconds()
        #expect(throws: InputError.self) { try App.decode(json: bytes) }
        #expect(monotonicSeconds() - t0 < 5)
    }
}
