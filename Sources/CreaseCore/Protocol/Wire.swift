/// What one NDJSON line from a client is.
public enum Inbound: Sendable {
    case event(EventEnvelope)
    /// A command, decoded, with the message's id.
    case command(Command, id: JSONValue?)
    /// A line naming a command (its `cmd` is a string) whose fields are wrong. Not thrown,
    /// so a caller can still count it as a command; `error` carries the message's id.
    case invalidCommand(name: String, error: InputError)
    /// A blank line or a `#` comment: ignored by contract.
    case ignorable
}

public enum Wire {
    /// What a line is, in the one order every reader tries: the high-rate events on their
    /// fast paths (their fields apart, without a `JSONValue`, nor an `Inbound`, which is as
    /// large as any command), else `other` (the full parser, `decodeParsing`). The daemon
    /// acts on each case in place; `decode` makes them an `Inbound`.
    @inlinable @inline(__always)
    public static func dispatch<R>(_ line: UnsafeRawBufferPointer, hinge: (WireFastPath.Hinge) -> R,
                                   motion: (WireFastPath.Motion) -> R, other: () -> R) -> R {
        let bytes = line.bindMemory(to: UInt8.self)
        if let h = WireFastPath.hingeFields(bytes) { return hinge(h) }
        if let m = WireFastPath.motionFields(bytes) { return motion(m) }
        return other()
    }

    /// Decodes one line (without its newline). Errors carry the message's id when it could be read.
    public static func decode(line: UnsafeRawBufferPointer) throws(InputError) -> Inbound {
        let fast: EventEnvelope? = dispatch(line, hinge: { $0.envelope }, motion: { $0.envelope }, other: { nil })
        if let fast { return .event(fast) }
        return try decodeParsing(line: line)
    }

    /// What the full parser makes of a line the fast paths leave to it.
    public static func decodeParsing(line: UnsafeRawBufferPointer) throws(InputError) -> Inbound {
        let bytes = line.bindMemory(to: UInt8.self)
        var start = 0
        while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x09 || bytes[start] == 0x0D { start += 1 }
        if start == bytes.count || bytes[start] == UInt8(ascii: "#") { return .ignorable }
        let value: JSONValue
        do {
            value = try JSON.parse(line)
        } catch {
            throw InputError(.badJSON, "invalid JSON: \(error.message) at byte \(error.offset)")
        }
        guard case .object = value else {
            throw InputError(.wrongType, "a message must be a JSON object, not \(value.typeName)")
        }
        if value["event"] != nil {
            return .event(try Event.decode(value))
        }
        if let cmd = value["cmd"] {
            guard case .string(let name) = cmd else {
                throw InputError(.wrongType, "field \"cmd\" must be a string", field: "cmd", id: value["id"])
            }
            do {
                return .command(try Command.decode(name: name, body: value), id: value["id"])
            } catch {
                return .invalidCommand(name: name, error: error)
            }
        }
        throw InputError(.missingField, "a message needs \"event\" or \"cmd\"", field: "event", id: value["id"])
    }

    public static func decode(line: [UInt8]) throws(InputError) -> Inbound {
        try line.withUnsafeBytes { raw in Result { () throws(InputError) in try decode(line: raw) } }.get()
    }
}
