import Testing
@testable import CreaseCore

/// Properties over random event sequences, on every built-in app.
@Suite struct PropertyTests {
    static let apps = BuiltinApps.names

    /// Runs `sequences` random sequences of `length` events and calls `check` after each applied event.
    /// `check` gets the engine and the applied events so far, so a failure can show how it got there.
    func explore(app name: String, sequences: Int, length: Int, seed: UInt64, _ check: (Engine, History) throws -> Void) rethrows {
        let a = builtin(name)
        for s in 0..<sequences {
            var gen = RandomEvents(seed: seed &+ UInt64(s) &* 7919, app: a)
            var e = Engine(profile: .builtin, app: a)
            var history = History()
            for _ in 0..<length {
                let ev = gen.next()
                if (try? e.apply(ev, at: gen.time)) != nil {
                    history.events.append(ev)
                    try check(e, history)
                }
            }
        }
    }

    struct History: CustomStringConvertible {
        var events: [Event] = []
        var description: String { events.map { String(decoding: $0.jsonBytes(), as: UTF8.self) }.joined(separator: "\n") }
    }

    @Test("incremental relayout equals relayout from scratch, byte for byte (10,000 sequences)", arguments: apps)
    func incrementalEqualsScratch(app name: String) {
        var compared = 0
        explore(app: name, sequences: 3400, length: 12, seed: 1) { e, ev in
            let scratch = Engine.fromScratch(profile: e.profile, app: e.app, state: e.state, seq: e.seq)
            #expect(e.layoutJSON() == scratch, "diverged at seq \(e.seq) after:\n\(ev)")
            compared += 1
        }
        #expect(compared > 10_000)
    }

    /// The engine's memo recognises a screen's items by their storage; a reloaded manifest,
    /// even one with the same screen ids and different items, must never get stale entries.
    @Test("incremental relayout equals from scratch across app reloads, the same manifest or a changed one", arguments: apps)
    func incrementalEqualsScratchAcrossReloads(app name: String) {
        let a = builtin(name)
        var changed = a
        for i in changed.screens.indices where !changed.screens[i].toolbar.isEmpty {
            changed.screens[i].toolbar[0].title = "A much longer title than before"
            changed.screens[i].toolbar[0].symbol = nil
        }
        // The same manifest decoded again: equal to `a`, in storage of its own (as a rig's
        // reload arrives), so the engine keeps its caches while the memo cannot match storage.
        let again = try! App.decode(a.source, path: "app")
        var compared = 0, reloads = 0
        for s in 0..<300 {
            var gen = RandomEvents(seed: 5 &+ UInt64(s) &* 7919, app: a)
            var pick = SplitMix64(seed: UInt64(s))
            var e = Engine(profile: .builtin, app: a)
            var history = History()
            for _ in 0..<16 {
                let ev: Event = pick.next() % 4 == 0 ? .app([a, changed, again][Int(pick.next() % 3)]) : gen.next()
                guard (try? e.apply(ev, at: gen.time)) != nil else { continue }
                history.events.append(ev)
                if case .app = ev { reloads += 1 }
                let scratch = Engine.fromScratch(profile: e.profile, app: e.app, state: e.state, seq: e.seq)
                #expect(e.layoutJSON() == scratch, "diverged at seq \(e.seq) after:\n\(history)")
                compared += 1
            }
        }
        #expect(reloads > 500 && compared > 3_000)
    }

    @Test("every declared item stays reachable: in exactly one bar or overflow menu, or hidden with a diagnostic", arguments: apps)
    func everyItemReachable(app name: String) {
        explore(app: name, sequences: 400, length: 25, seed: 2) { e, ev in
            let l = e.layout
            var places: [String] = l.allItemIds + l.allOverflow
            for item in l.bars.flatMap(\.items) { places += item.tabs ?? [] }
            for id in reachableDeclaredIds(e) {
                let count = places.filter { $0 == id }.count
                let hidden = l.hasDiagnostic("itemHidden", id)
                #expect(count == 1 || (count == 0 && hidden), "\(id) appears \(count) times after:\n\(ev)")
            }
        }
    }

    @Test("no visible item overlaps a reserved region, and every tap target is at least 44 pt", arguments: apps)
    func noOverlapAndTapTargets(app name: String) {
        explore(app: name, sequences: 400, length: 25, seed: 3) { e, ev in
            let l = e.layout
            for bar in l.bars {
                for item in bar.items {
                    #expect(item.frame.w >= 44 && item.frame.h >= 44, "\(item.id) is \(item.frame.w)×\(item.frame.h) after:\n\(ev)")
                    for r in l.regions {
                        #expect(!item.frame.intersects(r.frame), "\(item.id) in \(bar.id) overlaps \(r.kind) after:\n\(ev)")
                    }
                }
            }
        }
    }

    @Test("items of the screen's own bars never overlap one another (sheets and inspector sheets lie above them)", arguments: apps)
    func noItemsOverlap(app name: String) {
        explore(app: name, sequences: 400, length: 25, seed: 4) { e, ev in
            let l = e.layout
            let screenBars = l.bars.filter { $0.role != .sheet && !($0.role == .inspector && l.inspector?.presentation == .sheet) }
            let items = screenBars.flatMap { bar in bar.items.map { (bar.id, $0) } }
            for i in items.indices {
                for j in items.indices where j > i && items[i].1.frame.intersects(items[j].1.frame) {
                    Issue.record("\(items[i].1.id) in \(items[i].0) overlaps \(items[j].1.id) in \(items[j].0) after:\n\(ev)")
                }
            }
        }
    }

    /// Identical bytes across processes (where the hash seed differs) are checked by
    /// DeterminismTests in the tools' tests: two runs in one process cannot tell.
    @Test("seq counts the applied events", arguments: apps)
    func seqCountsAppliedEvents(app name: String) throws {
        let a = builtin(name)
        for seed in UInt64(0)..<50 {
            var gen = RandomEvents(seed: seed, app: a)
            var engine = Engine(profile: .builtin, app: a)
            var applied = 0
            for _ in 0..<60 where (try? engine.apply(gen.next(), at: gen.time)) != nil { applied += 1 }
            #expect(engine.seq == applied)
        }
    }

    @Test("a rejected event changes nothing: state, seq and layout bytes stay put")
    func rejectedEventsChangeNothing() {
        let a = builtin("tabs")
        var gen = RandomEvents(seed: 99, app: a)
        var e = Engine(profile: .builtin, app: a)
        var rejected = 0
        for _ in 0..<3000 {
            let before = e
            let ev = gen.next()
            do { try e.apply(ev, at: gen.time) } catch {
                rejected += 1
                #expect(e.state == before.state && e.seq == before.seq && e.layoutJSON() == before.layoutJSON())
            }
        }
        #expect(rejected > 100)
    }

    @Test("a hinge tick that keeps the pose changes nothing but seq")
    func hingeTickWithinPose() throws {
        var e = try engine(builtin("tabs"), Pose_.innerLandscape)
        let digest = e.digest
        for angle in stride(from: 170.0, through: 180, by: 0.25) {
            #expect(try e.apply(.hinge(angle: angle)) == false)
            #expect(e.digest == digest)
        }
    }
}

@Suite struct LayoutEncodingTests {
    func names<E: JSONName>(_: E.Type) -> [String] { E.allCases.filter { "\($0.jsonName)" != $0.rawValue }.map(\.rawValue) }

    @Test("every enum name a layout prints is its raw value")
    func staticNamesAreRawValues() {
        let wrong = names(Axis.self) + names(Side.self) + names(HorizontalEdge.self) + names(BarEdge.self) + names(SizeClass.self)
            + names(RegionKind.self) + names(BarRole.self) + names(Shows.self) + names(TabBarState.self)
            + names(InspectorPresentation.self) + names(Pose.self) + names(Display.self) + names(Orientation.self)
            + names(LayoutDirection.self) + names(SheetPlacement.self)
        #expect(wrong.isEmpty)
    }

    @Test("the raw writer prints strings and numbers as JSONWriter does")
    func rawWriterMatchesJSONWriter() {
        let strings = ["", "a", "system.overflow", "quote \" back \\ tab \t nl \n ctl \u{1}", "ünïcødé ✓", String(repeating: "x", count: 300)]
        var numbers: [Double] = [0, -0.0, 1, -1, 0.5, 0.05, 12.34, -12.345, 99.999, 1e12, 123456.78, .infinity, -.infinity, .nan, 1e13, -2e14]
        var rng = SplitMix64(seed: 14)
        for _ in 0..<2000 { numbers.append(Double(Int64(bitPattern: rng.next()) % 10_000_000) / 1000) }
        var raw = RawWriter(capacity: 1)
        defer { raw.free() }
        var json: [UInt8] = []
        for s in strings { raw.quoted(s); JSONWriter.appendQuoted(s, to: &json) }
        for n in numbers { raw.centi(n); JSONWriter.appendCenti(n, to: &json); raw.byte(0x2C); json.append(0x2C) }
        for i in [0, 7, -7, 10, 99, 100, Int.max, Int.min + 1] { raw.int(i); JSONWriter.appendInt(i, to: &json) }
        // Frames, fast path and slow (numbers no layout holds, up to a Double's longest text).
        for (k, n) in (numbers + [-2.2250738585072014e-308 * 1e300, -1.7976931348623157e308]).enumerated() {
            let r = Rect(x: n, y: -n, w: numbers[k % numbers.count], h: 0.125)
            raw.rect(r)
            json += Array(#"{"x":"#.utf8); JSONWriter.appendCenti(r.x, to: &json)
            json += Array(#","y":"#.utf8); JSONWriter.appendCenti(r.y, to: &json)
            json += Array(#","w":"#.utf8); JSONWriter.appendCenti(r.w, to: &json)
            json += Array(#","h":"#.utf8); JSONWriter.appendCenti(r.h, to: &json)
            json.append(UInt8(ascii: "}"))
        }
        #expect(raw.array() == json)
    }

    /// The encoder patches a bar's last bytes (writing only its frames' numbers) when
    /// `Bar.sameShape` says all else is unchanged, and the builder takes the last build's bar
    /// when `Bar.sameContent` says it is equal; both list the fields by hand, so a field
    /// added to `Bar` or `PlacedItem` and not to them would be missed.
    @Test("Bar.sameShape compares every field that == compares but frames; Bar.sameContent every field")
    func sameShapeCoversEveryField() {
        let bar = Bar(id: "s.navigation", container: "s", role: .navigation, axis: .horizontal, edge: .top,
                      frame: Rect(x: 0, y: 54, w: 400, h: 44), background: false,
                      items: [PlacedItem(id: "a", frame: Rect(x: 8, y: 56, w: 40, h: 40), shows: .symbol, badge: nil, tabs: nil)],
                      overflow: ["b"], tabBar: nil)
        var reshaped: [Bar] = []
        func vary(_ change: (inout Bar) -> Void) { var b = bar; change(&b); reshaped.append(b) }
        vary { $0.id = "t.navigation" }
        vary { $0.container = "t" }
        vary { $0.role = .toolbar }
        vary { $0.axis = .vertical }
        vary { $0.edge = .bottom }
        vary { $0.background = true }
        vary { $0.items.append($0.items[0]) }
        vary { $0.overflow = [] }
        vary { $0.tabBar = .expanded }
        let barFields = reshaped.count + 1   // and the frame
        vary { $0.items[0].id = "c" }
        vary { $0.items[0].shows = .title }
        vary { $0.items[0].badge = 1 }
        vary { $0.items[0].tabs = ["x"] }
        let itemFields = reshaped.count - barFields + 2   // and the count (above) and the frame
        #expect(barFields == Mirror(reflecting: bar).children.count, "a variant per stored field of Bar")
        #expect(itemFields == Mirror(reflecting: bar.items[0]).children.count, "a variant per stored field of PlacedItem")
        var moved = bar
        moved.frame.y = 55
        moved.items[0].frame.x = 9
        withUnsafePointer(to: bar) { original in
            withUnsafePointer(to: moved) { #expect(Bar.sameShape(original, $0)) }
            let equal = bar
            withUnsafePointer(to: equal) { #expect(Bar.sameContent($0, original)) }
            var movedItem = bar
            movedItem.items[0].frame.x = 9
            for v in reshaped + [moved, movedItem] {
                #expect(v != bar)
                withUnsafePointer(to: v) { #expect(!Bar.sameContent($0, original), "\(v)") }
            }
            for v in reshaped {
                withUnsafePointer(to: v) { #expect(!Bar.sameShape(original, $0), "\(v)") }
            }
        }
    }

    /// `JSONWriter.hundredths` rounds as `(v * 100).rounded()` does, without calling libm:
    /// halves away from zero, including values whose product lands just beside a half.
    @Test("hundredths round as rounded() does")
    func hundredthsRoundAsRounded() {
        var values: [Double] = [0, -0.0, 0.005, -0.005, 0.015, -0.015, 1.005, 2.675, 0.125, -0.125, 99.995, 0.49999999999999994 / 100,
                                9_999_999_999_999.99, -9_999_999_999_999.99, 4503599627370495.5 / 100, 4503599627370497.0 / 100]
        var rng = SplitMix64(seed: 27)
        for _ in 0..<100_000 {
            let bits = rng.next()
            values.append(Double(Int64(bitPattern: bits) % 2_000_000_000) / 2000)   // many exact halves of hundredths
            values.append(Double(bitPattern: (bits >> 12) | 0x3FF0_0000_0000_0000) * 1000 - 1500)
        }
        let wrong = values.filter { abs($0) < 1e13 && JSONWriter.hundredths($0) != Int(($0 * 100).rounded()) }
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
    }

    @Test("an encoder that reuses unchanged members and bars writes what a fresh one writes")
    func reuseEqualsFresh() throws {
        // The engine's encoder carries over between events; encodeBody starts fresh each time.
        for name in BuiltinApps.names {
            var gen = RandomEvents(seed: 99, app: builtin(name))
            var e = Engine(profile: .builtin, app: builtin(name))
            for _ in 0..<400 {
                guard (try? e.apply(gen.next(), at: gen.time)) != nil else { continue }
                let same = e.body == e.layout.encodeBody()
                #expect(same, "\(name) at seq \(e.seq)")
            }
        }
    }
}
