import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation
import Synchronization

/// Loading what commands share: the app, the profile, event files.
public enum Inputs {
    /// A regular file (or `-`, standard input) of at most `limit` bytes (docs/hardening.md).
    public static func readFile(_ path: String, what: String = "input file", limit: Int = InputFile.linesLimit) throws -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try InputFile.read(path, what: what, limit: limit) } catch { throw UsageError(error.message) }
        if path != "-", let id = OutputFile.FileIdentity(path: path) { readFiles.withLock { _ = $0.insert(id) } }
        return bytes
    }

    /// The files this command read, which none of its outputs may replace (`TraceIO.write`).
    static var read: Set<OutputFile.FileIdentity> { readFiles.withLock { $0 } }
    private static let readFiles = Mutex<Set<OutputFile.FileIdentity>>([])

    /// `--app FILE` or `--app builtin:NAME` (default: the built-in `tabs` app).
    public static func app(_ spec: String?) throws -> App {
        let spec = spec ?? "builtin:\(BuiltinApps.defaultName)"
        if spec.hasPrefix("builtin:") {
            let name = String(spec.dropFirst("builtin:".count))
            guard let app = BuiltinApps.app(named: name) else {
                throw UsageError("no built-in app \"\(name)\"; built-in apps: \(BuiltinApps.names.joined(separator: ", "))")
            }
            return app
        }
        do { return try App.decode(json: try readFile(spec, what: "app manifest", limit: InputFile.manifestLimit)) } catch let e as InputError {
            throw UsageError("\(spec): \(e)")
        }
    }

    public static func profile(_ path: String?) throws -> DeviceProfile {
        guard let path else { return .builtin }
        do { return try DeviceProfile.decode(json: try readFile(path, what: "profile", limit: InputFile.profileLimit)) } catch let e as InputError {
            throw UsageError("\(path): \(e)")
        }
    }

    /// Whether `path` is a regular file whose first bytes are `prefix` (how a tour or a plan is
    /// told from a trace before reading it; a FIFO or a missing file is neither).
    static func regularFile(_ path: String, startsWith prefix: String) -> Bool {
        guard let kind = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType, kind == .typeRegular,
              let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return String(decoding: handle.readData(ofLength: prefix.utf8.count), as: UTF8.self) == prefix
    }

    /// Splits bytes into lines (LF, with an optional CR before it), keeping line numbers.
    public static func lines(_ bytes: [UInt8]) -> [(number: Int, bytes: ArraySlice<UInt8>)] {
        var out: [(Int, ArraySlice<UInt8>)] = []
        var start = 0
        var n = 1
        for i in 0..<bytes.count where bytes[i] == 0x0A {
            var end = i
            if end > start, bytes[end - 1] == 0x0D { end -= 1 }
            out.append((n, bytes[start..<end]))
            start = i + 1
            n += 1
        }
        if start < bytes.count { out.append((n, bytes[start...])) }
        return out
    }

    /// Decodes an NDJSON event file; every line must be an event (or blank, or a `#` comment).
    public static func events(_ bytes: [UInt8], name: String) throws -> [(line: Int, envelope: EventEnvelope)] {
        var out: [(Int, EventEnvelope)] = []
        for (number, line) in lines(bytes) {
            func notAnEvent(_ cmd: String) -> UsageError {
                UsageError("\(name):\(number): \"\(cmd)\" is a command; an events file holds only events")
            }
            let decoded = line.withUnsafeBytes { raw in Result { () throws(InputError) in try Wire.decode(line: raw) } }
            guard case .success(let inbound) = decoded else {
                if case .failure(let e) = decoded { throw UsageError("\(name):\(number): \(e)") }
                continue
            }
            switch inbound {
            case .ignorable: continue
            case .command(let command, _): throw notAnEvent(command.name)
            case .invalidCommand(let cmd, _): throw notAnEvent(cmd)
            case .event(let env): out.append((number, env))
            }
        }
        return out
    }
}
