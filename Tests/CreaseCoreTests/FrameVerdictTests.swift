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
            (#"{"cmd":"frame","kind":"layoutShift","t":5,"refSeq":0,"frame":9}"#, "score"),
            (#"{"cmd":"frame","kind":"layoutShift","t":5,"refSeq":0,"frame":9,"score":-0.1}"#, "score"),
            (#"{"cmd":"frame","kind":"layoutShift","t":5,"refSeq":0,"frame":9,"score":0.1,"fromT":6}"#, "fromT"),
            (#"{"cmd":"frame","kind":"flash","t":5,"refSeq":0,"frame":9,"score":0.1}"#, "score"),
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

    /// Issue 44: the device's layout-shift score, measured by the judge, is a record too: a
    /// figure beside the model's, a glitch only above `--layout-shift`, never a flagged frame.
    @Test func aLayoutShiftWindowIsAMeasurementNotAFlaggedFrame() throws {
        let c = try command(#"{"cmd":"frame","kind":"layoutShift","t":2000000000,"fromT":1500000000,"refSeq":3,"frame":120,"score":0.0625}"#)
        let verdict = FrameVerdict(kind: .layoutShift, t: 2_000_000_000, refSeq: 3, frame: 120, score: 0.0625, fromT: 1_500_000_000)
        #expect(c == .frame(verdict) && !verdict.kind.flags && FrameVerdict.Kind.flash.flags)
        var w = JSONWriter()
        verdict.write(to: &w)
        #expect(String(decoding: w.bytes, as: UTF8.self) == #"{"kind":"layoutShift","t":2000000000,"refSeq":3,"frame":120,"score":0.0625,"fromT":1500000000}"#)

        let header = TraceHeader(daemon: "test", started: "x", part: 0, reason: "start", config: .object([]), layouts: false,
                                 monotonicOrigin: nil, t: 0, engine: Engine(profile: .builtin, app: builtin("tabs")))
        let engine = Engine(profile: .builtin, app: builtin("tabs"))
        func glitches(_ threshold: Double?) -> [Glitch] {
            var options = GlitchOptions()
            options.layoutShift = threshold
            var run = RunGlitches(header: header, engine: engine, options: options)
            run.screen(verdict, seq: 3, t: 2_000_000_000)
            #expect(run.deviceShifts == [verdict])
            return run.glitches.filter { $0.kind == .layoutShift || $0.kind == .screen }
        }
        #expect(glitches(nil).isEmpty)
        #expect(glitches(0.1).isEmpty)
        let above = glitches(0.05)
        #expect(above.count == 1 && above[0].kind == .layoutShift && above[0].subject == "device" && above[0].firstT == 1_500_000_000)
    }
}
