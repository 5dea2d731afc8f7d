import CreaseCore

/// What `crease trace diff --by-event` prints: the moves and looks lined up, the first look
/// whose verdicts differ, and for each look that differs its timing (when the device was
/// looked at after its move) apart from its geometry (what the device showed).
enum TraceAlignmentReport {
    static func print(_ a: TraceAlignment, json: Bool) -> Int32 {
        let differs = a.firstVerdictDifference != nil || a.firstMoveDifference != nil || a.unpairedLooks > 0
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("moves"); w.beginObject(); w.key("original"); w.int(a.originalMoves); w.key("replay"); w.int(a.replayMoves); w.endObject()
            w.key("replaySeqs")
            if let r = a.replaySeqs { w.beginArray(); w.int(r.lowerBound); w.int(r.upperBound); w.endArray() } else { w.null() }
            w.key("firstMoveDifference")
            if let d = a.firstMoveDifference {
                w.beginObject()
                w.key("index"); w.int(d.index)
                w.key("original"); if let m = d.original { m.event.write(to: &w) } else { w.null() }
                w.key("replay"); if let m = d.replay { m.event.write(to: &w) } else { w.null() }
                w.endObject()
            } else { w.null() }
            w.key("unpairedLooks"); w.int(a.unpairedLooks)
            w.key("looks"); w.beginArray()
            for p in a.looks {
                w.beginObject()
                w.key("index"); w.int(p.index)
                w.key("original"); w.beginObject(); w.key("seq"); w.int(p.original.seq); w.key("verdict"); w.string(p.original.result.verdict.rawValue); w.endObject()
                w.key("replay"); w.beginObject(); w.key("seq"); w.int(p.replay.seq); w.key("verdict"); w.string(p.replay.result.verdict.rawValue); w.endObject()
                w.key("timingNs"); if let t = p.timingNs { w.int(Int(t)) } else { w.null() }
                w.key("geometry"); w.beginArray()
                for d in p.geometry {
                    w.beginObject(); w.key("path"); w.string(d.path)
                    w.key("original"); if let e = d.expected { w.string(e) } else { w.null() }
                    w.key("replay"); if let r = d.actual { w.string(r) } else { w.null() }
                    w.endObject()
                }
                w.endArray()
                w.endObject()
            }
            w.endArray()
            w.key("same"); w.bool(!differs)
            w.endObject()
            Console.out(bytes: w.bytes)
            return differs ? ExitStatus.checkFailed : ExitStatus.success
        }
        for line in summary(a) { Console.out(line) }
        for p in a.looks where !p.sameVerdict || !p.geometry.isEmpty {
            if let t = p.timingNs {
                let ms = Double(t) / 1e6
                Console.out("  look \(p.index) timing: the replay looked \(Format.fixed(abs(ms), 1)) ms \(t >= 0 ? "later" : "sooner") after its move than the original")
            }
            if p.geometry.isEmpty {
                Console.out("  look \(p.index) geometry: both devices showed the same")
            } else {
                for d in p.geometry { Console.out("  look \(p.index) geometry: \(d.path): the original's device showed \(d.expected ?? "(absent)"), the replay's \(d.actual ?? "(absent)")") }
            }
        }
        if !differs { Console.out("every look gave the same verdict") }
        return differs ? ExitStatus.checkFailed : ExitStatus.success
    }

    /// What was lined up, where the moves part, and the first look whose verdicts differ:
    /// the lines the text output and `crease report --against` begin with.
    static func summary(_ a: TraceAlignment) -> [String] {
        let range = a.replaySeqs.map { ", the replay's seq \($0.lowerBound)…\($0.upperBound)" } ?? ""
        var lines = ["lined up \(min(a.originalMoves, a.replayMoves)) moves (the original \(a.originalMoves), the replay \(a.replayMoves)) and \(a.looks.count) looks\(range)"]
        if let d = a.firstMoveDifference {
            func text(_ m: TraceAlignment.Move?) -> String { m.map { "seq \($0.seq) " + String(decoding: $0.event.jsonBytes(), as: UTF8.self) } ?? "(none)" }
            lines.append("moves part at move \(d.index): the original \(text(d.original)), the replay \(text(d.replay))")
        }
        if a.unpairedLooks > 0 { lines.append("\(a.unpairedLooks) looks of one trace have none in the other") }
        if let first = a.firstVerdictDifference {
            lines.append("first verdict difference: look \(first.index): the original's seq \(first.original.seq) \(first.original.result.verdict.rawValue), "
                         + "the replay's seq \(first.replay.seq) \(first.replay.result.verdict.rawValue)")
        }
        return lines
    }
}
