import Foundation
import Testing
@testable import CreaseCore

/// A gravity vector in g for a device turned `degrees` clockwise from upright portrait (as the
/// user sees it: 90 is device landscapeLeft, home side on the right) and tilted `tilt` degrees
/// back from upright, screen toward the sky.
func gravity(turned degrees: Double, tilt: Double = 0, magnitude: Double = 1) -> Gravity {
    let r = degrees * .pi / 180, t = tilt * .pi / 180
    let upright = cos(t) * magnitude
    return Gravity(x: -sin(r) * upright, y: -cos(r) * upright, z: -sin(t) * magnitude)
}

/// Issue 25, "Orientation from the IMU": the device-orientation filter, the settle time and
/// the rules that turn a device orientation into the interface orientation.
@Suite struct OrientationFilterTests {
    let filter = DeviceOrientationFilter(profile: .builtin)

    @Test("each of the six device orientations from its gravity vector (CoreMotion's frame: x right, y up, z out of the screen)")
    func sixOrientations() {
        #expect(filter.proposal(Gravity(x: 0, y: -1, z: 0), current: .faceUp) == .portrait)
        #expect(filter.proposal(Gravity(x: 0, y: 1, z: 0), current: .faceUp) == .portraitUpsideDown)
        #expect(filter.proposal(Gravity(x: -1, y: 0, z: 0), current: .faceUp) == .landscapeLeft)
        #expect(filter.proposal(Gravity(x: 1, y: 0, z: 0), current: .faceUp) == .landscapeRight)
        #expect(filter.proposal(Gravity(x: 0, y: 0, z: -1), current: .portrait) == .faceUp)
        #expect(filter.proposal(Gravity(x: 0, y: 0, z: 1), current: .portrait) == .faceDown)
    }

    @Test("\"with hysteresis between adjacent orientations\": past the 45° boundary by orientationHysteresis, not before")
    func adjacentNeedsTheHysteresis() {
        // 22.5° by default: from portrait, landscapeLeft is taken at 67.5° and not at 60°.
        #expect(filter.proposal(gravity(turned: 50), current: .portrait) == .portrait)
        #expect(filter.proposal(gravity(turned: 60), current: .portrait) == .portrait)
        #expect(filter.proposal(gravity(turned: 68), current: .portrait) == .landscapeLeft)
        // And back: from landscapeLeft, portrait only at 22.5°.
        #expect(filter.proposal(gravity(turned: 40), current: .landscapeLeft) == .landscapeLeft)
        #expect(filter.proposal(gravity(turned: 22), current: .landscapeLeft) == .portrait)
        // The opposite orientation is no neighbour: taken at once.
        #expect(filter.proposal(gravity(turned: 140), current: .portrait) == .portraitUpsideDown)
        // Without hysteresis the nearest axis wins.
        var p = DeviceProfile.builtin
        p.orientationHysteresis = 0
        #expect(DeviceOrientationFilter(profile: p).proposal(gravity(turned: 46), current: .portrait) == .landscapeLeft)
    }

    @Test("\"a tilt limit past which the device counts as flat\": face up at flatTilt, upright again below flatTilt − flatHysteresis")
    func flatWithItsOwnHysteresis() {
        #expect(filter.proposal(gravity(turned: 0, tilt: 74), current: .portrait) == .portrait)
        #expect(filter.proposal(gravity(turned: 0, tilt: 76), current: .portrait) == .faceUp)
        #expect(filter.proposal(gravity(turned: 0, tilt: 72), current: .faceUp) == .faceUp)
        #expect(filter.proposal(gravity(turned: 90, tilt: 69), current: .faceUp) == .landscapeLeft, "from flat, any upright orientation at once")
        #expect(filter.proposal(gravity(turned: 0, tilt: -80), current: .portrait) == .faceDown)
        #expect(filter.proposal(gravity(turned: 0, tilt: 80), current: .faceDown) == .faceUp)
    }

    @Test("a sample whose magnitude is off 1 g by more than gravityTolerance says nothing (a swing, a shake)")
    func magnitudeBounds() {
        #expect(filter.proposal(gravity(turned: 90, magnitude: 0.55), current: .portrait) == nil)
        #expect(filter.proposal(gravity(turned: 90, magnitude: 1.45), current: .portrait) == nil)
        #expect(filter.proposal(gravity(turned: 90, magnitude: 1.35), current: .portrait) == .landscapeLeft)
        #expect(filter.proposal(Gravity(x: 0, y: 0, z: 0), current: .portrait) == nil)
    }

    @Test("\"and a settle time\": a proposal becomes the device orientation at the first sample that finds it held orientationSettleMs")
    func settleTime() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        let ms: Int64 = 1_000_000
        let landscape = Event.motion(gravity(turned: 90))
        #expect(try !e.apply(landscape, at: 0))
        #expect(e.state.deviceOrientation == .portrait && e.state.pendingOrientation == .init(orientation: .landscapeLeft, since: 0))
        #expect(try !e.apply(landscape, at: 99 * ms))
        #expect(try e.apply(landscape, at: 100 * ms), "the interface turns: the layout changes")
        #expect(e.state.deviceOrientation == .landscapeLeft && e.state.orientation == .landscapeRight && e.state.pendingOrientation == nil)
        // A proposal that gives way starts again; one back to the current ends the wait.
        _ = try e.apply(.motion(gravity(turned: 0)), at: 200 * ms)
        _ = try e.apply(.motion(gravity(turned: 90)), at: 250 * ms)
        #expect(e.state.pendingOrientation == nil)
        _ = try e.apply(.motion(gravity(turned: 0)), at: 260 * ms)
        _ = try e.apply(.motion(gravity(turned: 180)), at: 300 * ms)
        _ = try e.apply(.motion(gravity(turned: 180)), at: 399 * ms)
        #expect(e.state.deviceOrientation == .landscapeLeft, "upside down held 99 ms from 300")
        _ = try e.apply(.motion(gravity(turned: 180)), at: 400 * ms)
        #expect(e.state.deviceOrientation == .portraitUpsideDown)
        #expect(e.state.orientation == .landscapeRight, "the outer display keeps what it has: the app does not support upside down")
        // A sample with no time is refused, and changes nothing.
        let seq = e.seq
        let refused = #expect(throws: InputError.self) { try e.apply(landscape) }
        #expect(refused?.field == "ts" && e.seq == seq)
    }
}

@Suite struct InterfaceOrientationRuleTests {
    func engine(_ manifest: String? = nil) throws -> Engine {
        var p = DeviceProfile.builtin
        p.orientationSettleMs = 0
        return Engine(profile: p, app: try manifest.map { try app($0) } ?? builtin("tabs"))
    }

    @Test("\"face up / face down keep the last one\"")
    func flatKeepsTheLast() throws {
        var e = try engine()
        _ = try e.apply(.deviceOrientation(.landscapeRight))
        #expect(e.state.orientation == .landscapeLeft)
        #expect(try !e.apply(.deviceOrientation(.faceUp)))
        #expect(e.state.orientation == .landscapeLeft && e.state.deviceOrientation == .faceUp)
        #expect(try !e.apply(.motion(Gravity(x: 0, y: 0, z: 1)), at: 5))
        #expect(e.state.deviceOrientation == .faceDown && e.state.orientation == .landscapeLeft)
    }

    @Test("\"rotationLock holds portrait\", and lets go when it is released")
    func lockHoldsPortrait() throws {
        var e = try engine()
        _ = try e.apply(.deviceOrientation(.landscapeLeft))
        #expect(try e.apply(.rotationLock(enabled: true)))
        #expect(e.state.orientation == .portrait && e.state.rotationLock)
        _ = try e.apply(.motion(gravity(turned: 270)), at: 1)
        #expect(e.state.orientation == .portrait && e.state.deviceOrientation == .landscapeRight)
        _ = try e.apply(.hinge(angle: 180))
        #expect(e.state.orientation == .portrait, "on the inner display too")
        #expect(try e.apply(.rotationLock(enabled: false)))
        #expect(e.state.orientation == .landscapeLeft)
        // The lock also takes back an interface the rig set directly.
        _ = try e.apply(.orientation(.landscapeRight))
        #expect(e.state.deviceOrientation == nil)
        _ = try e.apply(.rotationLock(enabled: true))
        #expect(e.state.orientation == .portrait && e.state.deviceOrientation == .landscapeLeft)
    }

    @Test("\"supportedOrientations is honoured on the outer display and ignored on the inner one\"")
    func supportedOnTheOuterOnly() throws {
        let landscapeOnly = #"{"name":"Game","supportedOrientations":["landscapeRight","landscapeLeft"],"root":{"kind":"navigationStack","id":"s","screens":[{"id":"a","toolbar":[{"id":"go","symbol":"play"}]}]}}"#
        var e = try engine(landscapeOnly)
        #expect(e.state.orientation == .portrait, "the default state, before any device signal")
        _ = try e.apply(.deviceOrientation(.portrait))
        #expect(e.state.orientation == .landscapeRight, "portrait unsupported: the first supported")
        _ = try e.apply(.deviceOrientation(.landscapeRight))
        #expect(e.state.orientation == .landscapeLeft)
        _ = try e.apply(.deviceOrientation(.portraitUpsideDown))
        #expect(e.state.orientation == .landscapeLeft, "unsupported: keeps what it has")
        _ = try e.apply(.hinge(angle: 180))
        #expect(e.state.orientation == .portraitUpsideDown, "the inner display ignores the app's list")
        _ = try e.apply(.hinge(angle: 0))
        #expect(e.state.orientation == .landscapeRight, "closed again: upside down is not granted, nor kept")
        // The lock cannot grant portrait to a landscape-only app on the outer display.
        _ = try e.apply(.rotationLock(enabled: true))
        #expect(e.state.orientation == .landscapeRight)
        // The manifest's list is checked.
        #expect(throws: InputError.self) { try app(#"{"name":"x","supportedOrientations":[],"root":{"kind":"navigationStack","id":"s","screens":[{"id":"a","toolbar":[]}]}}"#) }
        let twice = #expect(throws: InputError.self) { try app(#"{"name":"x","supportedOrientations":["portrait","portrait"],"root":{"kind":"navigationStack","id":"s","screens":[{"id":"a","toolbar":[]}]}}"#) }
        #expect(twice?.field == "supportedOrientations")
        #expect(throws: InputError.self) { try app(#"{"name":"x","supportedOrientations":["faceUp"],"root":{"kind":"navigationStack","id":"s","screens":[{"id":"a","toolbar":[]}]}}"#) }
    }

    @Test("\"convention interface still sets the interface orientation directly\": no rule moves it until the next device signal")
    func interfaceIsTheRigs() throws {
        var e = try engine()
        _ = try e.apply(.orientation(.portraitUpsideDown))
        #expect(e.state.deviceOrientation == nil && e.state.orientation == .portraitUpsideDown)
        _ = try e.apply(.hinge(angle: 180))
        _ = try e.apply(.hinge(angle: 0))
        #expect(e.state.orientation == .portraitUpsideDown, "unsupported on the outer display, but the rig said so")
        _ = try e.apply(.motion(gravity(turned: 180)), at: 1)
        // The first sample hands the orientation back to the device, and the outer display
        // grants neither upside down nor keeps it: the app's first supported orientation.
        #expect(e.state.deviceOrientation == .portraitUpsideDown && e.state.orientation == .portrait)
    }

    @Test("the state holds deviceOrientation, rotationLock and a pending proposal; a state written before them still loads")
    func stateRoundTrip() throws {
        var e = Engine(profile: .builtin, app: builtin("tabs"))
        _ = try e.apply(.rotationLock(enabled: true))
        _ = try e.apply(.motion(gravity(turned: 90)), at: 7_000)
        let json = String(decoding: e.state.jsonBytes(app: e.app), as: UTF8.self)
        #expect(json.contains(#""deviceOrientation":"portrait","rotationLock":true,"pendingOrientation":{"orientation":"landscapeLeft","since":7000}"#))
        let back = try DeviceState.decode(try JSON.parse(Array(json.utf8)), app: e.app)
        #expect(back == e.state)
        // Older headers: no device orientation (the rig set the interface), no lock.
        let old = json.replacingOccurrences(of: #""deviceOrientation":"portrait","rotationLock":true,"pendingOrientation":{"orientation":"landscapeLeft","since":7000},"#, with: "")
        let decoded = try DeviceState.decode(try JSON.parse(Array(old.utf8)), app: e.app)
        #expect(decoded.deviceOrientation == nil && !decoded.rotationLock && decoded.pendingOrientation == nil)
    }
}

@Suite struct MotionDecodingTests {
    func decode(_ line: String) throws(InputError) -> EventEnvelope {
        guard case .event(let e) = try Wire.decode(line: Array(line.utf8)) else { throw InputError(.badJSON, "not an event") }
        return e
    }

    @Test("motion and rotationLock decode; the fast path gives exactly what the full parser gives")
    func decodes() throws {
        for line in [#"{"event":"motion","gravity":[-0.02,-0.98,0.1]}"#, #"{"event":"motion","gravity":[1,0,-0],"ts":123,"id":"a"}"#,
                     #"{"event":"motion","gravity":[0.5e-1,-1E0,0],"id":7,"ts":-5}"#] {
            let fast = try #require(Array(line.utf8).withUnsafeBufferPointer { WireFastPath.motion($0) })
            let full = try Event.decode(try JSON.parse(Array(line.utf8)))
            #expect(fast == full && fast.ts == full.ts && fast.id == full.id, "\(line)")
        }
        #expect(try decode(#"{"event":"motion","gravity":[1,0,-0]}"#).event == .motion(Gravity(x: 1, y: 0, z: 0)))
        #expect(try decode(#"{"event":"rotationLock","enabled":true}"#).event == .rotationLock(enabled: true))
        #expect(String(decoding: Event.motion(Gravity(x: 0.5, y: -1, z: 0)).jsonBytes(), as: UTF8.self) == #"{"event":"motion","gravity":[0.5,-1,0]}"#)
    }

    @Test("bad gravity is refused naming the field", arguments: [
        #"{"event":"motion","gravity":[0,-1]}"#, #"{"event":"motion","gravity":[0,-1,"z"]}"#, #"{"event":"motion","gravity":[0,-17,0]}"#,
        #"{"event":"motion","gravity":{"x":0}}"#, #"{"event":"motion"}"#, #"{"event":"motion","gravity":[0,-1,0],"unit":"g"}"#,
    ])
    func refused(line: String) {
        let e = #expect(throws: InputError.self) { try decode(line) }
        #expect(e?.field == "gravity" || e?.field == "unit", "\(String(describing: e))")
    }
}

/// Property tests over random gravity streams (issue 25, "Done when").
@Suite struct OrientationPropertyTests {
    /// A stream a hand or a motor could make: turning and tilting at random, with sensor
    /// noise, now and then a jolt; sometimes the lock toggled or the hinge moved.
    struct GravityStream {
        var rng: SplitMix64
        var turned = 0.0, tilt = 0.0, t: Int64 = 0

        mutating func uniform() -> Double { Double(rng.next() >> 11) / Double(1 << 53) }

        mutating func next(lock: Bool) -> (Event, Int64) {
            t += Int64(1_000_000 + rng.next() % 9_000_000)
            switch rng.next() % 100 {
            case 0..<2 where lock: return (.rotationLock(enabled: rng.next() % 2 == 0), t)
            case 2..<5: return (.hinge(angle: Double(rng.next() % 181)), t)
            default:
                turned += (uniform() - 0.5) * 30
                tilt = max(-95, min(95, tilt + (uniform() - 0.5) * 20))
                let jolt = rng.next() % 50 == 0 ? 1.6 : 1.0
                var g = gravity(turned: turned, tilt: tilt, magnitude: jolt)
                g.x += (uniform() - 0.5) * 0.1; g.y += (uniform() - 0.5) * 0.1; g.z += (uniform() - 0.5) * 0.1
                return (.motion(g), t)
            }
        }
    }

    @Test("replay is identical, incremental equals the reference state machine and a layout from scratch", arguments: 0..<6)
    func replayIdentical(seed: Int) throws {
        let a = builtin(BuiltinApps.names[seed % BuiltinApps.names.count])
        var stream = GravityStream(rng: SplitMix64(seed: UInt64(seed) + 40))
        var events: [(Event, Int64)] = []
        for _ in 0..<3_000 { events.append(stream.next(lock: true)) }
        var first = Engine(profile: .builtin, app: a), second = Engine(profile: .builtin, app: a)
        var state = DeviceState(app: a), reference = a
        var digests: [UInt64] = []
        for (i, (event, t)) in events.enumerated() {
            _ = try first.apply(event, at: t)
            try StateMachine.apply(event, at: t, to: &state, app: &reference, profile: .builtin)
            #expect(first.state == state, "event \(i)")
            digests.append(first.digest)
            if i % 250 == 0 {
                #expect(Engine.fromScratch(profile: .builtin, app: a, state: first.state, seq: first.seq) == first.layoutJSON())
            }
        }
        for (i, (event, t)) in events.enumerated() {
            // As a trace stores it: the event's bytes read back.
            guard case .event(let envelope) = try Wire.decode(line: event.jsonBytes()) else { Issue.record("not an event"); return }
            _ = try second.apply(envelope.event, at: t)
            #expect(second.digest == digests[i])
        }
        // Resumed from the middle (a rotated trace's header), the rest replays the same.
        var resumed = Engine(profile: .builtin, app: a, state: try DeviceState.decode(try JSON.parse(Array(String(decoding: first.state.jsonBytes(app: a), as: UTF8.self).utf8)), app: a), seq: 0)
        var whole = first
        for _ in 0..<500 {
            let (event, t) = stream.next(lock: true)
            _ = try whole.apply(event, at: t)
            _ = try resumed.apply(event, at: t)
            #expect(resumed.digest == whole.digest && resumed.state == whole.state)
        }
    }

    @Test("the interface orientation is always one the outer display grants, and portrait under the lock", arguments: 0..<6)
    func alwaysGranted(seed: Int) throws {
        let manifests = [nil, #"["landscapeRight","landscapeLeft"]"#, #"["portrait"]"#, #"["portraitUpsideDown","landscapeLeft"]"#]
        let list = manifests[seed % manifests.count]
        let a = try list.map { try app(#"{"name":"x","supportedOrientations":\#($0),"root":{"kind":"navigationStack","id":"s","screens":[{"id":"a","toolbar":[{"id":"go","symbol":"play"}]}]}}"#) } ?? builtin("tabs")
        var e = Engine(profile: .builtin, app: a)
        _ = try e.apply(.deviceOrientation(.portrait))  // from the first signal on, the device decides
        var stream = GravityStream(rng: SplitMix64(seed: UInt64(seed) + 900))
        for i in 0..<4_000 {
            let (event, t) = stream.next(lock: true)
            _ = try e.apply(event, at: t)
            let o = e.state.orientation
            if e.state.display == .outer {
                #expect(a.supportedOrientations.contains(o), "event \(i): \(o) on the outer display")
                if e.state.rotationLock, a.supportedOrientations.contains(.portrait) { #expect(o == .portrait, "event \(i)") }
            } else if e.state.rotationLock {
                #expect(o == .portrait, "event \(i)")
            }
        }
    }

    @Test("a noisy vector near 45° never flaps: within the hysteresis band the orientation changes at most once", arguments: 0..<8)
    func noFlappingInTheBand(seed: Int) throws {
        var rng = SplitMix64(seed: UInt64(seed) &+ 77)
        var p = DeviceProfile.builtin
        p.orientationSettleMs = 0  // the hysteresis alone, with no settle time to hide behind
        var e = Engine(profile: p, app: builtin("tabs"))
        _ = try e.apply(.deviceOrientation(seed % 2 == 0 ? .portrait : .landscapeLeft))
        var changes = 0
        var last = e.state.deviceOrientation
        for i in 0..<5_000 {
            // 45° ± 20°: inside the 22.5° band on either side of the boundary.
            let angle = 45 + (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * 40
            let tilt = (Double(rng.next() >> 11) / Double(1 << 53) - 0.5) * 30
            _ = try e.apply(.motion(gravity(turned: angle, tilt: tilt)), at: Int64(i) * 1_000_000)
            if e.state.deviceOrientation != last { changes += 1; last = e.state.deviceOrientation }
        }
        #expect(changes == 0, "seed \(seed): \(changes) changes")
    }
}

@Suite struct TrigonometryTests {
    @Test("the core's own sine and cosine of degrees agree with libm to 1e-15 over several turns, exact at the quarter turns")
    func agreesWithLibm() {
        var worst = 0.0
        for d in stride(from: -720.0, through: 720, by: 0.25) {
            // libm on the angle within ±180°: 720·π/180 in doubles is not 4π, and libm's sine of it is not 0.
            let x = Foundation.remainder(d, 360) * .pi / 180
            worst = max(worst, abs(Trigonometry.sin(degrees: d) - Foundation.sin(x)), abs(Trigonometry.cos(degrees: d) - Foundation.cos(x)))
        }
        #expect(worst < 1e-15, "worst difference in degrees \(worst)")
        #expect(Trigonometry.sin(degrees: 90) == 1 && Trigonometry.cos(degrees: 0) == 1 && Trigonometry.sin(degrees: 180) == 0)
        #expect(Trigonometry.sin(degrees: .infinity).isNaN)
    }
}
