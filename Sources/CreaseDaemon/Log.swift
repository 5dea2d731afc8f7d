#if canImport(Glibc)
import Glibc
#endif

public enum LogLevel: Int, Comparable, Sendable, CaseIterable {
    // syslog priorities
    case error = 3, warning = 4, notice = 5, info = 6, debug = 7

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }

    public var name: String {
        switch self {
        case .error: "error"
        case .warning: "warning"
        case .notice: "notice"
        case .info: "info"
        case .debug: "debug"
        }
    }

    public init?(name: String) {
        guard let l = LogLevel.allCases.first(where: { $0.name == name }) else { return nil }
        self = l
    }
}

/// One line per notable thing, on stderr. When systemd reads stderr
/// (`JOURNAL_STREAM` names it) each line starts with its `<N>` syslog priority;
/// otherwise with the level's name.
public struct LogFormat: Sendable {
    public var journal: Bool

    public func line(_ level: LogLevel, _ message: String) -> String {
        // A message is one line: embedded newlines would split a journal record.
        let flat = message.contains("\n") ? message.split(separator: "\n").joined(separator: " | ") : message
        return journal ? "<\(level.rawValue)>\(flat)\n" : "creased: \(level.name): \(flat)\n"
    }

    /// Whether `JOURNAL_STREAM` ("device:inode") is the file on fd 2.
    public static func stderrIsJournal(_ journalStream: String?) -> Bool {
        guard let js = journalStream else { return false }
        let parts = js.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }
}

public final class Logger {
    public let threshold: LogLevel
    public let format: LogFormat

    public init(threshold: LogLevel, format: LogFormat) {
        self.threshold = threshold
        self.format = format
    }

    @inline(__always)
    public func enabled(_ level: LogLevel) -> Bool { level <= threshold }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level <= threshold else { return }
        var bytes = Array(format.line(level, message()).utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + off, $0.count - off) }
            if n < 0 { if errno == EINTR { continue }; return }
            off += n
        }
    }

    public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public func warning(_ m: @autoclosure () -> String) { log(.warning, m()) }
    public func notice(_ m: @autoclosure () -> String) { log(.notice, m()) }
    public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
}
