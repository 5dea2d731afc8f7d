import CreaseCore
@testable import CreaseTools
import Testing

/// `crease trace why` on recorded traces: each input's setter is where the input changed.
@Suite struct TraceWhyCorpusTests {
    @Test("every input's last setter, replayed to its seq, is where that input changed", arguments: ["rig-observations.jsonl", "burst-coalesced.jsonl"])
    func everySetterChangesItsInput(_ name: String) throws {
        let file = try TraceFile(bytes: try Inputs.readFile(Corpus.directory + "/" + name))
        let last = try TraceMinimize.events(file).last.map(\.seq) ?? file.header.initialSeq
        for seq in [last, max(file.header.initialSeq + 1, last / 2)] {
            let why = try TraceWhy.explain(file, seq: seq)
            for input in why.inputs {
                guard let setter = input.setBy else { continue }
                #expect(setter.seq <= seq)
                let at = try TraceWhy.explain(file, seq: setter.seq).inputs.first { $0.name == input.name }
                #expect(at?.setBy == setter, "\(name) seq \(seq): \(input.name) set by seq \(setter.seq)")
                if setter.seq > file.header.initialSeq + 1 {
                    let earlier = try TraceWhy.explain(file, seq: setter.seq - 1).inputs.first { $0.name == input.name }
                    #expect(earlier?.value != at?.value, "\(input.name) did not change at seq \(setter.seq)")
                }
            }
        }
    }

    @Test("crease trace why --json names every input with its setter; a seq the trace does not have exits 1")
    func command() throws {
        let path = Corpus.directory + "/rig-observations.jsonl"
        let r = try CommandRunner.run(["trace", "why", path, "--seq", "77", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSON.parse(Array(r.stdout.utf8))
        #expect(json["seq"] == .number(77))
        guard case .array(let inputs)? = json["inputs"] else { Issue.record("no inputs"); return }
        let keyboard = inputs.first { $0["name"] == .string("keyboard") }
        #expect(keyboard?["setBy"]?["seq"] == .number(77))
        let missing = try CommandRunner.run(["trace", "why", path, "--seq", "100000"])
        #expect(missing.status == 1 && missing.stderr.contains("no event at seq 100000"), "\(missing.stderr)")
        let usage = try CommandRunner.run(["trace", "why", path])
        #expect(usage.status == 2)
    }
}
