#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseDaemonCore
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

    /// One line: the CPU, cores, memory and build.
    var summary: String { "\(cpuModel), \(cores) cores, \(memoryMiB) MiB, \(kernel), \(buildConfiguration) build" }

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

/// How much of the machine other processes used while a scenario ran: the machine's
/// busy time (/proc/stat) minus the CPU time of the bench and the children it reaped
/// (getrusage), over the elapsed time of all cores. Figures taken while this is high carry
/// other tenants' preemptions and cache pollution.
struct CPUWatch {
    let startNs = Clock.now()
    let startBusy = CPUWatch.machineBusySeconds()
    let startOwn = CPUWatch.ownSeconds()

    static func machineBusySeconds() -> Double {
        guard let first = MachineInfo.readText("/proc/stat")?.split(separator: "\n").first else { return 0 }
        let ticks = first.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 8 else { return 0 }
        // user nice system idle iowait irq softirq steal: everything but idle and iowait.
        let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
        return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func ownSeconds() -> Double {
        var total = 0.0
        for who in [RUSAGE_SELF, RUSAGE_CHILDREN].map({ Int32($0.rawValue) }) {
            var u = rusage()
            getrusage(who, &u)
            total += Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
        }
        return total
    }

    /// The share of all cores other processes kept busy since `init`, 0...1.
    func othersShare(cores: Int) -> Double {
        let elapsed = Double(Clock.now() &- startNs) / 1e9
        guard elapsed > 0, cores > 0 else { return 0 }
        let others = (CPUWatch.machineBusySeconds() - startBusy) - (CPUWatch.ownSeconds() - startOwn)
        return min(1, max(0, others / (elapsed * Double(cores))))
    }
}

/// The monotonic clock every figure is measured with.
enum Clock {
    @inline(__always)
    static func now() -> UInt64 { TraceIO.monotonicNs() }
}
