/// How much the daemon logs, as syslog priorities: the core formats only the lines at or
/// above the threshold, the shell writes them.
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
