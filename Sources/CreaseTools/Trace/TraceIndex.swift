import CreaseCore
import Foundation

/// `crease trace index DIR`: one row per trace file under a directory, as JSON Lines a
/// lab queries with DuckDB or pandas (every row has the same members), or as a table.
enum TraceIndex {
    /// Trace files are found by their ending; anything else under DIR is not looked at.
    static func isCandidate(_ path: String) -> Bool { path.hasSuffix(".jsonl") }

    /// Every `.jsonl` file under `directory`, recursively, sorted by path.
    static func files(under directory: String) throws -> [String] {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) else {
            throw UsageError("no such directory: \(directory)")
        }
        guard isDir.boolValue else { return [directory] }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let found = (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? []).filter(isCandidate)
        return found.map { "\(base)/\($0)" }.sorted()
    }

    /// The row of one trace: nil when the file is not a trace (its header does not read).
    /// A line that is no record is skipped (the rest counted) and `damaged` names it; a
    /// trace whose records cannot be followed past a point gets what was read before it.
    static func row(path: String, bytes: [UInt8]) -> JSONValue? {
        guard var file = try? TraceFile(bytes: bytes) else { return nil }
        file.skipsBadRecords = true
        let h = file.header
        var summary: TraceSummary?
        let skipped = file.badRecords()
        var damage: String? = skipped.first.map { "\($0): no record" + (skipped.count > 1 ? " (and \(skipped.count - 1) more lines)" : "") + ", skipped" }
        var glitches: [Glitch] = []
        do {
            summary = try TraceInfo.summarize(file)
            glitches = try TraceGlitches.check(file, options: GlitchOptions()).glitches
        } catch { damage = "\(error)" }
        let endT = summary?.endT ?? h.initialT
        let durationNs = endT >= h.initialT ? endT - h.initialT : 0
        let start = parseISO8601(h.started)
        let members: [(String, JSONValue)] = [
            ("file", .string(path)),
            ("bytes", .number(Double(bytes.count))),
            ("labels", labels(of: bytes)),
            ("app", .string(h.app.name)),
            ("profile", .string(h.profile.name)),
            ("daemon", .string(h.daemon)),
            ("part", .number(Double(h.part))),
            ("reason", .string(h.reason)),
            ("start", .string(h.started)),
            ("end", start.map { .string(formatISO8601($0.addingTimeInterval(Double(durationNs) / 1e9))) } ?? .null),
            ("durationS", .number((Double(durationNs) / 1e6).rounded() / 1000)),
            ("firstSeq", summary?.firstSeq.map { .number(Double($0)) } ?? .null),
            ("lastSeq", summary?.lastSeq.map { .number(Double($0)) } ?? .null),
            ("events", .number(Double(summary?.events ?? 0))),
            ("marks", .number(Double(summary?.marks.count ?? 0))),
            ("batches", .number(Double(summary?.batches ?? 0))),
            ("gaps", .number(Double(summary?.gaps.count ?? 0))),
            ("lostRecords", .number(Double(summary?.gaps.reduce(0) { $0 + $1.lost } ?? 0))),
            // Every kind, zero or not, so each row has one schema.
            ("glitches", .object(GlitchKind.allCases.map { kind in
                (kind.rawValue, .number(Double(glitches.reduce(0) { $0 + ($1.kind == kind ? 1 : 0) })))
            })),
            // The observations the recording daemon judged a mismatch (stale ones are not).
            ("mismatches", .number(Double(summary?.observations[Verdict.allCases.firstIndex(of: .mismatch)!] ?? 0))),
            ("cut", .bool(file.cut != nil)),
            ("damaged", damage.map { .string($0) } ?? .null),
        ]
        return .object(members)
    }

    /// The header's `labels` object, read from the raw first line so labels written by any
    /// creased show up; `{}` when it has none.
    static func labels(of bytes: [UInt8]) -> JSONValue {
        let end = bytes.firstIndex(of: 0x0A) ?? bytes.endIndex
        guard let header = try? JSON.parse(bytes[..<end]), case .object? = header["labels"] else { return .object([]) }
        return header["labels"]!
    }

    static func parseISO8601(_ s: String) -> Date? {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.date(from: s)
    }

    static func formatISO8601(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: d)
    }

    /// One line for a row (the default output), readable without a header:
    /// `START  DURATION s  N events  N gaps  APP  LABELS  FILE`.
    static func line(_ r: JSONValue) -> String {
        func text(_ v: JSONValue?) -> String {
            switch v {
            case .string(let s)?: return s
            case .number(let n)?: return String(decoding: JSONWriter.encode(.number(n)), as: UTF8.self)
            default: return "-"
            }
        }
        var fields = [text(r["start"]), "\(text(r["durationS"])) s", "\(text(r["events"])) events", "\(text(r["gaps"])) gaps", text(r["app"])]
        if case .object(let ls)? = r["labels"], !ls.isEmpty { fields.append(ls.map { k, v in "\(k)=\(text(v))" }.joined(separator: ",")) }
        fields.append(text(r["file"]))
        if case .string(let damage)? = r["damaged"] { fields.append("DAMAGED: \(damage)") }
        return fields.joined(separator: "  ")
    }
}
