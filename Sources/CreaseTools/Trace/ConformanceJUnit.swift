import CreaseCore

/// A trace's observations as a JUnit XML report, the format Jenkins and GitLab read as
/// test results: one test case per layout the rig observed (by the seq of its push),
/// failing when any observation of it mismatched; the failure lists the differences.
enum ConformanceJUnit {
    static func render(_ report: ConformanceReport, suite: String, app: String, startT: UInt64) -> String {
        var w = XMLWriter()
        let failures = report.cases.filter { !$0.mismatches.isEmpty }.count
        let seconds = Timescale.decimals3(Double((report.lastT ?? startT) &- (report.firstT ?? startT)) / 1e9)
        w.begin("testsuites", [("name", "crease conformance"), ("tests", String(report.cases.count)), ("failures", String(failures)),
                               ("errors", "0"), ("time", seconds)])
        w.begin("testsuite", [("name", suite), ("tests", String(report.cases.count)), ("failures", String(failures)), ("errors", "0"),
                              ("skipped", "0"), ("time", seconds)])
        for c in report.cases {
            let span = c.observations.last!.t &- c.observations.first!.t
            w.begin("testcase", [("classname", "conformance.\(app)"), ("name", "layout seq \(c.layoutSeq)"),
                                 ("time", Timescale.decimals3(Double(span) / 1e9))])
            let mismatches = c.mismatches
            if !mismatches.isEmpty {
                var body: [String] = []
                for o in mismatches {
                    body.append("observation at seq \(o.seq), t \(Timescale.seconds(Int64(o.t &- startT)))"
                                + (o.result.matchedSeq.map { ", the device still shows seq \($0)" } ?? "") + ":")
                    body += o.result.differences.map { "  \($0)" }
                }
                let first = mismatches[0].result.differences.first.map { ": \($0)" } ?? ""
                w.element("failure", [("type", "mismatch"),
                                      ("message", "\(mismatches.count) of \(c.observations.count) observations mismatched\(first)")],
                          text: body.joined(separator: "\n"))
            }
            w.element("system-out", text: Verdict.allCases.map { "\($0.rawValue) \(c.count($0))" }.joined(separator: ", "))
            w.end()
        }
        w.end()
        w.end()
        return w.finish()
    }
}
