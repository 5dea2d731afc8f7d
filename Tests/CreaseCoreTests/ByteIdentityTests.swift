import Testing
@testable import CreaseCore

/// Ids and member names are compared by their bytes: Swift's `String` equality made the
/// composed and decomposed forms of "café" one id and a duplicate JSON key.
@Suite struct ByteIdentityTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test func theTwoFormsAreOneSwiftStringButDifferentBytes() {
        #expect(Self.composed == Self.decomposed)
        #expect(!Self.composed.sameBytes(Self.decomposed))
        #expect(Self.composed.sameBytes("caf\u{E9}"))
    }

    @Test func membersWhoseNamesDifferInBytesAreNotDuplicates() throws {
        let two = try JSON.parse(Array(#"{"\#(Self.composed)":1,"\#(Self.decomposed)":2}"#.utf8))
        guard case .object(let members) = two else { Issue.record("not an object"); return }
        #expect(members.count == 2)
        #expect(throws: JSONError.self) { try JSON.parse(Array(#"{"\#(Self.composed)":1,"\#(Self.composed)":2}"#.utf8)) }
        // Past 16 members the check hashes: the same rule holds there.
        let many = (0..<20).map { #""k\#($0)":0"# }.joined(separator: ",")
        #expect(throws: JSONError.self) { try JSON.parse(Array("{\(many),\"k3\":1}".utf8)) }
        #expect((try? JSON.parse(Array(#"{\#(many),"\#(Self.composed)":1,"\#(Self.decomposed)":2}"#.utf8))) != nil)
    }

    @Test func anEventNamesATabByItsBytes() throws {
        let a = try app(#"{"name":"x","root":{"kind":"tabView","id":"tv","tabs":[{"id":"\#(Self.composed)","title":"A","symbol":"a","content":{"kind":"navigationStack","id":"s","screens":[{"id":"r","toolbar":[]}]}},{"id":"b","title":"B","symbol":"b","content":{"kind":"navigationStack","id":"s2","screens":[{"id":"r2","toolbar":[]}]}}]}}"#)
        var e = Engine(profile: .builtin, app: a)
        _ = try e.apply(.select(tab: "b"))
        let wrongForm = #expect(throws: InputError.self) { try e.apply(.select(tab: Self.decomposed)) }
        #expect(wrongForm?.code == .unknownId)
        #expect(try e.apply(.select(tab: Self.composed)))
    }

    @Test func aManifestMayNotHoldOneTextInTwoForms() throws {
        let e = #expect(throws: InputError.self) {
            try app(#"{"name":"x","root":{"kind":"navigationStack","id":"s","screens":[{"id":"\#(Self.composed)","toolbar":[{"id":"\#(Self.decomposed)","symbol":"a"}]}]}}"#)
        }
        #expect(e?.code == .duplicateId && e?.message.contains("different Unicode form") == true, "\(String(describing: e))")
    }
}
