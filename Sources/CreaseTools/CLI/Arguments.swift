#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A usage or input error: the command prints it and exits 2.
public struct UsageError: Error, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Exit statuses of contract section 7.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let checkFailed: Int32 = 1
    public static let usage: Int32 = 2
}

/// A small argument reader: options may come in any order; whatever is left when the
/// command calls `finish()` is an error, so a typo never passes silently.
public struct Arguments {
    private var rest: [String]

    public init(_ args: [String]) { rest = args }

    public var isEmpty: Bool { rest.isEmpty }

    /// `--name VALUE` or `--name=VALUE`.
    public mutating func option(_ name: String) throws -> String? {
        for (i, a) in rest.enumerated() {
            if a == name {
                guard i + 1 < rest.count else { throw UsageError("\(name) needs a value") }
                let v = rest[i + 1]
                rest.removeSubrange(i...(i + 1))
                return v
            }
            if a.hasPrefix(name + "=") {
                rest.remove(at: i)
                return String(a.dropFirst(name.count + 1))
            }
        }
        return nil
    }

    public mutating func options(_ name: String) throws -> [String] {
        var out: [String] = []
        while let v = try option(name) { out.append(v) }
        return out
    }

    /// Whether `name` was given (as `name VALUE` or `name=VALUE`), without taking it.
    public func has(_ name: String) -> Bool { rest.contains { $0 == name || $0.hasPrefix(name + "=") } }

    public mutating func flag(_ name: String) -> Bool {
        guard let i = rest.firstIndex(of: name) else { return false }
        rest.remove(at: i)
        return true
    }

    public mutating func int(_ name: String) throws -> Int? {
        guard let v = try option(name) else { return nil }
        guard let n = Int(v) else { throw UsageError("\(name) takes a whole number, not \"\(v)\"") }
        return n
    }

    public mutating func double(_ name: String) throws -> Double? {
        guard let v = try option(name) else { return nil }
        guard let n = Double(v), n.isFinite else { throw UsageError("\(name) takes a number, not \"\(v)\"") }
        return n
    }

    /// `--timeout S`: how long a client command waits for creased (a connect, a write, each
    /// awaited reply); above 0, default `DaemonConnection.defaultTimeout`.
    public mutating func timeout() throws -> Double {
        guard let t = try double("--timeout") else { return DaemonConnection.defaultTimeout }
        guard t > 0, t <= 86_400 else { throw UsageError("--timeout takes seconds above 0 (at most a day), not \(t)") }
        return t
    }

    /// The next positional argument (anything not starting with `--`, or anything after `--`).
    public mutating func positional() -> String? {
        if let i = rest.firstIndex(where: { !$0.hasPrefix("--") || $0 == "-" }) { return rest.remove(at: i) }
        return nil
    }

    public mutating func remainingPositionals() -> [String] {
        var out: [String] = []
        while let p = positional() { out.append(p) }
        return out
    }

    public func finish() throws {
        if let first = rest.first { throw UsageError("unexpected argument \"\(first)\"") }
    }
}

/// Output with no buffering surprises: whole lines to stdout and stderr. When the
/// reader of stdout has gone (`crease watch | head`), the command ends quietly with
/// status 141, as if by SIGPIPE (which the client commands ignore).
public enum Console {
    public static func out(_ s: String) { out(bytes: Array(s.utf8)) }
    public static func out(bytes: [UInt8]) {
        if !line(bytes, to: 1) { exit(141) }
    }
    public static func err(_ s: String) { _ = line(Array(s.utf8), to: 2) }

    /// `s` with every control character (C0, DEL, C1) written as `\u{1B}`: text from a file
    /// (an app's name, a mark's label) printed to a terminal must not move its cursor or
    /// retitle its window.
    public static func printable(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: isControl) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            if isControl(u) { out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}" } else { out.unicodeScalars.append(u) }
        }
        return out
    }

    private static func isControl(_ u: Unicode.Scalar) -> Bool { u.value < 0x20 || (0x7F...0x9F).contains(u.value) }

    /// Writes `bytes` and a newline to `fd`; false when it cannot (the reader is gone).
    public static func line(_ bytes: [UInt8], to fd: Int32) -> Bool {
        var b = bytes
        b.append(0x0A)
        var off = 0
        while off < b.count {
            let n = b.withUnsafeBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            off += n
        }
        return true
    }
}
