import Testing
@testable import CreaseCore

/// Issue 31: the profile's assumed numbers fitted to what the device showed.
@Suite struct CalibrationTests {
    static let ms: UInt64 = 1_000_000

    /// A rig session recorded with the built-in profile, its device laying out with `device`:
    /// the hinge swept open past the first threshold and back, a look after every step.
    static func session(device: DeviceProfile) throws -> TraceFile {
        var d = RecordingDaemon()
        var phone = Engine(profile: device, app: builtin("tabs"))
        var t: UInt64 = 0
        for angle in Array(stride(from: 0.0, through: 45, by: 1)) + Array(stride(from: 44.0, through: 0, by: -1)) {
            t += 100 * ms
            try d.event(.hinge(angle: angle), at: t)
            try phone.apply(.hinge(angle: angle))
            d.observe(Observation(describing: phone.layout), at: t + 600 * ms)
            t += 600 * ms
        }
        return try d.file()
    }

    @Test("a device that opens at 26° rather than 20°: the threshold is found, within an interval the observations cannot split")
    func findsTheThreshold() throws {
        var device = DeviceProfile.builtin
        device.partialOpenThreshold = 26
        let trace = try Self.session(device: device)
        let r = ProfileCalibration.calibrate([.init(name: "session", file: trace)], start: .builtin, fields: ["partialOpenThreshold", "tabLength"])
        #expect(r.matchedBefore < r.observations && r.matchedAfter == r.observations, "\(r.matchedBefore) -> \(r.matchedAfter) of \(r.observations)")
        let threshold = try #require(r.fields.first { $0.field == "partialOpenThreshold" })
        #expect(threshold.interval.contains(26) && threshold.exercised && threshold.mismatchesResolved > 0)
        #expect(threshold.interval.upperBound - threshold.interval.lowerBound < 2, "the 1° sweep pins it to within a degree")
        #expect(r.unexplained.isEmpty)
        // A length the sweep never shows differently: reported as such and kept.
        let tab = try #require(r.fields.first { $0.field == "tabLength" })
        #expect(tab.fitted == DeviceProfile.builtin.tabLength)
    }

    /// Issue 37: before, a look that was only `stale` counted as explained, so a sweep too
    /// fast for the settle window "explained" the wrong threshold as well as the right one and
    /// the tie kept the start. Now matches come first: the right threshold wins, the counts say
    /// how each fit is explained, and the fit is the middle of its interval.
    @Test("a fast sweep: looks the start profile explains only as stale do not tie with the threshold that matches them")
    func staleLooksDoNotExplainAThreshold() throws {
        var device = DeviceProfile.builtin
        device.partialOpenThreshold = 26
        var d = RecordingDaemon()
        var phone = Engine(profile: device, app: builtin("tabs"))
        var t: UInt64 = 0
        for angle in stride(from: 0.0, through: 40, by: 1) {   // 200°/s, a look 1 ms after each step
            t += 5 * Self.ms
            try d.event(.hinge(angle: angle), at: t)
            try phone.apply(.hinge(angle: angle))
            d.observe(Observation(describing: phone.layout), at: t + Self.ms)
        }
        let trace = try d.file()
        #expect(d.results.contains { $0.verdict == .stale }, "the start profile sees some looks as stale")
        let r = ProfileCalibration.calibrate([.init(name: "fast", file: trace)], start: .builtin, fields: ["partialOpenThreshold"])
        let f = try #require(r.fields.first)
        #expect(r.before.staleOnly > 0 && r.after.matched == r.observations && r.after.staleOnly == 0, "\(r.before) -> \(r.after)")
        #expect(f.interval.contains(26) && !f.keptStart && f.exercised, "\(f)")
        #expect(f.fitted == f.interval.lowerBound + ((f.interval.upperBound - f.interval.lowerBound) / 2 / 0.5).rounded(.down) * 0.5)
        #expect(f.resolvedByMatch > 0 && !f.restsOnStale)
    }

    @Test("traces whose observations match already leave the profile as it is")
    func matchingTracesChangeNothing() throws {
        let trace = try Self.session(device: .builtin)
        let r = ProfileCalibration.calibrate([.init(name: "session", file: trace)], start: .builtin, fields: ["partialOpenThreshold", "hingeHysteresis", "itemSpacing"])
        #expect(r.matchedBefore == r.observations && r.matchedAfter == r.observations)
        #expect(r.profile == DeviceProfile.builtin)
        for f in r.fields { #expect(f.fitted == f.start && f.interval.contains(f.start), "\(f.field)") }
    }

    @Test("an observation no profile explains is reported as unexplained")
    func unexplainedObservations() throws {
        var d = RecordingDaemon()
        try d.event(.hinge(angle: 180), at: 100 * Self.ms)
        var moved = Observation(describing: d.engine.layout)
        moved.items![0].frame!.x += 300
        d.observe(moved, at: 800 * Self.ms)
        let r = ProfileCalibration.calibrate([.init(name: "bug", file: try d.file())], start: .builtin, fields: ["hingeHysteresis"])
        #expect(r.unexplained.count == 1 && r.unexplained[0].seq == 1 && !r.unexplained[0].differences.isEmpty)
        #expect(r.profile == DeviceProfile.builtin)
    }
}

@Suite struct OrientationCalibrationTests {
    /// A device whose orientation settles after 300 ms, recorded with the built-in 100 ms:
    /// the rig looked 200 ms after each turn (the built-in profile says turned, the device has not).
    @Test("the orientation filter's settle time is fitted from the IMU stream and the looks")
    func findsTheSettleTime() throws {
        var device = DeviceProfile.builtin
        device.orientationSettleMs = 300
        // No settle window: a look at a layout already replaced is a mismatch, not stale.
        var d = RecordingDaemon(settleMs: 0)
        var phone = Engine(profile: device, app: builtin("tabs"))
        let ms: UInt64 = 1_000_000
        var t: UInt64 = 0
        for turn in 0..<6 {
            let g = turn % 2 == 0 ? Gravity(x: -1, y: 0, z: -0.1) : Gravity(x: 0, y: -1, z: -0.1)
            for _ in 0..<50 {   // 10 ms apart: 500 ms of samples
                t += 10 * ms
                try d.event(.motion(g), at: t)
                try phone.apply(.motion(g), at: Int64(t))
                if t % (500 * ms) == 200 * ms { d.observe(Observation(describing: phone.layout), at: t) }
            }
            d.observe(Observation(describing: phone.layout), at: t)
        }
        let r = ProfileCalibration.calibrate([.init(name: "imu", file: try d.file())], start: .builtin, fields: ["orientationSettleMs"])
        let settle = try #require(r.fields.first)
        #expect(r.matchedAfter == r.observations && r.matchedBefore < r.observations, "\(r.matchedBefore) -> \(r.matchedAfter)")
        #expect(settle.interval.contains(300) && settle.exercised, "\(settle)")
    }
}
