import Testing
@testable import CreaseCore

/// The encoder patches members and bars whose shape did not change (copies of the last
/// bytes with the changed numbers written in between). These tests drive it through
/// layouts that move, change shape and carry numbers at the printing's edges, and compare
/// every encoding with a fresh one.
@Suite struct EncoderPatchTests {
    /// Numbers whose text differs in length, rounds at a hundredth's half, is -0, or takes
    /// the slow path (NaN, infinities, 1e13 and beyond).
    static let edgeNumbers: [Double] = [0, -0.0, 0.005, -0.005, 0.015, 0.004999, 1.005, 2.675, 99.995, 9.995, 100, 0.1, 0.25,
                                        -12.345, 123456.78, 9_999_999_999_999.99, 1e13, -2e14, .nan, .infinity, -.infinity]

    struct Mutator {
        var rng: SplitMix64
        mutating func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }

        mutating func number() -> Double {
            switch rng.next() % 4 {
            case 0: EncoderPatchTests.edgeNumbers[Int(rng.next() % UInt64(EncoderPatchTests.edgeNumbers.count))]
            case 1: Double(Int64(bitPattern: rng.next()) % 100_000) / 100
            case 2: Double(Int64(bitPattern: rng.next()) % 1_000_000) / 1000
            default: Double(rng.next() % 900)
            }
        }

        mutating func move(_ r: inout Rect) {
            if chance(40) { r.x = number() }
            if chance(40) { r.y = number() }
            if chance(20) { r.w = number() }
            if chance(20) { r.h = number() }
        }

        mutating func move(_ i: inout Insets) {
            if chance(50) { i.top = number() }
            if chance(30) { i.bottom = number() }
            if chance(20) { i.leading = number() }
            if chance(20) { i.trailing = number() }
        }

        /// Moves what a relayout moves, and sometimes changes what it rarely changes.
        mutating func mutate(_ l: inout Layout) {
            if chance(20) { l.device.width = number() }
            if chance(20) { move(&l.device.window) }
            if chance(5) { l.device.orientation = l.device.orientation == .portrait ? .landscapeLeft : .portrait }
            if chance(10) { l.device.layoutDirection = l.device.layoutDirection == .ltr ? .rtl : .ltr }
            if chance(5) { l.device.display = l.device.display == .outer ? .inner : .outer }
            if chance(5) { l.device.pose = l.device.pose == .fullyOpen ? .partiallyOpen : .fullyOpen }
            move(&l.safeArea)
            move(&l.layoutMargins)
            for i in l.regions.indices where chance(50) { move(&l.regions[i].frame) }
            if chance(10) { l.regions.append(Region(kind: .keyboard, frame: Rect(x: 0, y: number(), w: 400, h: 300))) }
            if chance(5), !l.regions.isEmpty { l.regions[0].kind = l.regions[0].kind == .pip ? .keyboard : .pip }
            for b in l.bars.indices {
                if chance(60) { move(&l.bars[b].frame) }
                for k in l.bars[b].items.indices where chance(50) { move(&l.bars[b].items[k].frame) }
                if chance(5), !l.bars[b].items.isEmpty { l.bars[b].items[0].badge = chance(50) ? nil : Int(rng.next() % 100) }
                if chance(5), !l.bars[b].items.isEmpty { l.bars[b].items[0].shows = .title }
                if chance(5), !l.bars[b].items.isEmpty { l.bars[b].items.removeLast() }
                if chance(5) { l.bars[b].overflow.append("more\"quoted") }
                if chance(3) { l.bars[b].id += "x" }
                if chance(3) { l.bars[b].tabBar = l.bars[b].tabBar == nil ? .compressed : nil }
            }
            if chance(10), l.bars.count > 1 { l.bars.swapAt(0, l.bars.count - 1) }
            if chance(5), !l.bars.isEmpty { l.bars.removeFirst() }
            for i in l.columns.indices where chance(50) { move(&l.columns[i].frame) }
            if l.sheet != nil, chance(50) { move(&l.sheet!.frame) }
            if l.inspector != nil, chance(50) { move(&l.inspector!.frame) }
            for i in l.custom.indices where chance(50) { move(&l.custom[i].frame) }
            for i in l.floating.indices where chance(50) { move(&l.floating[i].frame) }
            if chance(5), !l.floating.isEmpty { l.floating[0].id += "y" }
            if chance(5), !l.diagnostics.isEmpty { l.diagnostics.removeLast() }
        }
    }

    @Test("layouts that move and change shape encode incrementally as they encode fresh")
    func movedAndReshapedEqualFresh() {
        for name in BuiltinApps.names {
            var events = RandomEvents(seed: 41, app: builtin(name))
            var e = Engine(profile: .builtin, app: builtin(name))
            var m = Mutator(rng: SplitMix64(seed: 7))
            var encoder = LayoutEncoder()
            var wrong = 0
            for step in 0..<300 {
                _ = try? e.apply(events.next())
                var l = e.layout
                // The engine's layout, then a few moves of it, each from the one before.
                for _ in 0..<3 {
                    if encoder.encode(l) != l.encodeBody() { wrong += 1 }
                    m.mutate(&l)
                }
                #expect(wrong == 0, "\(name) at step \(step)")
                if wrong > 0 { return }
            }
        }
    }

    @Test("a bar whose frames moved is patched to the bytes of a fresh encoding")
    func movedBarEqualsFresh() {
        var l = Engine(profile: .builtin, app: builtin("tabs")).layout
        var encoder = LayoutEncoder()
        _ = encoder.encode(l)
        // Every y over the keyboard, to numbers of other lengths and through -0 and a half.
        for (k, dy) in [-260.5, 0.005, -0.0, 1234.125, -0.004].enumerated() {
            for b in l.bars.indices {
                l.bars[b].frame.y += dy
                for i in l.bars[b].items.indices { l.bars[b].items[i].frame.y += dy }
            }
            #expect(encoder.encode(l) == l.encodeBody(), "move \(k)")
        }
    }

    @Test("device names that change to names as long (ltr and rtl, outer and inner) are written over a patched head, as fresh")
    func renamedHeadEqualsFresh() {
        var l = Engine(profile: .builtin, app: builtin("tabs")).layout
        var encoder = LayoutEncoder()
        _ = encoder.encode(l)
        for step in 0..<8 {
            l.device.layoutDirection = l.device.layoutDirection == .ltr ? .rtl : .ltr
            if step % 2 == 1 { l.device.display = l.device.display == .outer ? .inner : .outer }
            if step % 4 == 3 { l.safeArea.leading += 1 }   // a number patched after the names
            if step == 6 { l.device.orientation = .landscapeRight }   // names that do not fit: written anew
            #expect(encoder.encode(l) == l.encodeBody(), "step \(step)")
        }
    }

    @Test("every number growing to its longest text patches past the writer's buffers as a fresh encoding")
    func longestNumbersEqualFresh() {
        let base = Engine(profile: .builtin, app: builtin("tabs")).layout
        let first = base.encodeBody().count + 16
        var encoder = LayoutEncoder(byteCapacity: first, markCapacity: 16)
        _ = encoder.encode(base)
        // A patch makes room once for all the numbers after it at their longest; these take
        // the longest texts (fast path and slow path) and the body outgrows the first buffers.
        for v in [-9_999_999_999_999.99, -1.2345678901234567e300, 0, -9_999_999_999_999.99] {
            var l = base
            func set(_ r: inout Rect) { r = Rect(x: v, y: v, w: v, h: v) }
            l.device.width = v
            l.device.height = v
            set(&l.device.window)
            l.safeArea = Insets(top: v, leading: v, bottom: v, trailing: v)
            l.layoutMargins = Insets(top: v, leading: v, bottom: v, trailing: v)
            for i in l.regions.indices { set(&l.regions[i].frame) }
            for b in l.bars.indices {
                set(&l.bars[b].frame)
                for i in l.bars[b].items.indices { set(&l.bars[b].items[i].frame) }
            }
            for i in l.columns.indices { set(&l.columns[i].frame) }
            for i in l.floating.indices { set(&l.floating[i].frame) }
            let fresh = l.encodeBody()
            #expect(encoder.encode(l) == fresh, "all numbers \(v)")
            #expect(fresh.count > first || v == 0, "the body outgrows the first buffers")
        }
        #expect(encoder.encode(base) == base.encodeBody())
    }

    @Test("a bar that leaves and comes back moved or reshaped encodes as fresh")
    func returningBarEqualsFresh() {
        let full = Engine(profile: .builtin, app: builtin("tabs")).layout
        var encoder = LayoutEncoder()
        var returning = full
        var m = Mutator(rng: SplitMix64(seed: 5))
        for round in 0..<40 {
            // Every other bar leaves, then comes back moved, sometimes with a badge changed.
            var without = returning
            without.bars = returning.bars.enumerated().filter { $0.offset % 2 == round % 2 }.map(\.element)
            // Diagnostics leave and come back too, the same or one fewer.
            without.diagnostics = Array(returning.diagnostics.dropFirst(1 + round % 2))
            if round % 3 == 2, !returning.diagnostics.isEmpty { returning.diagnostics.removeLast() }
            #expect(encoder.encode(without) == without.encodeBody(), "round \(round), without")
            for b in returning.bars.indices {
                m.move(&returning.bars[b].frame)
                for i in returning.bars[b].items.indices { m.move(&returning.bars[b].items[i].frame) }
                if round % 5 == 4, !returning.bars[b].items.isEmpty { returning.bars[b].items[0].badge = round }
            }
            #expect(encoder.encode(returning) == returning.encodeBody(), "round \(round), back")
        }
    }

    @Test("arrays shared with the last layout (the same storage) are skipped, and those beside them patched, as a fresh encoding")
    func sharedArraysEqualFresh() {
        for name in BuiltinApps.names {
            var l = Engine(profile: .builtin, app: builtin(name)).layout
            var encoder = LayoutEncoder()
            _ = encoder.encode(l)
            var m = Mutator(rng: SplitMix64(seed: 11))
            for step in 0..<40 {
                let last = l
                // One kind of array changes at a time; the others keep the last layout's storage.
                switch step % 5 {
                case 0: for b in l.bars.indices { m.move(&l.bars[b].frame) }
                case 1: if !l.bars.isEmpty { let b = step % l.bars.count; for i in l.bars[b].items.indices { m.move(&l.bars[b].items[i].frame) } }
                case 2: for i in l.regions.indices { m.move(&l.regions[i].frame) }
                case 3:
                    for i in l.floating.indices { m.move(&l.floating[i].frame) }
                    for i in l.custom.indices { m.move(&l.custom[i].frame) }
                    for i in l.columns.indices { m.move(&l.columns[i].frame) }
                default: m.move(&l.safeArea)
                }
                // The premise: a bar's frame moved keeps its items' storage, and so do untouched arrays.
                if step % 5 == 0, let b = l.bars.first { #expect(sameStorage(b.items, last.bars[0].items)) }
                if step % 5 == 2 { #expect(sameStorage(l.floating, last.floating) && sameStorage(l.bars, last.bars)) }
                #expect(encoder.encode(l) == l.encodeBody(), "\(name) at step \(step)")
            }
        }
    }

    @Test("copies of an encoder go on from the same last encoding independently")
    func copiedEncodersAreIndependent() {
        let base = Engine(profile: .builtin, app: builtin("tabs")).layout
        var a = LayoutEncoder()
        _ = a.encode(base)
        var b = a
        var moved = base
        var m = Mutator(rng: SplitMix64(seed: 3))
        for _ in 0..<20 {
            m.mutate(&moved)
            #expect(a.encode(moved) == moved.encodeBody())
            #expect(b.encode(base) == base.encodeBody())
        }
    }

    @Test("quoting escapes a byte that needs it at every position of an 8-byte word")
    func quotingAtEveryPosition() {
        let specials: [Character] = ["\"", "\\", "\n", "\t", "\r", "\u{1}", "\u{1F}", " ", "!", "#", "[", "]", "\u{7F}", "é", "✓"]
        var raw = RawWriter(capacity: 1)
        defer { raw.free() }
        var json: [UInt8] = [], reference: [UInt8] = []
        for length in 0..<26 {
            for at in 0..<max(length, 1) {
                for c in specials {
                    var s = String(repeating: "a", count: length)
                    if length > 0 { s = String(s.prefix(at)) + String(c) + String(s.dropFirst(at + 1)) }
                    raw.quoted(s)
                    JSONWriter.appendQuoted(s, to: &json)
                    reference += EncoderPatchTests.quotedByHand(s)
                }
            }
        }
        // Several escapes: adjacent, spread over words, at both ends.
        for s in ["\"\"", "\\\n\u{1}", "a\"b\\c\nd\u{1}e", String(repeating: "\"x", count: 20), "\t" + String(repeating: "y", count: 17) + "\r"] {
            raw.quoted(s)
            JSONWriter.appendQuoted(s, to: &json)
            reference += EncoderPatchTests.quotedByHand(s)
        }
        #expect(raw.array() == json)
        #expect(json == reference)
    }

    /// JSON quoting written out byte by byte, apart from the writers it checks.
    static func quotedByHand(_ s: String) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for b in s.utf8 {
            switch b {
            case 0x22: out += Array(#"\""#.utf8)
            case 0x5C: out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0..<0x20: out += Array("\\u00".utf8) + Array(String(b, radix: 16).leftPadded(to: 2).utf8)
            default: out.append(b)
            }
        }
        return out + [0x22]
    }
}

private extension String {
    func leftPadded(to n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}
