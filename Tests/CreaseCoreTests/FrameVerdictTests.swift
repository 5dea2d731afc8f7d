import Testing
@testable import CreaseCore

/// The `frame` command and record (docs/frames.md): a frame judge's verdict on the device's
/// screen, as a rig sends it (its trace record round-trips in TraceFormatTests; the trace
/// tools read it back in clients/python/tests/test_frames.py).
@Suite struct FrameVerdictTests {
    private func command(_ text: String) throws(InputError) -> Command {
        let v = try! JSON.parse(Array(text.utf8))
        return try Command.decode(name: "frame", body: v)
    }

    @Test func aFrameCommandCarriesTheVerdictAndNeedsThePublishLevel() throws {
        let c = try command(#"{"cmd":"frame","id":4,"kind":"unexpectedMotion","t":1089231431,"refSeq":2,"frame":62,"region":{"x":319.8,"y":37.3,"w":53.3,"h":46.6}}"#)
        #expect(c == .frame(FrameVerdict(kind: .unexpectedMotion, t: 1_089_231_431, refSeq: 2, frame: 62,
                                          region: Rect(x: 319.8, y: 37.3, w: 53.3, h: 46.6))))
        #expect(c.name == "frame" && Command.names.contains("frame"))
    }

    @Test func aBadVerdictIsRefusedByTheFieldItGotWrong() {
        let cases: [(String, String)] = [
            (#"{"cmd":"frame","kind":"blink","t":1,"refSeq":0,"frame":0}"#, "kind"),
            (#"{"cmd":"frame","kind":"flash","t":-1,"refSeq":0,"frame":0}"#, "t"),
            (#"{"cmd":"frame","kind":"flash","t":1,"frame":0}"#, "refSeq"),
            (#"{"cmd":"frame","kind":"lateRelayout","t":1,"refSeq":0,"frame":0,"relayoutMs":-3}"#, "relayoutMs"),
            (#"{"cmd":"frame","kind":"flash","t":1,"refSeq":0,"frame":0,"region":{"x":1}}"#, "region.y"),
            (#"{"cmd":"frame","kind":"flash","t":1,"refSeq":0,"frame":0,"colour":"red"}"#, "colour"),
        ]
        for (text, field) in cases {
            do {
                _ = try command(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.field == field, "\(text): \(error)")
            }
        }
    }
}
