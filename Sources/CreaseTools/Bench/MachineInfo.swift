#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseDaemon
import Foundation

/// What the figures were measured on: printed at the top of every run.
struct MachineInfo: Sendable, Equatable {
    var cpuModel: String
    var cores: Int
    var memoryMiB: Int
    var kernel: String
    var buildConfiguration: String
    var clockSource: String
    var clockOverheadNs: UInt64

    static var buildConfiguration: String {
        #if DEBUG
        "debug"
        #else
        "release"
        #endif
    }

    /// Reads /proc and /sys, and times the clock.
    static func current() -> MachineInfo {
        var u = utsname()
        uname(&u)
        let release = withUnsafeBytes(of: &u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let machine = withUnsafeBytes(of: &u.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let meminfo = readText("/proc/meminfo") ?? ""
        return MachineInfo(
            cpuModel: cpuModel(cpuinfo: readText("/proc/cpuinfo") ?? "") ?? machine,
            cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            memoryMiB: field("MemTotal", in: meminfo).map { $0 / 1024 } ?? 0,
            kernel: "Linux \(release) \(machine)",
            buildConfiguration: buildConfiguration,
            clockSource: (readText("/sys/devices/system/clocksource/clocksource0/current_clocksource") ?? "unknown")
                .trimmingCharacters(in: .whitespacesAndNewlines),
            clockOverheadNs: clockOverhead())
    }

    /// The first `model name` line of /proc/cpuinfo.
    static func cpuModel(cpuinfo: String) -> String? {
        for line in cpuinfo.split(separator: "\n") where line.hasPrefix("model name") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return nil
    }

    /// A `Name:   123 kB` field of /proc/meminfo or /proc/PID/status, in kB.
    static func field(_ name: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter { $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    static func readText(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            out.append(contentsOf: chunk[0..<n])
            if n < chunk.count { break }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The median cost of one monotonic clock reading, from 10,000 back-to-back pairs.
    static func clockOverhead() -> UInt64 {
        var h = LatencyHistogram(budgetNs: .max)
        for _ in 0..<10_000 {
            let a = Clock.now()
            let b = Clock.now()
            h.record(b &- a)
        }
        return h.value(atQuantile: 0.5)
    }

    func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("cpuModel"); w.string(cpuModel)
        w.key("cores"); w.int(cores)
        w.key("memoryMiB"); w.int(memoryMiB)
        w.key("kernel"); w.string(kernel)
        w.key("build"); w.string(buildConfiguration)
        w.key("clockSource"); w.string(clockSource)
        w.key("clockOverheadNs"); w.int(Int(clockOverheadNs))
        w.endObject()
    }
}

/// The monotonic clock every figure is measured with.
enum Clock {
    @inline(__always)
    static func now() -> UInt64 { TraceIO.monotonicNs() }
}
