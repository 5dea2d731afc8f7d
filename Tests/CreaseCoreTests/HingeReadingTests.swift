import Testing
@testable import CreaseCore

/// Hinge readings as rigs have them: radians from UIHinge/XCUIHinge/CoreMotion, and an
/// encoder's overshoot past shut and flat. A flat device in radians (π) once read as 3.14°
/// (the model showed it closed), and 761 of 5,502 ticks of a real fold were refused.
@Suite struct HingeReadingTests {
    /// As the daemon reads a line (the hinge fast path first, then the full decoder).
    func decode(_ line: String) throws(InputError) -> Event {
        guard case .event(let e) = try Wire.decode(line: Array(line.utf8)) else { throw InputError(.badJSON, "not an event") }
        return e.event
    }

    @Test func radiansAreConverted() throws {
        guard case .hinge(let flat) = try decode(#"{"event":"hinge","angle":3.141592653589793,"unit":"rad"}"#) else { Issue.record("not a hinge"); return }
        #expect(abs(flat - 180) < 1e-9)
        guard case .hinge(let half) = try decode(#"{"event":"hinge","angle":1.5707963267948966,"unit":"rad"}"#) else { return }
        #expect(abs(half - 90) < 1e-9)
        guard case .hinge(let deg) = try decode(#"{"event":"hinge","angle":90,"unit":"deg"}"#) else { return }
        #expect(deg == 90)
        let bad = #expect(throws: InputError.self) { try decode(#"{"event":"hinge","angle":1,"unit":"grad"}"#) }
        #expect(bad?.field == "unit")
        // π rad rounded to 4 places is 180.0004°: an overshoot within the tolerance, so flat.
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        _ = try e.apply(try decode(#"{"event":"hinge","angle":3.1416,"unit":"rad"}"#))
        #expect(e.layout.device.pose == .fullyOpen && e.state.hingeAngle == 180)
    }

    @Test func anOvershootWithinTheToleranceIsClampedPastItRefused() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        #expect(try e.apply(.hinge(angle: 184.9)))
        #expect(e.state.hingeAngle == 180 && e.seq == 1)
        _ = try e.apply(.hinge(angle: -4.2))
        #expect(e.state.hingeAngle == 0 && e.layout.device.pose == .closed)
        let past = #expect(throws: InputError.self) { try e.apply(.hinge(angle: 185.5)) }
        #expect(past?.code == .outOfRange && past?.field == "angle")
        #expect(past?.message.contains("between -5 and 185 degrees") == true, "\(String(describing: past))")
        #expect(e.seq == 2, "a refused reading changes nothing")
        // A profile with no tolerance refuses any overshoot; the state machine's path agrees.
        var strict = DeviceProfile.builtin
        strict.hingeTolerance = 0
        var s = Engine(profile: strict, app: builtin("tabs"))
        #expect(throws: InputError.self) { try s.apply(.hinge(angle: 180.1)) }
        var state = DeviceState(app: builtin("tabs"))
        var app = builtin("tabs")
        try StateMachine.apply(.hinge(angle: -1), at: nil, to: &state, app: &app, profile: .builtin)
        #expect(state.hingeAngle == 0)
    }

    /// The trace records the reading as sent; replay clamps it the same way.
    @Test func aRecordedOvershootReplaysToTheSameDigest() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        let readings = [-1.5, 40, 183.25, 90, 181]
        var digests: [UInt64] = []
        for r in readings { _ = try e.apply(.hinge(angle: r)); digests.append(e.digest) }
        // The event as a trace records it keeps the reading, not the clamped angle.
        #expect(String(decoding: Event.hinge(angle: -1.5).jsonBytes(), as: UTF8.self).contains("-1.5"))
        var again = Engine(profile: .builtin, app: builtin("tabs"))
        for r in readings { _ = try again.apply(try decode(String(decoding: Event.hinge(angle: r).jsonBytes(), as: UTF8.self))) }
        #expect(again.digest == digests.last)
    }
}
