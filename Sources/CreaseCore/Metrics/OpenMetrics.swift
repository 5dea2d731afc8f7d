/// The daemon's `stats` object as metrics for Prometheus. Pure: the same stats give the
/// same text. Members a stats object lacks are left out. Every series carries the rig's
/// labels: `rig` (the socket's name, unless the stats' labels name the rig themselves), so
/// that several rigs on one host never collide, then the stats' `labels` (an object of
/// strings) when there are any.
public enum OpenMetrics {
    /// Every family name starts with this.
    public static let prefix = "crease_"

    /// The same series in two spellings.
    public enum Dialect: Sendable {
        /// OpenMetrics 1.0 (`crease stats --openmetrics`): a counter family `x` has the
        /// sample `x_total`; `# UNIT` lines; `# EOF` at the end.
        case openMetrics
        /// The Prometheus text format 0.0.4, which node_exporter's textfile collector reads
        /// (`creased --metrics-textfile`, `crease stats --prometheus`): counters are typed
        /// under their `_total` name (that collector would take an OpenMetrics counter for
        /// an untyped metric), no `# UNIT`, no `# EOF`.
        case prometheusText
    }

    public static func format(stats: JSONValue, dialect: Dialect = .openMetrics, rig: String? = nil) -> String {
        var labels = rigLabels(stats["labels"])
        if let rig, !labels.contains(where: { $0.0 == "rig" }) { labels.insert(("rig", rig), at: 0) }
        var out = Exposition(labels: labels, dialect: dialect)
        let counters: [(key: String, name: String, help: String)] = [
            ("events", "events", "Events applied."),
            ("rejected", "rejected_lines", "Lines rejected as invalid input."),
            ("forbidden", "forbidden", "Lines and connections the access policy refused."),
            ("commands", "commands", "Commands answered."),
            ("publishes", "publishes", "Layouts published to subscribers."),
            ("batches", "batches", "Batches of more than one event published as one layout."),
            ("batchedEvents", "batched_events", "Events inside those batches."),
            ("accepted", "connections", "Connections accepted."),
            ("dropped", "dropped_subscribers", "Slow subscribers dropped."),
            ("oversizedLines", "oversized_lines", "Lines over the line limit."),
            ("clampedAngles", "clamped_angles", "Hinge readings past 0 or 180 degrees, within the profile's tolerance, applied clamped."),
            ("logDroppedLines", "log_dropped_lines", "Log lines dropped because stderr was not read."),
            ("bytesIn", "received_bytes", "Bytes read from clients."),
            ("bytesOut", "sent_bytes", "Bytes written to clients."),
        ]
        for c in counters {
            if let v = number(stats[c.key]) { out.counter(c.name, help: c.help, value: v) }
        }
        if let v = number(stats["clients"]) { out.gauge("clients", help: "Connections open now.", value: v) }
        if let v = number(stats["subscribers"]) { out.gauge("subscribers", help: "Connections subscribed to a topic now.", value: v) }
        if let v = number(stats["rssKiB"]) {
            out.gauge("resident_memory_bytes", unit: "bytes", help: "Resident set size of the daemon.", value: v * 1024)
        }
        if let v = number(stats["uptimeS"]) { out.gauge("uptime_seconds", unit: "seconds", help: "Seconds since the daemon started.", value: v) }
        if let latency = stats["latency"] { out.latency(latency) }
        if let trace = stats["trace"] { out.trace(trace) }
        out.perKey(stats["glitches"], family: "glitches", label: "kind", help: "Glitches detected, by kind.")
        out.perKey(stats["observations"], family: "observations", label: "verdict",
                   help: "Observations compared with the published layouts, by verdict.")
        if dialect == .openMetrics { out.text += "# EOF\n" }
        return out.text
    }

    /// A rig's name from its socket: `/run/crease/rig1.sock` is `rig1`.
    public static func rigName(socketPath: String) -> String {
        let file = socketPath.split(separator: "/").last.map(String.init) ?? socketPath
        return file.hasSuffix(".sock") && file.count > 5 ? String(file.dropLast(5)) : file
    }

    /// The rig's labels as (name, value) pairs, in the order the stats give them; names
    /// are made valid label names (anything but letters, digits and `_` becomes `_`).
    static func rigLabels(_ labels: JSONValue?) -> [(String, String)] {
        guard case .object(let members)? = labels else { return [] }
        return members.compactMap { key, value in
            guard case .string(let s) = value, !key.isEmpty else { return nil }
            return (labelName(key), s)
        }
    }

    static func labelName(_ key: String) -> String {
        var name = String(key.unicodeScalars.map { c -> Character in
            let ok = (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "_"
            return ok ? Character(c) : "_"
        })
        if let first = name.unicodeScalars.first, first >= "0" && first <= "9" { name = "_" + name }
        return name
    }

    static func number(_ v: JSONValue?) -> Double? {
        guard case .number(let x)? = v, x.isFinite else { return nil }
        return x
    }

    /// Seconds from microseconds (to 0.1 µs), as exact decimal text (`2500` → `0.0025`).
    static func secondsText(micros: Double) -> String {
        let tenths = UInt64((max(0, micros) * 10).rounded())
        let whole = tenths / 10_000_000
        var fraction = String(tenths % 10_000_000)
        guard fraction != "0" else { return "\(whole).0" }
        fraction = String(repeating: "0", count: 7 - fraction.count) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(whole).\(fraction)"
    }

    static func valueText(_ v: Double) -> String {
        if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return v.description
    }

    /// The text being built, and the labels every sample carries.
    struct Exposition {
        let labels: [(String, String)]
        let dialect: Dialect
        var text = ""

        mutating func family(_ name: String, type: String, unit: String?, help: String) {
            // The text format names a counter by its sample.
            let name = dialect == .prometheusText && type == "counter" ? "\(name)_total" : name
            text += "# TYPE \(OpenMetrics.prefix)\(name) \(type)\n"
            if let unit, dialect == .openMetrics { text += "# UNIT \(OpenMetrics.prefix)\(name) \(unit)\n" }
            text += "# HELP \(OpenMetrics.prefix)\(name) \(help)\n"
        }

        mutating func sample(_ name: String, labels extra: [(String, String)] = [], _ value: String) {
            text += OpenMetrics.prefix + name
            // A rig label named like one of the family's own (le, kind, verdict) yields to it.
            let all = labels.filter { rig in !extra.contains { $0.0 == rig.0 } } + extra
            if !all.isEmpty {
                text += "{" + all.map { "\($0.0)=\"\(Exposition.escape($0.1))\"" }.joined(separator: ",") + "}"
            }
            text += " \(value)\n"
        }

        mutating func counter(_ name: String, unit: String? = nil, help: String, value: Double) {
            family(name, type: "counter", unit: unit, help: help)
            sample("\(name)_total", OpenMetrics.valueText(value))
        }

        mutating func gauge(_ name: String, unit: String? = nil, help: String, value: Double) {
            family(name, type: "gauge", unit: unit, help: help)
            sample(name, OpenMetrics.valueText(value))
        }

        /// `latency`: a histogram in seconds from its cumulative `buckets` ([le µs, count]
        /// pairs), `count` and `sumUs`; the budget and the events over it beside it.
        mutating func latency(_ l: JSONValue) {
            if case .array(let buckets)? = l["buckets"], let count = OpenMetrics.number(l["count"]) {
                family("latency_seconds", type: "histogram", unit: "seconds",
                       help: "Time from reading an event to its layout queued to every subscriber.")
                for b in buckets {
                    guard case .array(let pair) = b, pair.count == 2, let le = OpenMetrics.number(pair[0]), le >= 0,
                          let c = OpenMetrics.number(pair[1]) else { continue }
                    sample("latency_seconds_bucket", labels: [("le", OpenMetrics.secondsText(micros: le))], OpenMetrics.valueText(c))
                }
                sample("latency_seconds_bucket", labels: [("le", "+Inf")], OpenMetrics.valueText(count))
                sample("latency_seconds_count", OpenMetrics.valueText(count))
                sample("latency_seconds_sum", OpenMetrics.secondsText(micros: OpenMetrics.number(l["sumUs"]) ?? 0))
            }
            if let v = OpenMetrics.number(l["budgetUs"]) {
                gauge("latency_budget_seconds", unit: "seconds", help: "The latency budget per event.", value: v / 1_000_000)
            }
            if let v = OpenMetrics.number(l["overBudget"]) {
                counter("over_budget", help: "Events whose latency exceeded the budget.", value: v)
            }
        }

        mutating func trace(_ t: JSONValue) {
            if let v = OpenMetrics.number(t["records"]) { counter("trace_records", help: "Trace records written.", value: v) }
            if let v = OpenMetrics.number(t["bytes"]) {
                counter("trace_written_bytes", unit: "bytes", help: "Trace bytes written.", value: v)
            }
            if let v = OpenMetrics.number(t["lost"]) { counter("trace_lost_records", help: "Trace records lost to failed writes.", value: v) }
            if let v = OpenMetrics.number(t["gaps"]) { counter("trace_gaps", help: "Gap records marking lost records.", value: v) }
            if let v = OpenMetrics.number(t["files"]) { gauge("trace_files", help: "Trace files begun by this run.", value: v) }
            if case .string(let state)? = t["state"] {
                gauge("trace_failing", help: "1 while trace writes fail, else 0.", value: state == "failing" ? 1 : 0)
            }
        }

        /// A counter family with one series per numeric member of `object` (glitches by
        /// kind, observations by verdict).
        mutating func perKey(_ object: JSONValue?, family name: String, label: String, help: String) {
            guard case .object(let members)? = object else { return }
            let series = members.compactMap { k, v in OpenMetrics.number(v).map { (k, $0) } }
            guard !series.isEmpty else { return }
            family(name, type: "counter", unit: nil, help: help)
            for (k, v) in series { sample("\(name)_total", labels: [(label, k)], OpenMetrics.valueText(v)) }
        }

        static func escape(_ s: String) -> String {
            var out = ""
            for c in s.unicodeScalars {
                switch c {
                case "\\": out += "\\\\"
                case "\"": out += "\\\""
                case "\n": out += "\\n"
                default: out.unicodeScalars.append(c)
                }
            }
            return out
        }
    }
}
