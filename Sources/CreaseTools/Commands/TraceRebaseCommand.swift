import CreaseCore
import CreaseSystem
import CreaseDaemonCore
import Foundation

/// `crease trace rebase PATH... (-o DIR | --in-place | --check)` (docs/corpus.md).
extension TraceCommand {
    static func rebase(_ args: inout Arguments) throws -> Int32 {
        let outDir = try args.option("-o")
        let inPlace = args.flag("--in-place")
        let check = args.flag("--check")
        let paths = args.remainingPositionals()
        try args.finish()
        guard !paths.isEmpty else { throw UsageError("at least one trace or directory is needed") }
        guard [outDir != nil, inPlace, check].filter({ $0 }).count == 1 else {
            throw UsageError("give one of -o DIR (write the rebased traces there), --in-place or --check (write nothing; exit 1 when anything would change)")
        }
        // Under -o DIR inside an argument, DIR's own files (an earlier run's output) are no inputs.
        let inputs = try BatchVerify.collect(paths, excluding: outDir)
        let now = TraceFileName.now()
        let at = TraceFileName.iso8601(seconds: now.seconds, millis: now.millis)
        let build = "crease \(DaemonInfo.version)"
        var changedTraces = 0, unreadable = 0, flipsTotal = 0
        // Which layout fields changed first, in how many traces (the reviewer's one page).
        var fieldCounts: [(field: String, traces: Int)] = []
        for input in inputs {
            if let unlisted = input.unlisted {
                Console.out("\(input.path): \(unlisted)")
                unreadable += 1
                continue
            }
            let file: TraceFile
            do { file = try TraceIO.load(input.path) } catch {
                Console.out("\(input.path): cannot be read: \(error)")
                unreadable += 1
                continue
            }
            let result: (bytes: [UInt8], change: TraceRebase.Change)
            do { result = try TraceRebase.rebase(file, by: build, at: at) } catch {
                Console.out("\(input.path): cannot be rebased: \(error)")
                unreadable += 1
                continue
            }
            let c = result.change
            // Unchanged traces are counted, not listed (the reviewer's page lists changes);
            // under -o DIR they are written too, byte for byte, so DIR is the whole corpus.
            guard !c.isEmpty else {
                if let outDir { try write(result.bytes, to: outDir, input) }
                continue
            }
            changedTraces += 1
            flipsTotal += c.flips.count
            var parts: [String] = []
            if c.versionChanged { parts.append("format version \(file.header.version) -> \(TraceHeader.currentVersion)") }
            if c.initialChanged { parts.append("the initial layout changed") }
            if c.digestsChanged > 0 { parts.append("\(c.digestsChanged) layouts changed, the first at seq \(c.firstSeq ?? 0)") }
            if !c.flips.isEmpty { parts.append("\(c.flips.count) verdicts flipped") }
            if c.looksUnjudged > 0 {
                parts.append("\(c.looksUnjudged) looks kept as a view of a layout these rules change keep their recorded verdicts (record with --trace-whole-looks to judge them again)")
            }
            Console.out("\(input.path): " + parts.joined(separator: "; "))
            for d in c.firstDifferences.prefix(8) { Console.out("  \(d)") }
            if c.digestsChanged > 0, c.firstDifferences.isEmpty, !file.header.layouts {
                Console.out("  (the trace records no layouts: record with --trace-layouts to see the fields)")
            }
            for f in c.flips.prefix(10) {
                let note = f.to == .match ? "a fix, if intended" : (f.from == .match ? "needs a look" : "")
                Console.out("  seq \(f.seq): \(f.from.rawValue) -> \(f.to.rawValue)" + (note.isEmpty ? "" : "  (\(note))"))
            }
            var seen: [String] = []
            for d in c.firstDifferences {
                let field = fieldName(d.path)
                guard !seen.contains(field) else { continue }
                seen.append(field)
                if let i = fieldCounts.firstIndex(where: { $0.field == field }) { fieldCounts[i].traces += 1 } else { fieldCounts.append((field, 1)) }
            }
            if check { continue }
            if let outDir { try write(result.bytes, to: outDir, input) } else { try TraceIO.write(result.bytes, to: input.path, replacingInput: true) }
        }
        let verb = check ? "would change" : "rebased"
        Console.err("\(inputs.count) traces: \(changedTraces) \(verb), \(inputs.count - changedTraces - unreadable) unchanged, \(unreadable) unreadable; \(flipsTotal) verdicts flipped")
        if !fieldCounts.isEmpty {
            // Most traces first; among equals, in the order first seen.
            let ranked = fieldCounts.enumerated().sorted { ($0.element.traces, -$0.offset) > ($1.element.traces, -$1.offset) }.map(\.element)
            Console.err("first changed fields: " + ranked.map { "\($0.field) (\($0.traces) traces)" }.joined(separator: ", "))
        }
        if unreadable > 0 { return ExitStatus.usage }
        return check && changedTraces > 0 ? ExitStatus.checkFailed : ExitStatus.success
    }

    /// `bars[browseHome.vertical].items[search].frame.y` → `bars[].items[].frame.y`: the field, without which one.
    static func fieldName(_ path: String) -> String {
        var out = ""
        var depth = 0
        for c in path {
            if c == "[" { depth += 1; if depth == 1 { out.append("[") }; continue }
            if c == "]" { depth -= 1; if depth == 0 { out.append("]") }; continue }
            if depth == 0 { out.append(c) }
        }
        return out
    }

    /// A rebased (or unchanged) trace under DIR, by its path relative to the argument it came from.
    private static func write(_ bytes: [UInt8], to outDir: String, _ input: BatchVerify.Input) throws {
        let target = (outDir as NSString).appendingPathComponent(input.relative)
        let parent = (target as NSString).deletingLastPathComponent
        do { try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) } catch {
            throw UsageError("cannot make \(parent): \(error.localizedDescription)")
        }
        try TraceIO.write(bytes, to: target)
    }
}
