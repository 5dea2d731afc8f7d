/// One line of `index.ndjson`, the index of a trace directory's files: the daemon appends
/// one for each trace file it begins, so the files of many rigs (many daemons, or one
/// daemon over many runs) can be told apart by their labels without opening them.
///
///     {"file":"creased-20261130T140000Z-4242-0.jsonl","started":"2026-11-30T14:00:00.123Z","pid":4242,
///      "part":0,"reason":"start","seq":0,"labels":{"rig":"bench-3"}}
public struct TraceIndexEntry: Sendable, Equatable {
    /// The index's name inside the trace directory.
    public static let fileName = "index.ndjson"

    /// The file's name inside the directory.
    public var file: String
    public var started: String
    public var pid: Int
    public var part: Int
    public var reason: String
    /// Events applied before the file begins (its header's `initial.seq`).
    public var seq: Int
    public var labels: [Label]

    public init(file: String, started: String, pid: Int, part: Int, reason: String, seq: Int, labels: [Label]) {
        self.file = file
        self.started = started
        self.pid = pid
        self.part = part
        self.reason = reason
        self.seq = seq
        self.labels = labels
    }

    /// The index line, newline included.
    public func encode() -> [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("file"); w.string(file)
        w.key("started"); w.string(started)
        w.key("pid"); w.int(pid)
        w.key("part"); w.int(part)
        w.key("reason"); w.string(reason)
        w.key("seq"); w.int(seq)
        w.key("labels"); Label.write(labels, to: &w)
        w.endObject()
        w.bytes.append(0x0A)
        return w.bytes
    }

    public static func decode(_ value: JSONValue) throws(InputError) -> TraceIndexEntry {
        let r = try FieldReader(value, path: "", what: "index entry")
        try r.rejectUnknown(allowed: ["file", "started", "pid", "part", "reason", "seq", "labels"])
        return TraceIndexEntry(file: try r.string("file"), started: try r.string("started"),
                               pid: try r.integer("pid", min: 0, max: TraceHeader.maxInteger),
                               part: try r.integer("part", min: 0, max: TraceHeader.maxInteger), reason: try r.string("reason"),
                               seq: try r.integer("seq", min: 0, max: TraceHeader.maxInteger),
                               labels: try Label.decode(try r.required("labels"), field: "labels"))
    }
}
