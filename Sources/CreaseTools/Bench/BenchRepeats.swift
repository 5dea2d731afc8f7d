/// The figures `--save` keeps and `--compare` compares: every distribution's p50 and p99
/// and every figure that has a better direction, each under a key that names its
/// scenario, measured once per repeat.
struct ComparableFigure: Sendable, Equatable {
    var key: String
    var unit: String
    var better: Better
    /// One value per repeat, in the order measured.
    var values: [Double]

    var median: Double {
        let s = values.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// The range of the repeats as a share of their median: the noise one run showed.
    var spread: Double {
        guard let lo = values.min(), let hi = values.max() else { return 0 }
        let m = median
        return m != 0 ? (hi - lo) / abs(m) : 0
    }

    /// The scenario the key belongs to (before its first " / ").
    var scenario: String { key.split(separator: "/", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? key }
}

extension ScenarioReport {
    /// One value of each comparable figure of this report, in the report's order.
    func comparable() -> [(key: String, unit: String, better: Better, value: Double)] {
        var out: [(key: String, unit: String, better: Better, value: Double)] = []
        for g in groups {
            for d in g.rows where d.count > 0 {
                out.append(("\(name) / \(g.title) / \(d.label) / p50", "ns", .lower, Double(d.p50Ns)))
                out.append(("\(name) / \(g.title) / \(d.label) / p99", "ns", .lower, Double(d.p99Ns)))
            }
        }
        for f in figures {
            if let better = f.better, f.value.isFinite { out.append(("\(name) / \(f.name)", f.unit, better, f.value)) }
        }
        return out
    }
}

/// The repeats of one `crease bench` run: each comparable figure with a value per repeat.
struct BenchRepeats: Sendable, Equatable {
    private(set) var figures: [ComparableFigure] = []
    private(set) var count = 0

    /// Adds one repeat's reports. A figure a repeat did not produce (a scenario that
    /// failed) keeps fewer values.
    mutating func add(_ reports: [ScenarioReport]) {
        count += 1
        var index: [String: Int] = [:]
        for (i, f) in figures.enumerated() { index[f.key] = i }
        for report in reports {
            for c in report.comparable() {
                if let i = index[c.key] {
                    figures[i].values.append(c.value)
                } else {
                    index[c.key] = figures.count
                    figures.append(ComparableFigure(key: c.key, unit: c.unit, better: c.better, values: [c.value]))
                }
            }
        }
    }

    init() {}

    init(figures: [ComparableFigure], count: Int) {
        self.figures = figures
        self.count = count
    }

    /// A table of every figure's median and spread.
    func table() -> TextTable {
        TextTable(title: "\(count) repeat\(count == 1 ? "" : "s"): median, range and spread of each compared figure",
                  header: ["figure", "median", "min", "max", "spread", "better"],
                  rows: figures.map { f in
                      [f.key, BenchComparison.show(f.median, f.unit), BenchComparison.show(f.values.min() ?? 0, f.unit),
                       BenchComparison.show(f.values.max() ?? 0, f.unit), Format.fixed(f.spread * 100, 1) + " %", f.better.rawValue]
                  })
    }
}
