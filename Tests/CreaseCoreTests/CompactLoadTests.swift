import Testing
@testable import CreaseCore

/// Issue 37: a campaign that resets with `load` wrote the whole profile and app with every
/// reset (6.3 KB of the builtin tabs app's 97 MB plan run were loads, 85 MB). A load record
/// now writes only what the load changed; a reader takes the rest from the records before.
@Suite struct CompactLoadTests {
    /// A daemon's trace: events, a reset (`load` with no fields), an app change, a state of that app, a reset again.
    func campaign() throws -> (bytes: [UInt8], loads: [TraceLoad], engine: Engine) {
        var b = TraceBuilder(step: 10)
        try b.event(.hinge(angle: 90))
        try b.load(LoadRequest())
        try b.event(.hinge(angle: 180))
        try b.load(LoadRequest(app: builtin("split")))
        var split = Engine(profile: .builtin, app: builtin("split"))
        try split.apply(.hinge(angle: 170))
        try b.load(LoadRequest(state: try JSON.parse(split.state.jsonBytes(app: split.app))))
        try b.event(.orientation(.landscapeLeft))
        try b.load(LoadRequest())
        return (b.bytes, b.loads, b.engine)
    }

    func loadLines(_ bytes: [UInt8]) -> [String] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init).filter { $0.contains(#""load":"#) }
    }

    @Test func aLoadRecordWritesOnlyWhatTheLoadChanged() throws {
        let lines = loadLines(try campaign().bytes)
        #expect(lines.count == 4)
        let members = try lines.map { line -> [String] in
            guard case .object(let m)? = try JSON.parse(Array(line.utf8))["load"] else { return ["?"] }
            return m.map(\.0)
        }
        // A reset; a new app in its default state; a state of that app; a reset of it.
        #expect(members == [[], ["app"], ["state"], []])
        #expect(lines[0].utf8.count < 160, "\(lines[0])")
    }

    @Test func aReaderTakesWhatALoadKeptFromTheRecordsBeforeIt() throws {
        let c = try campaign()
        let file = try TraceFile(bytes: c.bytes)
        var cursor = file.cursor()
        var read: [TraceLoad] = []
        while let r = try cursor.next() { if case .load(let l) = r.record { read.append(l) } }
        #expect(read == c.loads)
        // The last reset is of the split app, which the load before it put in place.
        #expect(read.last?.app == builtin("split") && read.last?.state == DeviceState(app: builtin("split")))
        let outcome = try TraceReplay.run(file, verify: true)
        #expect(outcome.divergence == nil && outcome.engine.digest == c.engine.digest)
        // Re-encoded from what was read, the records are the same bytes (a rebase changes nothing).
        var again: [UInt8] = []
        for l in read { TraceEncoding.appendLoad(l, to: &again) }
        #expect(loadLines(again) == loadLines(c.bytes))
    }

    @Test func aSliceAfterAnAppChangeKeepsItsLoadsReadable() throws {
        let c = try campaign()
        let file = try TraceFile(bytes: c.bytes)
        // From the event after the split app came in: its header holds split, which the last reset keeps.
        let slice = try TraceSlice.slice(file, from: 6, to: 7)
        let sliced = try TraceFile(bytes: slice.bytes)
        #expect(sliced.header.app == builtin("split"))
        let outcome = try TraceReplay.run(sliced, verify: true)
        #expect(outcome.divergence == nil && outcome.engine.digest == c.engine.digest)
    }

    /// A resume reads the last record's seq from the file's tail alone, without the records
    /// before it: a load that keeps the profile and app must still give its seq.
    @Test func aLoadRecordReadAloneStillGivesItsSeq() throws {
        let c = try campaign()
        let last = try #require(loadLines(c.bytes).last)
        #expect(Array(last.utf8).withUnsafeBufferPointer { TraceRecord.seq(ofLine: $0) } == c.engine.seq)
        #expect(throws: TraceError.self) { _ = try Array(last.utf8).withUnsafeBufferPointer { try TraceRecord.decode($0) } }
        #expect(Array(#"{"seq":3,"load":{"#.utf8).withUnsafeBufferPointer { TraceRecord.seq(ofLine: $0) } == nil)
    }
}
