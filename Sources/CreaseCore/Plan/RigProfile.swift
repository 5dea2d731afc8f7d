/// A rig file (`RIG.json`, docs/rig-file.md): what one rig can do to a phone and the
/// seconds each move and each look costs there. The tour planner reads the moves and
/// costs; the Python rig reads the same file, and its `device` object (displays, the
/// app's accessibility identifiers, tolerances), which the planner leaves alone.
///
/// A move the rig cannot make is `null`: the tour never uses it, and a class only it
/// reaches is listed as unreachable, naming it.
public struct RigProfile: Sendable, Equatable {
    /// The moves other than the hinge, one cost each. An app action is one tap.
    public enum Move: String, Sendable, CaseIterable {
        case orientation, keyboard, pip, liveActivities, splitView, layoutDirection, reduceTransparency
        case select, push, pop, present, dismiss, inspector
    }

    public enum Look: String, Sendable, CaseIterable {
        case pageSource = "page-source", screenshot
    }

    /// What the tour counts as one observable class.
    public enum ObserveMode: String, Sendable, CaseIterable {
        /// Every distinct layout digest is its own class.
        case digest
        /// Layouts a page source cannot tell apart are one class (`PageSourceView`).
        case pageSource = "page-source"
    }

    public struct HingeCost: Sendable, Equatable {
        public var fixed: Double
        public var perDegree: Double
        /// Degrees a fold may land off the angle asked for (`moves.hinge.tolerance`, 1 when
        /// left out): what the rig reads back is accepted within it, and a minimized repro
        /// keeps its hinge angles at least this far from the thresholds that decide them.
        public var tolerance: Double

        public static let defaultTolerance = 1.0

        public init(fixed: Double, perDegree: Double, tolerance: Double = HingeCost.defaultTolerance) {
            self.fixed = fixed
            self.perDegree = perDegree
            self.tolerance = tolerance
        }
    }

    /// A tilt stage (`moves.motion`): it turns the phone out of upright by some degrees while
    /// the phone's IMU samples reach creased as `motion` events, so the orientation filter is
    /// fed as on a hand-held phone. Only the probes use it (`MotionProbes`).
    public struct TiltCost: Sendable, Equatable {
        public var fixed: Double
        public var perDegree: Double

        public init(fixed: Double, perDegree: Double) {
            self.fixed = fixed
            self.perDegree = perDegree
        }

        public func seconds(degrees: Double) -> Double { fixed + perDegree * abs(degrees) }
    }

    public var name: String
    /// nil: the rig has no way to move the hinge.
    public var hinge: HingeCost?
    /// nil: the rig has no tilt stage feeding `motion` (the default: absent from a rig file is null).
    public var motion: TiltCost?
    /// Seconds per move, by `Move` (an array in `Move.allCases` order, not a dictionary).
    public var moves: [Double?]
    /// The device orientations the rig turns the phone to (never an interface orientation).
    public var orientations: [DeviceOrientation]
    /// Seconds per look, by `Look`.
    public var looks: [Double?]
    /// Seconds to bring the phone back to the start state; nil when the rig cannot.
    public var reset: Double?
    /// The class the rig's tours count by default.
    public var observe: ObserveMode
    /// What only the device side reads (displays, accessibility ids, tolerances), kept as given.
    public var device: JSONValue?

    public init(name: String, hinge: HingeCost?, moves: [Double?], orientations: [DeviceOrientation], looks: [Double?],
                reset: Double?, observe: ObserveMode, device: JSONValue? = nil, motion: TiltCost? = nil) {
        precondition(moves.count == Move.allCases.count && looks.count == Look.allCases.count)
        self.name = name
        self.hinge = hinge
        self.motion = motion
        self.moves = moves
        self.orientations = orientations
        self.looks = looks
        self.reset = reset
        self.observe = observe
        self.device = device
    }

    public func cost(_ move: Move) -> Double? { moves[Move.allCases.firstIndex(of: move)!] }
    public func cost(_ look: Look) -> Double? { looks[Look.allCases.firstIndex(of: look)!] }

    /// The rig that applies without a rig file: every move the Appium adapter can make at
    /// 1 s, the four upright orientations, a page-source look 1.5 s, a screenshot 2 s, a
    /// reset 25 s; classes by digest.
    public static let standard = RigProfile(
        name: "the default rig (every Appium move 1 s, a look 1.5 s)", hinge: HingeCost(fixed: 1, perDegree: 0),
        moves: Move.allCases.map { _ in 1.0 }, orientations: [.portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight],
        looks: [1.5, 2], reset: 25, observe: .digest)

    /// The look a tour takes at an observe step: the page source, else a screenshot.
    public var lookCost: Double? { cost(.pageSource) ?? cost(.screenshot) }

    /// The move an event is on this rig, and so whether and at what cost the rig makes it: its
    /// kind's, by name (`EventKind`). The hinge has a move of its own (`hinge`, by the degree);
    /// an interface orientation set directly, a motion sample, the lock and an app have none a
    /// rig can make.
    public static func move(of event: Event) -> Move? {
        switch event {
        case .hinge, .orientation, .motion, .rotationLock, .app: nil
        default: Move(rawValue: event.kind.rawValue)
        }
    }

    /// Seconds the rig takes to make `event` from `state`; nil when it cannot make it (an
    /// interface orientation set directly is never a rig move).
    public func cost(of event: Event, from state: DeviceState) -> Double? {
        if case .hinge(let angle) = event {
            guard let hinge else { return nil }
            return hinge.fixed + hinge.perDegree * abs(angle - state.hingeAngle)
        }
        if case .deviceOrientation(let o) = event, !orientations.contains(o) { return nil }
        guard let move = RigProfile.move(of: event) else { return nil }
        return cost(move)
    }
}

extension RigProfile {
    /// The largest cost a rig file may give one move (an hour).
    public static let maxSeconds = 3_600.0

    public static func decode(json bytes: [UInt8]) throws(InputError) -> RigProfile {
        let value: JSONValue
        do { value = try JSON.parse(bytes) } catch {
            throw InputError(.badJSON, "rig file is not valid JSON: \(error.message) at byte \(error.offset)")
        }
        return try decode(value)
    }

    /// Every move and look is required, as seconds or `null` (the rig cannot), so a rig
    /// file says what its rig does instead of leaving it to a default; unknown fields are errors.
    public static func decode(_ value: JSONValue) throws(InputError) -> RigProfile {
        let r = try FieldReader(value, path: "", what: "rig file")
        try r.rejectUnknown(allowed: ["crease", "version", "name", "observe", "moves", "orientations", "observations", "reset", "device"])
        guard try r.string("crease") == "rig" else {
            throw InputError(.badValue, "rig file: field \"crease\" must be \"rig\"", field: "crease")
        }
        let version = try r.integer("version", min: 0, max: Int(Int32.max))
        guard version == 1 else { throw InputError(.badValue, "rig file of version \(version); this build reads version 1", field: "version") }
        let name = try r.string("name")
        let observe = try r.optionalEnumeration("observe", ObserveMode.self) ?? .pageSource

        let movesReader = try FieldReader(try r.required("moves"), path: "moves", what: "rig file")
        try movesReader.rejectUnknown(allowed: ["hinge", "motion"] + Move.allCases.map(\.rawValue))
        var hinge: HingeCost?
        let hingeValue = try presentMember(movesReader, "hinge")
        if case .null = hingeValue {} else {
            let h = try FieldReader(hingeValue, path: "moves.hinge", what: "rig file")
            try h.rejectUnknown(allowed: ["fixed", "perDegree", "tolerance"])
            var tolerance = HingeCost.defaultTolerance
            if let t = try h.optionalNumber("tolerance") {
                guard t.isFinite, t >= 0, t <= 45 else { throw InputError(.badValue, "rig file: moves.hinge.tolerance is \(t); expected degrees from 0 to 45", field: "moves.hinge.tolerance") }
                tolerance = t
            }
            hinge = HingeCost(fixed: try seconds(h, "fixed"), perDegree: try seconds(h, "perDegree"), tolerance: tolerance)
        }
        // Unlike every other move, `motion` may be left out: rig files written before it existed mean no tilt stage.
        var motion: TiltCost?
        if let m = movesReader.optional("motion") {
            let t = try FieldReader(m, path: "moves.motion", what: "rig file")
            try t.rejectUnknown(allowed: ["fixed", "perDegree"])
            motion = TiltCost(fixed: try seconds(t, "fixed"), perDegree: try seconds(t, "perDegree"))
        }
        var moves: [Double?] = []
        for move in Move.allCases { moves.append(try optionalSeconds(movesReader, move.rawValue)) }

        var orientations: [DeviceOrientation] = []
        if let list = try r.optionalArray("orientations") {
            for (i, v) in list.enumerated() {
                guard case .string(let s) = v, let o = DeviceOrientation(rawValue: s) else {
                    throw InputError.badValue("orientations[\(i)]", v.typeName == "string" ? "\(v)" : v.typeName,
                                              allowed: DeviceOrientation.allCases.map(\.rawValue))
                }
                if orientations.contains(o) {
                    throw InputError(.duplicateId, "rig file: orientation \"\(s)\" is listed twice", field: "orientations[\(i)]")
                }
                orientations.append(o)
            }
        }
        let orientationCost = moves[Move.allCases.firstIndex(of: .orientation)!]
        if orientationCost == nil, !orientations.isEmpty {
            throw InputError(.badValue, "rig file: \"orientations\" lists device orientations but moves.orientation is null (the rig cannot turn the phone)",
                             field: "orientations")
        }
        if orientationCost != nil, orientations.isEmpty {
            throw InputError(.missingField, "rig file: moves.orientation has a cost, so \"orientations\" must list the device orientations the rig turns the phone to",
                             field: "orientations")
        }

        let looksReader = try FieldReader(try r.required("observations"), path: "observations", what: "rig file")
        try looksReader.rejectUnknown(allowed: Look.allCases.map(\.rawValue))
        var looks: [Double?] = []
        for look in Look.allCases { looks.append(try optionalSeconds(looksReader, look.rawValue)) }
        guard looks.contains(where: { $0 != nil }) else {
            throw InputError(.badValue, "rig file: the rig must be able to look (observations.page-source or observations.screenshot)", field: "observations")
        }
        let reset = try optionalSeconds(r, "reset")
        var device: JSONValue?
        if let d = r.optional("device") {
            guard case .object = d else { throw InputError.wrongType("device", expected: "an object", got: d) }
            device = d
        }
        return RigProfile(name: name, hinge: hinge, moves: moves, orientations: orientations, looks: looks, reset: reset,
                          observe: observe, device: device, motion: motion)
    }

    /// A member that must be there, `null` included (FieldReader's `optional` takes null for absent).
    private static func presentMember(_ r: FieldReader, _ name: String) throws(InputError) -> JSONValue {
        for (k, v) in r.members where k == name { return v }
        throw InputError(.missingField, "rig file: missing field \"\(r.fieldPath(name))\": give its seconds, or null when the rig cannot",
                         field: r.fieldPath(name))
    }

    private static func optionalSeconds(_ r: FieldReader, _ name: String) throws(InputError) -> Double? {
        if case .null = try presentMember(r, name) { return nil }
        return try seconds(r, name)
    }

    private static func seconds(_ r: FieldReader, _ name: String) throws(InputError) -> Double {
        let v = try r.number(name)
        guard v >= 0, v <= maxSeconds else { throw InputError.outOfRange(r.fieldPath(name), "must be seconds between 0 and 3600", got: v) }
        return v
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("crease"); w.string("rig")
        w.key("version"); w.int(1)
        w.key("name"); w.string(name)
        w.key("observe"); w.string(observe.rawValue)
        w.key("moves"); w.beginObject()
        w.key("hinge")
        if let hinge {
            w.beginObject(); w.key("fixed"); w.number(hinge.fixed); w.key("perDegree"); w.number(hinge.perDegree)
            w.key("tolerance"); w.number(hinge.tolerance); w.endObject()
        } else { w.null() }
        w.key("motion")
        if let motion {
            w.beginObject(); w.key("fixed"); w.number(motion.fixed); w.key("perDegree"); w.number(motion.perDegree); w.endObject()
        } else { w.null() }
        for (move, cost) in zip(Move.allCases, moves) { w.key(move.rawValue); if let cost { w.number(cost) } else { w.null() } }
        w.endObject()
        w.key("orientations"); w.beginArray(); for o in orientations { w.string(o.rawValue) }; w.endArray()
        w.key("observations"); w.beginObject()
        for (look, cost) in zip(Look.allCases, looks) { w.key(look.rawValue); if let cost { w.number(cost) } else { w.null() } }
        w.endObject()
        w.key("reset"); if let reset { w.number(reset) } else { w.null() }
        if let device { w.key("device"); w.value(device) }
        w.endObject()
    }
}
