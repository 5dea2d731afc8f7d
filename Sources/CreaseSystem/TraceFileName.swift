#if canImport(Glibc)
import Glibc
#endif

/// Names and clocks for trace files.
public enum TraceFileName {
    /// `creased-20261130T011154Z-4242-0.jsonl`: the run's start time (UTC), the process, the part.
    /// Names sort in the order the files were begun within a run.
    public static func make(startSeconds: Int, pid: Int32, part: Int) -> String {
        "creased-\(compactUTC(startSeconds))-\(pid)-\(part).jsonl"
    }

    static func utcFields(_ seconds: Int) -> tm {
        var t = time_t(seconds)
        var fields = tm()
        gmtime_r(&t, &fields)
        return fields
    }

    static func pad(_ v: Int32, _ width: Int) -> String {
        let s = String(v)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }

    static func compactUTC(_ seconds: Int) -> String {
        let f = utcFields(seconds)
        return "\(pad(f.tm_year + 1900, 4))\(pad(f.tm_mon + 1, 2))\(pad(f.tm_mday, 2))T\(pad(f.tm_hour, 2))\(pad(f.tm_min, 2))\(pad(f.tm_sec, 2))Z"
    }

    /// ISO 8601 with milliseconds, for the header's `started`.
    public static func iso8601(seconds: Int, millis: Int) -> String {
        let f = utcFields(seconds)
        return "\(pad(f.tm_year + 1900, 4))-\(pad(f.tm_mon + 1, 2))-\(pad(f.tm_mday, 2))T\(pad(f.tm_hour, 2)):\(pad(f.tm_min, 2)):\(pad(f.tm_sec, 2)).\(pad(Int32(millis), 3))Z"
    }

    /// The wall clock now: (seconds, milliseconds).
    public static func now() -> (seconds: Int, millis: Int) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return (Int(ts.tv_sec), Int(ts.tv_nsec / 1_000_000))
    }
}
