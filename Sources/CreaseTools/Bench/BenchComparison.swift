/// `crease bench --compare BASELINE`: each figure of the baseline against the same figure
/// of this run. A figure regressed when its median moved the worse way by more than the
/// noise margin: the larger of the floor (`--margin`, 5 % by default) and the spread
/// either run's repeats showed. Pure: the command prints the rows and exits with `failed`.
struct BenchComparison: Sendable, Equatable {
    enum Verdict: String, Sendable {
        case regressed, improved, same
        /// In the baseline, from a scenario this run ran, but not measured.
        case missing
        /// Measured by this run, not in the baseline.
        case new
    }

    struct Row: Sendable, Equatable {
        var key: String
        var unit: String
        var before: Double?
        var after: Double?
        /// after / before.
        var ratio: Double?
        var margin: Double
        var verdict: Verdict
    }

    var baselinePath: String
    var rows: [Row]
    /// Baseline figures of scenarios this run did not run: neither compared nor failed.
    var notRun: Int

    var regressions: [Row] { rows.filter { $0.verdict == .regressed } }
    var missing: [Row] { rows.filter { $0.verdict == .missing } }
    /// What makes `--compare` exit 1.
    var failed: Bool { !regressions.isEmpty || !missing.isEmpty }

    static let defaultMarginFloor = 0.05

    /// Compares `current` with `baseline`; only the scenarios in `ran` count.
    init(baseline: BenchRepeats, at baselinePath: String, current: BenchRepeats, ran scenarios: [String],
         marginFloor: Double = defaultMarginFloor) {
        self.baselinePath = baselinePath
        var rows: [Row] = []
        var notRun = 0
        var now: [String: ComparableFigure] = [:]
        for f in current.figures { now[f.key] = f }
        var inBaseline = Set<String>()
        for old in baseline.figures {
            inBaseline.insert(old.key)
            guard scenarios.contains(old.scenario) else { notRun += 1; continue }
            guard let new = now[old.key], !new.values.isEmpty else {
                rows.append(Row(key: old.key, unit: old.unit, before: old.median, after: nil, ratio: nil, margin: marginFloor, verdict: .missing))
                continue
            }
            let margin = max(marginFloor, old.spread, new.spread)
            let before = old.median, after = new.median
            let ratio = before != 0 ? after / before : (after == 0 ? 1 : .infinity)
            let worse = old.better == .lower ? ratio > 1 + margin : ratio < 1 / (1 + margin)
            let better = old.better == .lower ? ratio < 1 / (1 + margin) : ratio > 1 + margin
            rows.append(Row(key: old.key, unit: old.unit, before: before, after: after, ratio: ratio, margin: margin,
                            verdict: worse ? .regressed : better ? .improved : .same))
        }
        for f in current.figures where !inBaseline.contains(f.key) {
            rows.append(Row(key: f.key, unit: f.unit, before: nil, after: f.median, ratio: nil, margin: marginFloor, verdict: .new))
        }
        self.rows = rows
        self.notRun = notRun
    }

    /// The before/after/ratio table the command prints.
    func table() -> TextTable {
        TextTable(title: "compared with \(baselinePath): medians, after / before, and the noise margin each was judged by",
                  header: ["figure", "before", "after", "ratio", "margin", "verdict"],
                  rows: rows.map { r in
                      [r.key, r.before.map { Self.show($0, r.unit) } ?? "-", r.after.map { Self.show($0, r.unit) } ?? "-",
                       r.ratio.map { Format.fixed($0, 3) + "x" } ?? "-", "±" + Format.fixed(r.margin * 100, 1) + " %",
                       r.verdict == .regressed || r.verdict == .missing ? r.verdict.rawValue.uppercased() : r.verdict.rawValue]
                  })
    }

    /// One line that says how the comparison came out.
    var summary: String {
        let count = { (v: Verdict) in rows.filter { $0.verdict == v }.count }
        var parts = ["\(rows.count - count(.new)) figures compared", "\(count(.regressed)) regressed", "\(count(.improved)) improved",
                     "\(count(.same)) within their margin"]
        if count(.missing) > 0 { parts.append("\(count(.missing)) of the baseline not measured") }
        if count(.new) > 0 { parts.append("\(count(.new)) new (not in the baseline)") }
        if notRun > 0 { parts.append("\(notRun) from scenarios not run") }
        return parts.joined(separator: ", ")
    }

    static func show(_ v: Double, _ unit: String) -> String {
        Format.figure(Figure(name: "", value: v, unit: unit))
    }
}
