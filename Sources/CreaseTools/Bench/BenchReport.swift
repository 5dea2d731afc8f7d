import CreaseCore
import CreaseDaemonCore
import Foundation

/// One latency distribution as `crease bench` reports it: count and quantiles in
/// nanoseconds, plus the points of its percentile curve for `--svg`.
struct Distribution: Sendable, Equatable {
    var label: String
    var count: Int
    var p50Ns: UInt64
    var p90Ns: UInt64
    var p99Ns: UInt64
    var p999Ns: UInt64
    var maxNs: UInt64
    /// Events over the budget, where one applies.
    var overBudget: Int?
    /// (quantile, value) pairs from 0 up to the last quantile the count resolves, then 1 → max.
    var curve: [CurvePoint]

    struct CurvePoint: Sendable, Equatable {
        var quantile: Double
        var ns: UInt64
    }

    /// Quantiles drawn on the curve: 1 - 10^(-k/10), as far as the count resolves them.
    static func curveQuantiles(count: Int) -> [Double] {
        var qs: [Double] = []
        for k in 0...50 {
            let q = 1 - pow(10, -Double(k) / 10)
            if Double(count) * (1 - q) < 1 { break }
            qs.append(q)
        }
        return qs
    }

    init(label: String, count: Int, p50Ns: UInt64, p90Ns: UInt64, p99Ns: UInt64, p999Ns: UInt64, maxNs: UInt64,
         overBudget: Int?, curve: [CurvePoint]) {
        self.label = label
        self.count = count
        self.p50Ns = p50Ns
        self.p90Ns = p90Ns
        self.p99Ns = p99Ns
        self.p999Ns = p999Ns
        self.maxNs = maxNs
        self.overBudget = overBudget
        self.curve = curve
    }

    /// From the daemon's own histogram type, recorded in this process.
    init(label: String, histogram h: LatencyHistogram, withBudget: Bool = false) {
        var curve = Distribution.curveQuantiles(count: Int(h.count)).map { CurvePoint(quantile: $0, ns: h.value(atQuantile: $0)) }
        if h.count > 0 { curve.append(CurvePoint(quantile: 1, ns: h.maxNs)) }
        self.init(label: label, count: Int(h.count),
                  p50Ns: h.value(atQuantile: 0.5), p90Ns: h.value(atQuantile: 0.9), p99Ns: h.value(atQuantile: 0.99),
                  p999Ns: h.value(atQuantile: 0.999), maxNs: h.maxNs,
                  overBudget: withBudget ? Int(h.overBudget) : nil, curve: curve)
    }

    /// From a daemon's `stats` reply (`latency` object, microseconds to 0.1).
    init?(label: String, daemonLatency v: JSONValue?) {
        guard let v, case .number(let count)? = v["count"] else { return nil }
        func ns(_ key: String) -> UInt64 {
            if case .number(let us)? = v[key] { return UInt64((us * 1000).rounded()) }
            return 0
        }
        var over: Int?
        if case .number(let o)? = v["overBudget"] { over = Int(o) }
        // The quantiles the daemon reports, as far as its count resolves them, then the max.
        let points: [(Double, String)] = [(0.5, "p50Us"), (0.9, "p90Us"), (0.99, "p99Us"), (0.999, "p999Us")]
            .filter { count * (1 - $0.0) >= 1 } + [(1, "maxUs")]
        self.init(label: label, count: Int(count), p50Ns: ns("p50Us"), p90Ns: ns("p90Us"), p99Ns: ns("p99Us"),
                  p999Ns: ns("p999Us"), maxNs: ns("maxUs"), overBudget: over,
                  curve: count > 0 ? points.map { CurvePoint(quantile: $0.0, ns: ns($0.1)) } : [])
    }
}

/// A figure that is not a distribution: a rate, a count, a size.
struct Figure: Sendable, Equatable {
    var name: String
    var value: Double
    var unit: String
    /// Which way is better, for `--compare`; nil for a figure that is not compared (a
    /// count, or a ratio of figures compared themselves).
    var better: Better?

    init(name: String, value: Double, unit: String, better: Better? = nil) {
        self.name = name
        self.value = value
        self.unit = unit
        self.better = better ?? Figure.direction(ofUnit: unit)
    }

    /// Rates are better higher; sizes, times and instruction counts lower; other units
    /// (counts, ratios) say nothing by themselves.
    static func direction(ofUnit unit: String) -> Better? {
        if unit.hasSuffix("/s") { return .higher }
        return ["MiB", "ns", "us", "ms", "instructions"].contains(unit) ? .lower : nil
    }
}

/// Which way a figure improves.
enum Better: String, Sendable, Equatable {
    case lower, higher
}

/// A target of the issues, checked against what was measured.
struct TargetCheck: Sendable, Equatable {
    enum Bound: String, Sendable { case atMost = "<=", atLeast = ">=", below = "<" }
    var name: String
    var measured: Double
    var bound: Bound
    var limit: Double
    var unit: String

    var met: Bool {
        switch bound {
        case .atMost: measured <= limit
        case .atLeast: measured >= limit
        case .below: measured < limit
        }
    }

    /// How far from the limit, as a factor of it: "1.8x over", "2.4x under".
    var margin: String {
        guard limit > 0, measured > 0 else { return "" }
        let factor = measured / limit
        switch bound {
        case .atMost, .below: return factor <= 1 ? "\(Format.fixed(1 / factor, 2))x headroom" : "\(Format.fixed(factor, 2))x over"
        case .atLeast: return factor >= 1 ? "\(Format.fixed(factor, 2))x headroom" : "\(Format.fixed(1 / factor, 2))x short"
        }
    }
}

/// A table of distributions that belong together (drawn as one panel by `--svg`).
struct DistributionGroup: Sendable, Equatable {
    var title: String
    var rows: [Distribution]
}

struct ScenarioReport: Sendable, Equatable {
    var name: String
    /// What was run: counts, apps, daemon flags.
    var setup: [String]
    var groups: [DistributionGroup]
    /// Finer distributions, in `--json` only (the text shows them as `tables`).
    var detail: [DistributionGroup]
    /// Tables that are not distributions (per-event matrices): a header and rows of cells.
    var tables: [TextTable]
    var figures: [Figure]
    var targets: [TargetCheck]
    var notes: [String]
    /// What went wrong that is not a figure: a dropped subscriber, a lost push, a
    /// divergent replay, a daemon that did not stop cleanly. Any makes the exit status 1.
    var problems: [String] = []
    /// The share of the machine other processes used meanwhile (see `CPUWatch`).
    var othersCPU: Double?

    init(name: String, setup: [String] = [], groups: [DistributionGroup] = [], detail: [DistributionGroup] = [],
         tables: [TextTable] = [], figures: [Figure] = [], targets: [TargetCheck] = [], notes: [String] = []) {
        self.name = name
        self.setup = setup
        self.groups = groups
        self.detail = detail
        self.tables = tables
        self.figures = figures
        self.targets = targets
        self.notes = notes
    }
}

struct TextTable: Sendable, Equatable {
    var title: String
    var header: [String]
    var rows: [[String]]
}

struct BenchReport: Sendable, Equatable {
    var machine: MachineInfo
    var scenarios: [ScenarioReport]
    /// With `--repeat N` (N > 1): each compared figure's values.
    var repeats: BenchRepeats?
    /// With `--compare FILE`.
    var comparison: BenchComparison?

    static let frameNs = 1_000_000_000.0 / 120   // one 120 Hz frame: 8.33 ms
}

/// Number formatting without Foundation's locale.
enum Format {
    static func fixed(_ v: Double, _ decimals: Int) -> String {
        guard v.isFinite else { return "\(v)" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let r = (abs(v) * scale).rounded()
        let whole = Int(r / scale)
        let frac = Int(r - Double(whole) * scale)
        let sign = v < 0 && r > 0 ? "-" : ""
        guard decimals > 0 else { return sign + grouped(whole) }
        var f = String(frac)
        while f.count < decimals { f = "0" + f }
        return "\(sign)\(grouped(whole)).\(f)"
    }

    static func grouped(_ n: Int) -> String {
        let s = String(n)
        guard s.count > 4 else { return s }
        var out = ""
        for (i, ch) in s.reversed().enumerated() {
            if i > 0, i % 3 == 0 { out.append(",") }
            out.append(ch)
        }
        return String(out.reversed())
    }

    /// Microseconds with precision that suits the size.
    static func micros(_ ns: UInt64) -> String {
        let us = Double(ns) / 1000
        if us < 10 { return fixed(us, 2) }
        if us < 1000 { return fixed(us, 1) }
        return fixed(us, 0)
    }

    static func figure(_ f: Figure) -> String {
        let v = f.value.rounded() == f.value && abs(f.value) < 1e15 ? grouped(Int(f.value)) : fixed(f.value, f.value < 10 ? 3 : 1)
        return f.unit.isEmpty ? v : "\(v) \(f.unit)"
    }

    static func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let n = s.count
        guard n < width else { return s }
        let fill = String(repeating: " ", count: width - n)
        return right ? fill + s : s + fill
    }
}

extension BenchReport {
    /// The human-readable report.
    func text() -> String {
        var out: [String] = []
        out.append("crease bench")
        out.append("machine   \(machine.cpuModel), \(machine.cores) cores, \(machine.memoryMiB) MiB, \(machine.kernel)")
        out.append("build     \(machine.buildConfiguration)\(machine.buildConfiguration == "release" ? "" : "  (figures from a debug build are not comparable: use swift build -c release)")")
        out.append("clock     CLOCK_MONOTONIC (\(machine.clockSource)); one reading costs \(machine.clockOverheadNs) ns at the median")
        for s in scenarios {
            out.append("")
            out.append("== \(s.name)")
            if let o = s.othersCPU {
                out.append("   other processes used \(Format.fixed(o * 100, 0)) % of the machine's CPU meanwhile\(o > 0.1 ? ": tails and medians may carry their preemptions" : "")")
            }
            for line in s.setup { out.append("   \(line)") }
            for t in s.tables { out.append(""); out += Self.render(t) }
            for g in s.groups {
                out.append("")
                out += Self.render(g)
            }
            if !s.figures.isEmpty {
                out.append("")
                let width = s.figures.map(\.name.count).max() ?? 0
                for f in s.figures { out.append("   \(Format.pad(f.name, width))  \(Format.figure(f))") }
            }
            if !s.targets.isEmpty {
                out.append("")
                for t in s.targets {
                    let measured = Format.figure(Figure(name: "", value: t.measured, unit: t.unit))
                    let limit = Format.figure(Figure(name: "", value: t.limit, unit: t.unit))
                    let margin = t.margin.isEmpty ? "" : " (\(t.margin))"
                    out.append("   target \(t.met ? "MET   " : "MISSED") \(t.name): \(measured) \(t.bound.rawValue) \(limit)\(margin)")
                }
            }
            for n in s.notes { out.append("   note: \(n)") }
            for p in s.problems { out.append("   PROBLEM: \(p)") }
        }
        if let r = repeats {
            out.append("")
            out.append("== repeats")
            out += Self.render(r.table())
        }
        if let c = comparison {
            out.append("")
            out.append("== comparison")
            out += Self.render(c.table())
            out.append("   \(c.summary)")
            out.append(c.failed ? "   REGRESSED: exit status 1" : "   no regression beyond the margins: exit status 0")
        }
        return out.joined(separator: "\n")
    }

    static func render(_ g: DistributionGroup) -> [String] {
        let hasBudget = g.rows.contains { $0.overBudget != nil }
        var header = ["", "count", "p50 us", "p90 us", "p99 us", "p99.9 us", "max us", "p99/frame"]
        if hasBudget { header.append("over budget") }
        var rows: [[String]] = []
        for d in g.rows {
            var r = [d.label, Format.grouped(d.count), Format.micros(d.p50Ns), Format.micros(d.p90Ns), Format.micros(d.p99Ns),
                     Format.micros(d.p999Ns), Format.micros(d.maxNs), Format.fixed(Double(d.p99Ns) / frameNs * 100, 3) + "%"]
            if hasBudget { r.append(d.overBudget.map { Format.grouped($0) } ?? "") }
            rows.append(r)
        }
        return render(TextTable(title: g.title, header: header, rows: rows))
    }

    static func render(_ t: TextTable) -> [String] {
        var widths = t.header.map(\.count)
        for r in t.rows { for (i, c) in r.enumerated() where i < widths.count { widths[i] = max(widths[i], c.count) } }
        func line(_ cells: [String]) -> String {
            "   " + cells.enumerated().map { i, c in Format.pad(c, widths[i], right: i > 0) }.joined(separator: "  ")
        }
        return ["   \(t.title)", line(t.header)] + t.rows.map(line)
    }

    /// The whole report as one JSON document.
    func json() -> [UInt8] {
        var w = JSONWriter(capacity: 16 * 1024)
        w.beginObject()
        w.key("machine"); machine.write(to: &w)
        w.key("scenarios"); w.beginArray()
        for s in scenarios {
            w.beginObject()
            w.key("name"); w.string(s.name)
            w.key("setup"); w.beginArray(); for l in s.setup { w.string(l) }; w.endArray()
            if let o = s.othersCPU { w.key("othersCPU"); w.number((o * 1000).rounded() / 1000) }
            w.key("groups"); Self.write(s.groups, to: &w)
            w.key("detail"); Self.write(s.detail, to: &w)
            w.key("tables"); w.beginArray()
            for t in s.tables {
                w.beginObject()
                w.key("title"); w.string(t.title)
                w.key("header"); w.beginArray(); for h in t.header { w.string(h) }; w.endArray()
                w.key("rows"); w.beginArray()
                for r in t.rows { w.beginArray(); for c in r { w.string(c) }; w.endArray() }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            w.key("figures"); w.beginArray()
            for f in s.figures {
                w.beginObject(); w.key("name"); w.string(f.name); w.key("value"); w.number(f.value); w.key("unit"); w.string(f.unit); w.endObject()
            }
            w.endArray()
            w.key("targets"); w.beginArray()
            for t in s.targets {
                w.beginObject()
                w.key("name"); w.string(t.name)
                w.key("measured"); w.number(t.measured)
                w.key("bound"); w.string(t.bound.rawValue)
                w.key("limit"); w.number(t.limit)
                w.key("unit"); w.string(t.unit)
                w.key("met"); w.bool(t.met)
                w.endObject()
            }
            w.endArray()
            w.key("notes"); w.beginArray(); for n in s.notes { w.string(n) }; w.endArray()
            w.key("problems"); w.beginArray(); for p in s.problems { w.string(p) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        if let r = repeats {
            w.key("repeats"); w.beginObject()
            w.key("count"); w.int(r.count)
            w.key("figures"); w.beginArray()
            for f in r.figures {
                w.beginObject()
                w.key("key"); w.string(f.key); w.key("unit"); w.string(f.unit); w.key("better"); w.string(f.better.rawValue)
                w.key("median"); w.number(f.median); w.key("spread"); w.number(f.spread)
                w.key("values"); w.beginArray(); for v in f.values { w.number(v) }; w.endArray()
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        if let c = comparison {
            w.key("comparison"); w.beginObject()
            w.key("baseline"); w.string(c.baselinePath)
            w.key("failed"); w.bool(c.failed)
            w.key("summary"); w.string(c.summary)
            w.key("rows"); w.beginArray()
            for r in c.rows {
                w.beginObject()
                w.key("key"); w.string(r.key); w.key("unit"); w.string(r.unit)
                w.key("before"); if let b = r.before { w.number(b) } else { w.null() }
                w.key("after"); if let a = r.after { w.number(a) } else { w.null() }
                w.key("ratio"); if let x = r.ratio, x.isFinite { w.number(x) } else { w.null() }
                w.key("margin"); w.number(r.margin)
                w.key("verdict"); w.string(r.verdict.rawValue)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endObject()
        return w.bytes
    }

    static func write(_ groups: [DistributionGroup], to w: inout JSONWriter) {
        w.beginArray()
        for g in groups {
            w.beginObject()
            w.key("title"); w.string(g.title)
            w.key("distributions"); w.beginArray()
            for d in g.rows { write(d, to: &w) }
            w.endArray()
            w.endObject()
        }
        w.endArray()
    }

    static func write(_ d: Distribution, to w: inout JSONWriter) {
        w.beginObject()
        w.key("label"); w.string(d.label)
        w.key("count"); w.int(d.count)
        w.key("p50Ns"); w.int(Int(d.p50Ns))
        w.key("p90Ns"); w.int(Int(d.p90Ns))
        w.key("p99Ns"); w.int(Int(d.p99Ns))
        w.key("p999Ns"); w.int(Int(d.p999Ns))
        w.key("maxNs"); w.int(Int(d.maxNs))
        if let o = d.overBudget { w.key("overBudget"); w.int(o) }
        w.endObject()
    }
}
