/// Why an input (event, command, manifest, profile) was rejected. Rejected input
/// changes nothing. `field` names the offending field as a path (`angle`,
/// `root.tabs[2].content.screens[0].toolbar[1].placement`).
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for programs; on the wire it is the case's name (docs/events.md, docs/daemon.md).
    public enum Code: String, Sendable, CaseIterable {
        case badJSON, wrongType, missingField, unknownField, unknownEvent, unknownCommand, badValue, outOfRange
        case unknownId, invalidState, duplicateId
        /// A `load` whose state gives another digest than it names.
        case digestMismatch
        case forbidden, lineTooLong, unterminatedLine, traceDisabled, traceFailed
        /// A trace line that is no record kind the reader knows.
        case unknownRecord
    }

    public var code: Code
    public var message: String
    public var field: String?
    /// The `id` of the message that caused the error, when it could be read.
    public var id: JSONValue?
    /// The rejected event's `ts`, when it could be read: with `line`, how a rig that
    /// sends no ids finds the line that failed.
    public var ts: Int64?
    /// The line of the connection (1-based, every line counted) that was rejected; set by the daemon.
    public var line: Int?

    public init(_ code: Code, _ message: String, field: String? = nil, id: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.id = id
    }

    public var description: String {
        if let field { return "\(code.rawValue): \(message) (field \(field))" }
        return "\(code.rawValue): \(message)"
    }

    public static func missing(_ field: String, in what: String) -> InputError {
        InputError(.missingField, "\(what): missing field \"\(field)\"", field: field)
    }

    public static func wrongType(_ field: String, expected: String, got: JSONValue) -> InputError {
        InputError(.wrongType, "field \"\(field)\" must be \(expected), not \(got.typeName)", field: field)
    }

    /// A value outside its range: the message says what the range is and what was given.
    public static func outOfRange(_ field: String, _ requirement: String, got: String) -> InputError {
        InputError(.outOfRange, "field \"\(field)\" \(requirement), got \(got)", field: field)
    }

    public static func outOfRange(_ field: String, _ requirement: String, got: Double) -> InputError {
        outOfRange(field, requirement, got: shown(got))
    }

    /// A number as JSON writes it (`200`, `12.5`), so the message shows what was sent.
    public static func shown(_ value: Double) -> String {
        var out: [UInt8] = []
        JSONWriter.appendNumber(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    public static func badValue(_ field: String, _ value: String, allowed: [String]) -> InputError {
        InputError(.badValue, "field \"\(field)\" is \"\(value)\"; expected one of \(allowed.joined(separator: ", "))", field: field)
    }
}
