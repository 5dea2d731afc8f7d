/// How many refusals of a connection reach the log: a flood of refused peers (thousands a
/// second) wrote a line each, 68 MB in 10 s. At most `perSecond` lines in a second of the
/// daemon's clock; the ones past that are counted, and the next line that is written says
/// how many were left out. Pure: time is a parameter.
struct RefusalLog {
    static let perSecond = 10
    private var windowStart: UInt64 = 0
    private var inWindow = 0
    /// Refusals not logged since the last line that was.
    private(set) var suppressed = 0

    /// Whether the refusal at `now` is logged, and if so how many before it were not.
    mutating func admit(at now: UInt64) -> (log: Bool, leftOut: Int) {
        if now &- windowStart >= 1_000_000_000 || now < windowStart {
            windowStart = now
            inWindow = 0
        }
        guard inWindow < RefusalLog.perSecond else {
            suppressed += 1
            return (false, 0)
        }
        inWindow += 1
        defer { suppressed = 0 }
        return (true, suppressed)
    }
}
