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
    /// Decodes one line (without its newline). Errors carry the message's id when it could be read.
    public static func decode(line: UnsafeRawBufferPointer) throws(InputError) -> Inbound {
        // The high-rate events, without a JSONValue.
        if let hinge = WireFastPath.hinge(line.bindMemory(to: UInt8.self)) { return .event(hinge) }
        if let motion = WireFastPath.motion(line.bindMemory(to: UInt8.self)) { return .event(motion) }
        return try decodeParsing(line: line)
    }

    /// What `decode` does with a line the fast paths leave to the full parser: for a
    /// caller that tried `WireFastPath` itself.
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
