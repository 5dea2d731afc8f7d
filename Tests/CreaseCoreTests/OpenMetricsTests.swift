@testable import CreaseCore
import Testing

/// The OpenMetrics formatter over stats objects built by hand (the daemon's own stats
/// go through the real prometheus_client parser in clients/python/tests).
@Suite struct OpenMetricsTests {
    func stats(_ extra: String = "") throws -> JSONValue {
        try JSON.parse(Array("""
            {"events":12,"rejected":1,"clients":2,"subscribers":1,"rssKiB":2048,\(extra)
             "latency":{"count":12,"budgetUs":1000,"overBudget":2,"sumUs":3600.5,"buckets":[[100,3],[1000,10],[2500,12]]},
             "trace":{"state":"failing","records":30,"bytes":4096,"lost":5,"gaps":1,"files":2}}
            """.utf8))
    }

    func lines(_ text: String) -> [String] { text.split(separator: "\n").map(String.init) }

    @Test func countersGaugesAndAHistogramInSeconds() throws {
        let text = OpenMetrics.format(stats: try stats())
        let l = lines(text)
        #expect(l.contains("# TYPE crease_events counter"))
        #expect(l.contains("crease_events_total 12"))
        #expect(l.contains("crease_rejected_lines_total 1"))
        #expect(l.contains("crease_clients 2"))
        #expect(l.contains("crease_resident_memory_bytes 2097152"))
        #expect(l.contains("# TYPE crease_latency_seconds histogram"))
        #expect(l.contains(#"crease_latency_seconds_bucket{le="0.0001"} 3"#))
        #expect(l.contains(#"crease_latency_seconds_bucket{le="0.001"} 10"#))
        #expect(l.contains(#"crease_latency_seconds_bucket{le="0.0025"} 12"#))
        #expect(l.contains(#"crease_latency_seconds_bucket{le="+Inf"} 12"#))
        #expect(l.contains("crease_latency_seconds_count 12"))
        #expect(l.contains("crease_latency_seconds_sum 0.0036005"))
        #expect(l.contains("crease_over_budget_total 2"))
        #expect(l.contains("crease_trace_lost_records_total 5"))
        #expect(l.contains("crease_trace_failing 1"))
        #expect(text.hasSuffix("# EOF\n"))
        // Members the stats lack are left out, not invented.
        #expect(!text.contains("publishes"))
        #expect(!text.contains("glitches"))
    }

    @Test func everySampleCarriesTheRigLabelsEscaped() throws {
        let text = OpenMetrics.format(stats: try stats(#""labels":{"rig":"r\"1","site.name":"lab\\2","9x":"a\nb","n":3},"#))
        let samples = lines(text).filter { !$0.hasPrefix("#") }
        #expect(!samples.isEmpty)
        for s in samples {
            #expect(s.hasPrefix("crease_") && s.contains(#"{rig="r\"1",site_name="lab\\2",_9x="a\nb""#), "\(s)")
        }
    }

    @Test func theRigIsNamedAfterItsSocketUnlessItsLabelsNameIt() throws {
        #expect(OpenMetrics.rigName(socketPath: "/run/crease/rig1.sock") == "rig1")
        #expect(OpenMetrics.rigName(socketPath: "plain") == "plain")
        let unlabelled = OpenMetrics.format(stats: try stats(), rig: "rig1")
        #expect(unlabelled.contains("crease_events_total{rig=\"rig1\"} 12\n"))
        let labelled = OpenMetrics.format(stats: try stats(#""labels":{"site":"lab1","rig":"bench-7"},"#), rig: "rig1")
        #expect(labelled.contains("crease_events_total{site=\"lab1\",rig=\"bench-7\"} 12\n"))
        #expect(!labelled.contains("rig1"))
    }

    @Test func glitchesAndConformanceByKey() throws {
        let text = OpenMetrics.format(stats: try stats(#""glitches":{"flapping":2,"flash":1,"offscreen":0},"observations":{"match":7,"stale":0,"mismatch":1},"#))
        let l = lines(text)
        #expect(l.contains(#"crease_glitches_total{kind="flapping"} 2"#))
        #expect(l.contains(#"crease_glitches_total{kind="flash"} 1"#))
        #expect(l.contains(#"crease_glitches_total{kind="offscreen"} 0"#))
        #expect(l.contains(#"crease_observations_total{verdict="mismatch"} 1"#))
    }

    @Test func secondsAreExactDecimals() {
        #expect(OpenMetrics.secondsText(micros: 25) == "0.000025")
        #expect(OpenMetrics.secondsText(micros: 1_000_000) == "1.0")
        #expect(OpenMetrics.secondsText(micros: 2_500_000.4) == "2.5000004")
        #expect(OpenMetrics.secondsText(micros: 0) == "0.0")
    }
}

@Suite struct PrometheusTextTests {
    @Test func countersAreTypedUnderTheirSampleNameWithoutUnitOrEOF() throws {
        let stats = try JSON.parse(Array(#"{"events":3,"clients":1,"rssKiB":4,"latency":{"count":3,"sumUs":10,"buckets":[[100,3]],"overBudget":0}}"#.utf8))
        let text = OpenMetrics.format(stats: stats, dialect: .prometheusText)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("# TYPE crease_events_total counter"))
        #expect(lines.contains("crease_events_total 3"))
        #expect(lines.contains("# TYPE crease_clients gauge"))
        #expect(lines.contains("# TYPE crease_latency_seconds histogram"))
        #expect(!text.contains("# UNIT") && !text.contains("# EOF"))
        // The same samples as OpenMetrics, line for line.
        let om = OpenMetrics.format(stats: stats).split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(om == lines.filter { !$0.hasPrefix("#") }.map { Substring($0) })
    }
}
