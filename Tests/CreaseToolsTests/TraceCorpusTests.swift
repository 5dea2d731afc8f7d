import CreaseCore
import Foundation
import Testing

enum Corpus {
    /// `Traces/` at the package root.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Traces").path

    static func traces() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    /// Traces recorded in older format versions (version 1: FNV-1a digests, version 2:
    /// crease64, version 3: crease64x4), kept as they were in `version-N/`.
    static func olderTraces() throws -> [String] {
        try [1, 2, 3].flatMap { version in
            try FileManager.default.contentsOfDirectory(atPath: directory + "/version-\(version)").filter { $0.hasSuffix(".jsonl") }
                .sorted().map { "version-\(version)/" + $0 }
        }
    }
}

@Suite struct TraceCorpusTests {
    @Test func theCorpusHoldsAtLeastEightTracesEachExplained() throws {
        let names = try Corpus.traces()
        #expect(names.count >= 8)
        let readme = try String(contentsOfFile: Corpus.directory + "/README.md", encoding: .utf8)
        for name in names { #expect(readme.contains("`\(name)`"), "\(name) is not explained in Traces/README.md") }
    }

    @Test(arguments: try Corpus.traces())
    func everyCorpusTraceReplaysWithVerify(_ name: String) throws {
        let file = try TraceFile(bytes: Array(FileManager.default.contents(atPath: Corpus.directory + "/" + name)!))
        #expect(file.cut == nil)
        #expect(file.header.daemon.hasPrefix("creased "), "recorded by a real daemon")
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil, "\(outcome.divergence?.summary ?? "")")
        #expect(outcome.eventsApplied > 50)
        #expect(file.header.version == TraceHeader.currentVersion, "record.sh records the current version")
    }

    /// A rig's observations recorded by a real creased: replayed with --verify, every
    /// verdict is judged again, and the corpus holds one of each.
    @Test func theCorpusReplaysObservationsOfEveryVerdict() throws {
        var verdicts: [Verdict] = []
        for name in try Corpus.traces() {
            let file = try TraceFile(bytes: Array(FileManager.default.contents(atPath: Corpus.directory + "/" + name)!))
            var recorded = 0
            var cursor = file.cursor()
            while let traced = try cursor.next() {
                if case .observation(let o) = traced.record { recorded += 1; verdicts.append(o.result.verdict) }
            }
            let outcome = try TraceReplay.run(file, verify: true)
            #expect(outcome.divergence == nil, "\(name): \(outcome.divergence?.summary ?? "")")
            #expect(outcome.observationsChecked == recorded && outcome.observationsUnchecked == 0, "\(name)")
        }
        for v in Verdict.allCases { #expect(verdicts.contains(v), "no \(v) observation in Traces/") }
    }

    @Test(arguments: try Corpus.olderTraces())
    func olderVersionTracesStillVerify(_ name: String) throws {
        let file = try TraceFile(bytes: Array(FileManager.default.contents(atPath: Corpus.directory + "/" + name)!))
        let version = Int(name.dropFirst("version-".count).prefix(1))!
        #expect(file.header.version == version && file.header.digestAlgorithm == DigestAlgorithm(traceVersion: version))
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil, "\(outcome.divergence?.summary ?? "")")
        #expect(outcome.eventsApplied > 50)
    }
}
