/// SplitMix64 (Steele, Lea, Flood 2014): a tiny seeded generator whose output depends
/// on the seed alone, never on the process or the machine.
public struct SplitMix64: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1), from the top 53 bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// Roughly bell-shaped in [-1, 1]: the mean of three uniforms, as an encoder's noise looks.
    public mutating func jitter() -> Double { (unit() + unit() + unit()) * (2.0 / 3.0) - 1 }
}

/// An event and when, in nanoseconds from the stream's start, a rig would send it.
public struct GeneratedEvent: Sendable, Equatable {
    public var offsetNs: UInt64
    public var event: Event
}

/// A moment a rig looks at the device and sends `observe` (only when streaming into a
/// daemon: what it sees depends on the daemon's layouts). It comes after the first
/// `afterEvents` events, not before `offsetNs`.
public struct GeneratedLook: Sendable, Equatable {
    public enum Sight: Sendable, Equatable {
        /// The device shows the current layout (a match).
        case current
        /// Right after a change, the device still shows the layout the rig saw last (stale).
        case previous
        /// The current layout with one control 30 pt too low (a mismatch).
        case misplaced
    }

    public var offsetNs: UInt64
    public var afterEvents: Int
    public var sight: Sight
}

/// The rig-like streams of `crease gen`. Every scenario but `app-replace`'s second half
/// drives the built-in `tabs` app (Trailhead); `app-replace` switches to the `split` app.
public enum GenScenario: String, Sendable, CaseIterable {
    case unfold, flap, outerLandscape = "outer-landscape", splitView = "split-view", rtl, sheet, tabs,
         appReplace = "app-replace", rig, observe, imu

    public var summary: String {
        switch self {
        case .unfold: "a slow unfold, dwelling with encoder noise around both pose thresholds"
        case .flap: "the hinge flapped open and shut at 1 kHz, fast"
        case .outerLandscape: "closed, outer display in landscape, keyboard up, three Live Activities arriving"
        case .splitView: "open flat in landscape, Split View on the left, then the right, then none"
        case .rtl: "right-to-left through an unfold and a rotation"
        case .sheet: "a trailing sheet presented on a partly folded device while the hinge moves"
        case .tabs: "switching between a browse screen and a task screen, folded and open"
        case .appReplace: "the app replaced mid-run (tabs, then split), then the new app's inspector and keyboard"
        case .rig: "a long hinge-heavy rig session with the odd rotation, keyboard and Live Activity storm"
        case .observe: "a rig that looks after each step (--to only): matches, one stale look right after a rotation, one control out of place"
        case .imu: "a noisy fold with the IMU streaming beside the encoder: turned to landscape, wavering near 45°, laid face up, turned under the rotation lock, folded shut"
        }
    }
}

public struct EventGenerator {
    /// Events and looks not yet handed to the sink (with no sink: all of them).
    public private(set) var events: [GeneratedEvent] = []
    public private(set) var looks: [GeneratedLook] = []
    /// Where a streamed run's events go, `chunk` at a time, so an hour at 1 kHz never
    /// waits in memory whole.
    private var sink: (([GeneratedEvent], [GeneratedLook]) -> Void)?
    private var chunk = Int.max
    /// Events handed to the sink so far: a look counts events from the start of the stream.
    private var emitted = 0
    private var rng: SplitMix64
    private var clockNs: UInt64 = 0
    private let periodNs: UInt64
    /// Peak encoder noise in degrees.
    private let noise: Double
    private var angle = 0.0
    /// The IMU scenario's device: turned clockwise from portrait and tilted back, in degrees.
    private var turned = 0.0
    private var tilt = 0.0

    public init(seed: UInt64, rateHz: Double, noise: Double = 1.5) {
        rng = SplitMix64(seed: seed)
        periodNs = UInt64((1e9 / max(1, min(rateHz, 100_000))).rounded())
        self.noise = noise
    }

    /// A scenario's events; `seconds` scales the hinge-driven scenarios (`unfold`, `flap`, `rig`, `imu`).
    public static func generate(_ scenario: GenScenario, seed: UInt64, rateHz: Double = 1000, seconds: Double = 2) -> [GeneratedEvent] {
        var g = EventGenerator(seed: seed, rateHz: rateHz)
        g.run(scenario, seconds: max(0.1, seconds))
        return g.events
    }

    /// A scenario's events and the looks of the rig that sends them (only `observe` looks).
    public static func generateWithLooks(_ scenario: GenScenario, seed: UInt64, rateHz: Double = 1000,
                                         seconds: Double = 2) -> (events: [GeneratedEvent], looks: [GeneratedLook]) {
        var g = EventGenerator(seed: seed, rateHz: rateHz)
        g.run(scenario, seconds: max(0.1, seconds))
        return (g.events, g.looks)
    }

    /// A scenario's events and looks, handed to `sink` a chunk at a time and in order (a
    /// look's `afterEvents` counts from the start of the stream): the same events as
    /// `generateWithLooks`, in bounded memory.
    public static func stream(_ scenario: GenScenario, seed: UInt64, rateHz: Double = 1000, seconds: Double = 2, chunk: Int = 1 << 14,
                              _ sink: @escaping ([GeneratedEvent], [GeneratedLook]) -> Void) {
        var g = EventGenerator(seed: seed, rateHz: rateHz)
        g.sink = sink
        g.chunk = max(1, chunk)
        g.run(scenario, seconds: max(0.1, seconds))
        g.flush()
    }

    private mutating func flush() {
        guard let sink, !events.isEmpty || !looks.isEmpty else { return }
        sink(events, looks)
        emitted += events.count
        events.removeAll(keepingCapacity: true)
        looks.removeAll(keepingCapacity: true)
    }

    private mutating func run(_ scenario: GenScenario, seconds: Double) {
        let ms = seconds * 1000
        switch scenario {
        case .unfold:
            sweep(to: 14, ms: ms * 0.15)
            dwell(around: 20, ms: ms * 0.2)       // the closed / partly-open threshold
            sweep(to: 150, ms: ms * 0.2)
            dwell(around: 160, ms: ms * 0.25)     // the partly-open / fully-open threshold
            sweep(to: 180, ms: ms * 0.1)
            hold(ms: ms * 0.1)
        case .flap:
            let cycles = max(1, Int(seconds * 4))
            for _ in 0..<cycles {
                sweep(to: 180, ms: 110)
                sweep(to: 0, ms: 110)
                hold(ms: 30)
            }
        case .outerLandscape:
            hold(ms: 100)
            send(.orientation(.landscapeLeft), thenWait: 150)
            send(.keyboard(visible: true, height: nil), thenWait: 150)
            for n in 1...3 { send(.liveActivities(count: n), thenWait: 120) }
            hold(ms: 200)                          // the closed device still reports the hinge
            send(.keyboard(visible: false, height: nil), thenWait: 100)
            send(.liveActivities(count: 0), thenWait: 100)
            send(.orientation(.portrait), thenWait: 50)
        case .splitView:
            sweep(to: 180, ms: 300)
            send(.orientation(.landscapeLeft), thenWait: 150)
            for side in [SplitSide.left, .right, .left, .none] {
                send(.splitView(side), thenWait: 150)
                hold(ms: 60)
            }
            send(.orientation(.portrait), thenWait: 50)
        case .rtl:
            send(.layoutDirection(.rtl), thenWait: 100)
            sweep(to: 95, ms: 250)
            hold(ms: 100)
            sweep(to: 180, ms: 150)
            send(.orientation(.landscapeRight), thenWait: 150)
            send(.keyboard(visible: true, height: 320), thenWait: 150)
            send(.keyboard(visible: false, height: nil), thenWait: 100)
            send(.orientation(.portrait), thenWait: 100)
            sweep(to: 0, ms: 250)
            send(.layoutDirection(.ltr), thenWait: 50)
        case .sheet:
            sweep(to: 90, ms: 250)
            send(.present(sheet: "trailInfo"), thenWait: 100)
            dwell(around: 90, ms: 150)
            sweep(to: 150, ms: 150)
            sweep(to: 70, ms: 150)
            send(.orientation(.landscapeLeft), thenWait: 150)
            send(.dismiss, thenWait: 100)
            send(.present(sheet: "filters"), thenWait: 150)
            send(.dismiss, thenWait: 50)
            send(.orientation(.portrait), thenWait: 50)
        case .tabs:
            send(.select(tab: "plan"), thenWait: 150)
            send(.keyboard(visible: true, height: nil), thenWait: 150)
            send(.keyboard(visible: false, height: nil), thenWait: 100)
            send(.select(tab: "browse"), thenWait: 150)
            send(.push(screen: "trailDetail"), thenWait: 150)
            sweep(to: 180, ms: 250)
            send(.select(tab: "plan"), thenWait: 150)
            send(.select(tab: "browse"), thenWait: 150)
            send(.pop, thenWait: 100)
            send(.select(tab: "saved"), thenWait: 100)
            send(.select(tab: "browse"), thenWait: 50)
        case .appReplace:
            sweep(to: 180, ms: 200)
            send(.select(tab: "plan"), thenWait: 150)
            if let split = BuiltinApps.app(named: "split") { send(.app(split), thenWait: 150) }
            send(.orientation(.landscapeLeft), thenWait: 150)
            send(.inspector(presented: true), thenWait: 150)
            send(.keyboard(visible: true, height: nil), thenWait: 150)
            send(.keyboard(visible: false, height: nil), thenWait: 100)
            send(.inspector(presented: false), thenWait: 100)
            sweep(to: 0, ms: 200)
        case .rig:
            var remaining = ms
            var step = 0
            while remaining > 0 {
                sweep(to: 10 + rng.unit() * 170, ms: 150 + rng.unit() * 250)
                hold(ms: 50)
                switch step % 5 {
                case 0: send(.orientation(rng.unit() < 0.5 ? .landscapeLeft : .portrait), thenWait: 20)
                case 1: send(.keyboard(visible: true, height: nil), thenWait: 20); send(.keyboard(visible: false, height: nil), thenWait: 20)
                case 2:
                    // A storm: five updates at one instant, which the daemon coalesces into one batch
                    // (published, and so recorded, when it ends on another count than it began).
                    for n in [1, 2, 3, 4, 2 - (step / 5) % 3] { send(.liveActivities(count: n), thenWait: 0) }
                    clockNs += 20_000_000
                default: break
                }
                step += 1
                remaining = ms - Double(clockNs) / 1e6
            }
        case .imu:
            // The IMU samples at the encoder's rate, each tick's two readings sent together.
            move(hinge: 180, turned: 0, tilt: 10, ms: ms * 0.2)          // unfolded, held up
            move(hinge: 180, turned: 90, tilt: 10, ms: ms * 0.1)         // to landscape
            move(hinge: 180, turned: 90, tilt: 10, ms: ms * 0.05)
            move(hinge: 180, turned: 50, tilt: 10, ms: ms * 0.05)        // back toward 45°, and
            waver(ms: ms * 0.15)                                          // around it: no flapping
            move(hinge: 180, turned: 90, tilt: 85, ms: ms * 0.1)         // laid face up
            move(hinge: 180, turned: 90, tilt: 85, ms: ms * 0.05)
            move(hinge: 180, turned: 0, tilt: 10, ms: ms * 0.1)          // lifted, portrait
            send(.rotationLock(enabled: true), thenWait: 0)
            move(hinge: 180, turned: 90, tilt: 10, ms: ms * 0.1)         // turned, locked: stays portrait
            move(hinge: 0, turned: 90, tilt: 10, ms: ms * 0.05)          // folded shut
            send(.rotationLock(enabled: false), thenWait: 0)
            move(hinge: 0, turned: 90, tilt: 10, ms: ms * 0.05)          // the outer display turns
        case .observe:
            sweep(to: 180, ms: 300)
            look(.current)
            send(.orientation(.landscapeLeft), thenWait: 0)
            look(.previous)                        // before the device has turned
            clockNs += 150_000_000
            look(.current)
            send(.keyboard(visible: true, height: nil), thenWait: 150)
            look(.current)
            look(.misplaced)
            send(.keyboard(visible: false, height: nil), thenWait: 100)
            send(.orientation(.portrait), thenWait: 150)
            look(.current)
            sweep(to: 0, ms: 250)
            hold(ms: 100)
            look(.current)
        }
    }

    private mutating func look(_ sight: GeneratedLook.Sight) {
        looks.append(GeneratedLook(offsetNs: clockNs, afterEvents: emitted + events.count, sight: sight))
    }

    private mutating func send(_ event: Event, thenWait ms: Double) {
        events.append(GeneratedEvent(offsetNs: clockNs, event: event))
        clockNs += UInt64(ms * 1e6)
        if events.count >= chunk { flush() }
    }

    /// One encoder sample: the true angle plus noise, clamped and quantised to 0.01°.
    private mutating func sample(_ trueAngle: Double) {
        let reading = min(180, max(0, trueAngle + noise * rng.jitter()))
        events.append(GeneratedEvent(offsetNs: clockNs, event: .hinge(angle: (reading * 100).rounded() / 100)))
        clockNs += periodNs
        if events.count >= chunk { flush() }
    }

    /// Hinge, turn and tilt moved together in a straight line, one encoder and one IMU
    /// sample per tick (gravity with ±0.03 g of noise, quantised to 0.001 g).
    private mutating func move(hinge: Double, turned toTurn: Double, tilt toTilt: Double, ms: Double) {
        let n = samples(ms: ms)
        let (fromHinge, fromTurn, fromTilt) = (angle, turned, tilt)
        for i in 1...n {
            let f = Double(i) / Double(n)
            imuTick(hinge: fromHinge + (hinge - fromHinge) * f, turned: fromTurn + (toTurn - fromTurn) * f, tilt: fromTilt + (toTilt - fromTilt) * f)
        }
        angle = hinge
        turned = toTurn
        tilt = toTilt
    }

    /// The device held near 45° from portrait, wandering ±12° (inside the orientation
    /// filter's ±22.5° band by default) while the IMU's noise adds its own.
    private mutating func waver(ms: Double) {
        let n = samples(ms: ms)
        for i in 0..<n {
            let phase = Double(i) / Double(n) * 5
            let wave = phase - phase.rounded(.down)
            let tri = wave < 0.5 ? wave * 4 - 1 : 3 - wave * 4
            imuTick(hinge: angle, turned: 45 + 12 * tri, tilt: tilt)
        }
        turned = 45
    }

    private mutating func imuTick(hinge: Double, turned: Double, tilt: Double) {
        let reading = min(180, max(0, hinge + noise * rng.jitter()))
        events.append(GeneratedEvent(offsetNs: clockNs, event: .hinge(angle: (reading * 100).rounded() / 100)))
        if events.count >= chunk { flush() }
        let (sr, cr) = (Trigonometry.sin(degrees: turned), Trigonometry.cos(degrees: turned))
        let (st, ct) = (Trigonometry.sin(degrees: tilt), Trigonometry.cos(degrees: tilt))
        func g(_ v: Double) -> Double {
            let q = ((v + 0.03 * rng.jitter()) * 1000).rounded() / 1000
            return q == 0 ? 0 : q
        }
        // CoreMotion's frame: x right, y up, z out of the screen; tilted back, gravity goes into the screen.
        events.append(GeneratedEvent(offsetNs: clockNs, event: .motion(Gravity(x: g(-sr * ct), y: g(-cr * ct), z: g(-st)))))
        clockNs += periodNs
        if events.count >= chunk { flush() }
    }

    private mutating func samples(ms: Double) -> Int { max(1, Int(ms * 1e6 / Double(periodNs))) }

    private mutating func sweep(to target: Double, ms: Double) {
        let n = samples(ms: ms)
        let from = angle
        for i in 1...n { sample(from + (target - from) * Double(i) / Double(n)) }
        angle = target
    }

    private mutating func hold(ms: Double) {
        for _ in 0..<samples(ms: ms) { sample(angle) }
    }

    /// Wanders slowly back and forth across `center`, ±1.2°: with the encoder's noise the
    /// readings cross a threshold many times yet stay inside its hysteresis band (±3° by default).
    private mutating func dwell(around center: Double, ms: Double) {
        let n = samples(ms: ms)
        for i in 0..<n {
            let phase = Double(i) / Double(n) * 6
            let wave = phase - phase.rounded(.down)
            let tri = wave < 0.5 ? wave * 4 - 1 : 3 - wave * 4
            sample(center + 1.2 * tri)
        }
        angle = center
    }
}
