import CreaseCore
import CreaseSystem
import CreaseDaemon
import CreaseDaemonCore
import Foundation
import Testing

/// Tests/Fuzz/Corpus/<harness>/: the fuzzers' seeds, and any input that ever crashed one.
private func corpus(_ harness: String) throws -> [[UInt8]] {
    let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus/\(harness)")
    let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    return try names.map { Array(try Data(contentsOf: dir.appendingPathComponent($0))) }
}

/// Inputs that hardening found harmful, kept as regression tests of the pure
/// parsers (the same inputs reach a real daemon in HostileClientTests).
@Suite struct HostileInputRegressionTests {
    /// Keys `k0...k(n-1)` with `extra` appended, as one object.
    private func object(keys n: Int, extra: String = "") -> [UInt8] {
        Array(("{" + (0..<n).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + extra + "}").utf8)
    }

    @Test func duplicateMembersAreFoundInSmallAndLargeObjects() throws {
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 5, extra: #","k3":0"#)) }
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 15, extra: #","k14":0"#)) }
        // Past the point where the parser switches to hashing, early and late duplicates alike.
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 16, extra: #","k0":0"#)) }
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 40, extra: #","k2":0"#)) }
        #expect(throws: JSONError.self) { try JSON.parse(object(keys: 40, extra: #","k39":0"#)) }
        do throws(JSONError) {
            _ = try JSON.parse(object(keys: 40, extra: #","k20":0,"x":1"#))
            Issue.record("a duplicate went unnoticed")
        } catch {
            #expect(error.message == #"duplicate member "k20""#)
        }
        // Member order is kept.
        guard case .object(let members) = try JSON.parse(object(keys: 100)) else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.0) == (0..<100).map { "k\($0)" })
    }

    @Test func anObjectWithThirtyThousandKeysParsesInLinearTime() throws {
        // Compared pairwise this is 4.5e8 key comparisons (tens of seconds in a debug
        // build); hashed, a few milliseconds.
        let bytes = object(keys: 30_000)
        let t0 = monotonicSeconds()
        let value = try JSON.parse(bytes)
        let elapsed = monotonicSeconds() - t0
        #expect(value["k29999"] == .number(29_999))
        #expect(elapsed < 5, "\(elapsed) s")
    }

    @Test func aManifestWithThirtyThousandUnknownKeysIsRefusedQuickly() throws {
        let bytes = Array(#"{"name":"x","root":{"kind":"navigationStack","id":"s","screens":[{"id":"a","toolbar":[]}]},"#.utf8)
            + object(keys: 30_000).dropFirst()
        let t0 = monotonicSeconds()
        #expect(throws: InputError.self) { try App.decode(json: bytes) }
        #expect(monotonicSeconds() - t0 < 5)
    }

    // Every corpus input, through the entry points its harness drives (the harnesses'
    // finer checks run under scripts/fuzz): a crash found by a fuzzer and saved in
    // the corpus fails here, in the normal suite.

    @Test func wireCorpusFramesDecodesAndApplies() throws {
        let inputs = try corpus("wire")
        #expect(inputs.count >= 10)
        for input in inputs where input.count >= 2 {
            var engine = Engine(app: BuiltinApps.app(named: BuiltinApps.names[Int(input[1]) % BuiltinApps.names.count])!)
            var framer = LineFramer(limit: 2048)
            _ = input.dropFirst(2).withUnsafeBytes { bytes in
                framer.feed(bytes) { line in
                    if case .event(let e)? = try? Wire.decode(line: line) { _ = try? engine.apply(e.event) }
                    return true
                }
            }
            #expect(Engine.fromScratch(profile: engine.profile, app: engine.app, state: engine.state, seq: engine.seq) == engine.layoutJSON())
        }
    }

    @Test func commandCorpusDecodes() throws {
        let inputs = try corpus("command")
        #expect(inputs.count >= 10)
        var decoded = 0
        for input in inputs where !input.isEmpty {
            guard let body = try? JSON.parse(input.dropFirst()) else { continue }
            let name = Int(input[0]) < Command.names.count ? Command.names[Int(input[0])] : (body["cmd"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "")
            if (try? Command.decode(name: name, body: body)) != nil { decoded += 1 }
        }
        #expect(decoded > 0)
    }

    @Test func manifestCorpusDecodesAndLaysOut() throws {
        let inputs = try corpus("manifest")
        #expect(inputs.count >= 5)
        var apps = 0
        for input in inputs {
            let json = Array(input.prefix { $0 != 0 })
            guard let app = try? App.decode(json: json) else { continue }
            apps += 1
            #expect((try? JSON.parse(Engine(app: app).layoutJSON())) != nil)
        }
        #expect(apps >= 5)
    }

    @Test func traceCorpusReadsAndReplays() throws {
        let inputs = try corpus("trace")
        #expect(inputs.count >= 10)
        for input in inputs {
            guard let file = try? TraceFile(bytes: input) else { continue }
            _ = try? TraceReplay.run(file, verify: true)
        }
    }
}
