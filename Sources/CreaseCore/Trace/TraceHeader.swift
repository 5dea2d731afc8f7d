/// The first line of a trace file (contract section 6): everything a replay needs,
/// so a file replays with nothing else. Each file of a rotated run has its own full
/// header whose `initial` member holds the state at the point the file begins.
public struct TraceHeader: Sendable, Equatable {
    /// The format version this build writes. It reads versions 1, 2 and 3 too: the same
    /// records, with FNV-1a, crease64 and crease64x4 digests (see `DigestAlgorithm`).
    public static let currentVersion = 4
    public static let readableVersions = [1, 2, 3, 4]

    /// `1, 2, 3 and 4`.
    static func listed(_ versions: [Int]) -> String {
        let names = versions.map(String.init)
        guard let last = names.last, names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " and " + last
    }

    /// The largest seq or t a trace holds: JSON numbers are read as doubles, exact up to 2^53.
    public static let maxInteger = 1 << 53

    /// The file's format version; it says which digest its records hold.
    public var version: Int
    /// `creased X.Y.Z`, the program that recorded the trace.
    public var daemon: String
    /// Wall-clock start of this file, ISO 8601 UTC: informational only, never read back into a replay.
    public var started: String
    /// Which file of the run this is (0 for the first) and why it was begun:
    /// `start`, `size`, `time`, `command`, `SIGHUP`, `slice`.
    public var part: Int
    public var reason: String
    /// The daemon's `--label`s, in order (empty when it had none; then not written).
    public var labels: [Label]
    /// For the first file of a run that resumed (`creased --resume`): the file it continues,
    /// and the seq and digest it resumed at (this file's `initial`).
    public var resumedFrom: ResumedFrom?
    /// For a trace `crease trace rebase` rewrote: whose digests it held before, and when.
    public var rebased: Rebased?

    public struct Rebased: Sendable, Equatable {
        /// The program (and format version) that recorded the digests replaced.
        public var from: String
        /// The program that rebased it, and when (ISO 8601 UTC).
        public var by: String
        public var at: String

        public init(from: String, by: String, at: String) {
            self.from = from
            self.by = by
            self.at = at
        }
    }

    public struct ResumedFrom: Sendable, Equatable {
        public var file: String
        public var seq: Int
        public var digest: UInt64

        public init(file: String, seq: Int, digest: UInt64) {
            self.file = file
            self.seq = seq
            self.digest = digest
        }
    }
    public var profile: DeviceProfile
    public var app: App
    /// The daemon's configuration (budget, limits) as it gave it.
    public var config: JSONValue
    /// Whether `layout` records follow each event that changed the layout.
    public var layouts: Bool
    /// The daemon's monotonic clock (ns) at `t = 0`, so a sender's `ts` taken from
    /// the same clock can be set against `t`. Nil when unknown (a sliced trace keeps it).
    public var monotonicOrigin: UInt64?
    /// Where this file starts: events applied before it, its `t`, and the state and digest then.
    public var initialSeq: Int
    public var initialT: UInt64
    public var initialState: DeviceState
    public var initialDigest: UInt64

    /// The header of a file that begins with `engine` as it is now, at `t`.
    public init(daemon: String, started: String, part: Int, reason: String, labels: [Label] = [], config: JSONValue, layouts: Bool,
                monotonicOrigin: UInt64?, t: UInt64, engine: Engine) {
        self.init(version: engine.digestAlgorithm.traceVersion, daemon: daemon, started: started, part: part, reason: reason,
                  labels: labels, profile: engine.profile, app: engine.app, config: config, layouts: layouts, monotonicOrigin: monotonicOrigin,
                  initialSeq: engine.seq, initialT: t, initialState: engine.state, initialDigest: engine.digest)
    }

    public init(version: Int = TraceHeader.currentVersion, daemon: String, started: String, part: Int, reason: String,
                labels: [Label] = [], profile: DeviceProfile, app: App, config: JSONValue, layouts: Bool, monotonicOrigin: UInt64?,
                initialSeq: Int, initialT: UInt64, initialState: DeviceState, initialDigest: UInt64) {
        self.version = version
        self.daemon = daemon
        self.started = started
        self.part = part
        self.reason = reason
        self.labels = labels
        self.profile = profile
        self.app = app
        self.config = config
        self.layouts = layouts
        self.monotonicOrigin = monotonicOrigin
        resumedFrom = nil
        rebased = nil
        self.initialSeq = initialSeq
        self.initialT = initialT
        self.initialState = initialState
        self.initialDigest = initialDigest
    }

    /// Which digest the file's records hold.
    public var digestAlgorithm: DigestAlgorithm { DigestAlgorithm(traceVersion: version) ?? .crease64v }

    /// The engine at the point this file begins, computing the digest its records hold.
    /// The engine the trace starts with; `profile` in place of the header's (calibration).
    public func makeEngine(profile: DeviceProfile? = nil) -> Engine {
        Engine(profile: profile ?? self.profile, app: app, state: initialState, seq: initialSeq, digestAlgorithm: digestAlgorithm)
    }

    /// The header line, canonical JSON without its newline.
    public func encode() -> [UInt8] {
        var w = JSONWriter(capacity: 16 * 1024)
        w.beginObject()
        w.key("crease"); w.string("trace")
        w.key("version"); w.int(version)
        w.key("daemon"); w.string(daemon)
        w.key("started"); w.string(started)
        w.key("part"); w.int(part)
        w.key("reason"); w.string(reason)
        if !labels.isEmpty { w.key("labels"); Label.write(labels, to: &w) }
        if let r = resumedFrom {
            w.key("resumedFrom"); w.beginObject()
            w.key("file"); w.string(r.file); w.key("seq"); w.int(r.seq); w.key("digest"); w.string(Digest.hex(r.digest))
            w.endObject()
        }
        if let r = rebased {
            w.key("rebased"); w.beginObject()
            w.key("from"); w.string(r.from); w.key("by"); w.string(r.by); w.key("at"); w.string(r.at)
            w.endObject()
        }
        w.key("profile"); profile.write(to: &w)
        w.key("app"); w.value(app.source)
        w.key("config"); w.value(config)
        w.key("layouts"); w.bool(layouts)
        if let monotonicOrigin { w.key("monotonicOrigin"); w.int(Int(monotonicOrigin)) }
        w.key("initial"); w.beginObject()
        w.key("seq"); w.int(initialSeq)
        w.key("t"); w.int(Int(initialT))
        w.key("digest"); w.string(Digest.hex(initialDigest))
        w.key("state"); initialState.write(to: &w, app: app)
        w.endObject()
        w.endObject()
        return w.bytes
    }

    /// Reads a header line. An unknown version is refused before anything else is
    /// read, with a message that says which versions this build reads.
    public static func decode(_ line: ArraySlice<UInt8>) throws(TraceError) -> TraceHeader {
        let value: JSONValue
        do { value = try JSON.parse(line) } catch {
            throw TraceError("the header is not valid JSON: \(error.message) at byte \(error.offset)", line: 1, offset: 0)
        }
        guard case .string("trace") = value["crease"] else {
            throw TraceError("not a crease trace: the first line has no \"crease\": \"trace\"", line: 1, offset: 0)
        }
        guard case .number(let version) = value["version"] else {
            throw TraceError("the header has no numeric \"version\"", line: 1, offset: 0)
        }
        guard let known = readableVersions.first(where: { Double($0) == version }) else {
            let shown = version == version.rounded() && abs(version) < 1e15 ? String(Int(version)) : String(version)
            throw TraceError("trace format version \(shown) is not supported: this crease reads versions \(TraceHeader.listed(readableVersions))",
                             line: 1, offset: 0)
        }
        do {
            return try decodeFields(value, version: known)
        } catch {
            throw TraceError("bad header: \(error)", line: 1, offset: 0)
        }
    }

    private static func decodeFields(_ value: JSONValue, version: Int) throws(InputError) -> TraceHeader {
        let r = try FieldReader(value, path: "", what: "trace header")
        try r.rejectUnknown(allowed: ["crease", "version", "daemon", "started", "part", "reason", "labels", "resumedFrom", "rebased", "profile", "app",
                                      "config", "layouts", "monotonicOrigin", "initial"])
        var resumedFrom: ResumedFrom?
        if let v = r.optional("resumedFrom") {
            let f = try FieldReader(v, path: "resumedFrom", what: "resumedFrom")
            try f.rejectUnknown(allowed: ["file", "seq", "digest"])
            guard let d = Digest.parseHex(try f.string("digest")) else {
                throw InputError(.badValue, "resumedFrom.digest must be 16 hex digits", field: "resumedFrom.digest")
            }
            resumedFrom = ResumedFrom(file: try f.string("file"), seq: try f.integer("seq", min: 0, max: TraceHeader.maxInteger), digest: d)
        }
        let profile = try DeviceProfile.decode(try r.required("profile"))
        let app = try App.decode(try r.required("app"), path: "app")
        let config = try r.required("config")
        guard case .object = config else { throw InputError.wrongType("config", expected: "an object", got: config) }
        let initial = try FieldReader(try r.required("initial"), path: "initial", what: "initial")
        try initial.rejectUnknown(allowed: ["seq", "t", "digest", "state"])
        let digestText = try initial.string("digest")
        guard let digest = Digest.parseHex(digestText) else {
            throw InputError(.badValue, "initial.digest must be 16 hex digits", field: "initial.digest")
        }
        let state = try DeviceState.decode(try initial.required("state"), app: app)
        // A monotonic clock reading may pass 2^53 ns (104 days of uptime): it is read as
        // the nearest double, which is still within a microsecond for centuries.
        let origin = try r.optionalNumber("monotonicOrigin")
        if let o = origin, !(o >= 0 && o < 1.8e19 && o == o.rounded()) {
            throw InputError.outOfRange("monotonicOrigin", "must be a whole number of nanoseconds", got: o)
        }
        var header = TraceHeader(version: version, daemon: try r.string("daemon"), started: try r.string("started"),
                           part: try r.integer("part", min: 0, max: TraceHeader.maxInteger), reason: try r.string("reason"),
                           labels: try r.optional("labels").map { v throws(InputError) in try Label.decode(v, field: "labels") } ?? [],
                           profile: profile, app: app, config: config, layouts: try r.bool("layouts"),
                           monotonicOrigin: origin.map { UInt64($0) },
                           initialSeq: try initial.integer("seq", min: 0, max: TraceHeader.maxInteger),
                           initialT: UInt64(try initial.integer("t", min: 0, max: TraceHeader.maxInteger)),
                           initialState: state, initialDigest: digest)
        header.resumedFrom = resumedFrom
        if let v = r.optional("rebased") {
            let f = try FieldReader(v, path: "rebased", what: "rebased")
            try f.rejectUnknown(allowed: ["from", "by", "at"])
            header.rebased = Rebased(from: try f.string("from"), by: try f.string("by"), at: try f.string("at"))
        }
        return header
    }
}

/// A structural problem in a trace file, with the line (1-based) and byte offset where it is.
public struct TraceError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public var line: Int
    public var offset: Int

    public init(_ message: String, line: Int, offset: Int) {
        self.message = message
        self.line = line
        self.offset = offset
    }

    /// Line 0 is no line: an error about the trace as a whole (a seq it lacks) names none.
    public var description: String { line == 0 ? message : "line \(line) (byte \(offset)): \(message)" }
}
