import Testing
@testable import CreaseCore

/// Every numeric profile field is range-checked where a profile is decoded, and no
/// profile inside the ranges can make the layout trap: `minTabWidth: 0` once stopped
/// creased with SIGILL (a division by zero turned into an integer).
@Suite struct ProfileRangeTests {
    func decode(_ fields: [(String, Double)]) throws(InputError) -> DeviceProfile {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        for (name, v) in fields { w.key(name); w.number(v) }
        w.endObject()
        return try DeviceProfile.decode(json: w.bytes)
    }

    @Test func aValueOutsideItsRangeIsRefusedNamingTheField() throws {
        for f in DeviceProfile.fieldRanges {
            for bad in [f.min - 1, f.max + 1] where bad >= -1 {
                let e = #expect(throws: InputError.self) { try decode([(f.name, bad)]) }
                #expect(e?.field == f.name, "\(f.name) = \(bad)")
                #expect(e?.message.contains("must be between") == true, "\(f.name): \(e?.message ?? "")")
            }
        }
        let zero = #expect(throws: InputError.self) { try decode([("minTabWidth", 0)]) }
        #expect(zero?.message == "field \"minTabWidth\" must be between 1 and 1000, got 0")
        let half = #expect(throws: InputError.self) { try decode([("maxActivitiesShown", 2.5)]) }
        #expect(half?.field == "maxActivitiesShown")
    }

    /// A layout read back (a trace's layout lines) holds points on a screen: 1e300 would
    /// overflow whatever draws it (`crease render` turns sizes into counts).
    @Test func aLayoutReadBackRefusesNumbersNoScreenHolds() throws {
        let line = Engine(profile: .builtin, app: builtin("tabs")).layoutJSON()
        #expect((try? Layout.decodeLine(try JSON.parse(line))) != nil)
        var text = String(decoding: line, as: UTF8.self)
        let width = #""width":466"#
        #expect(text.contains(width))
        text = text.replacing(width, with: #""width":1e300"#)
        let e = #expect(throws: InputError.self) { try Layout.decodeLine(try JSON.parse(Array(text.utf8))) }
        #expect(e?.code == .outOfRange && e?.field == "device.width", "\(String(describing: e))")
    }

    @Test func everyFieldHasARangeThatHoldsItsBuiltinValue() {
        #expect(DeviceProfile.fieldRanges.count == DeviceProfile.numericFields.count)
        for f in DeviceProfile.fieldRanges {
            let v = DeviceProfile.builtin[keyPath: f.path]
            #expect(v >= f.min && v <= f.max, "\(f.name) = \(v) outside \(f.min)…\(f.max)")
        }
    }

    /// Each field alone at each end of its range, then random profiles with every field at
    /// an end or anywhere between, each driven by random events on every built-in app:
    /// nothing traps, and the incremental layout equals one computed from scratch.
    @Test func noProfileInsideTheRangesTraps() throws {
        var profiles: [[(String, Double)]] = []
        for f in DeviceProfile.fieldRanges { profiles.append([(f.name, f.min)]); profiles.append([(f.name, f.max)]) }
        var rng = SplitMix64(seed: 0x5EED_0F_2A6E)
        for _ in 0..<40 {
            profiles.append(DeviceProfile.fieldRanges.map { f in
                switch rng.next() % 3 {
                case 0: return (f.name, f.min)
                case 1: return (f.name, f.max)
                default:
                    let v = f.min + (f.max - f.min) * Double(rng.next() % 1_000) / 1_000
                    return (f.name, f.whole ? v.rounded(.down) : v)
                }
            })
        }
        var laidOut = 0
        for (n, fields) in profiles.enumerated() {
            // The hinge thresholds are checked together too; a random set may fail that.
            guard let profile = try? decode(fields) else { continue }
            for name in BuiltinApps.names {
                let app = builtin(name)
                var e = Engine(profile: profile, app: app)
                var gen = RandomEvents(seed: UInt64(n) &* 31 &+ 7, app: app, profile: profile)
                for _ in 0..<60 { _ = try? e.apply(gen.next(), at: gen.time) }
                let scratch = Engine.fromScratch(profile: profile, app: e.app, state: e.state, seq: e.seq)
                #expect(scratch == e.layoutJSON(), "profile \(n), app \(name)")
                laidOut += 1
            }
        }
        #expect(laidOut > DeviceProfile.fieldRanges.count * 2 * BuiltinApps.names.count / 2)
    }
}
