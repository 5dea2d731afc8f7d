@testable import CreaseCore
import Testing

/// The layout-shift score (issue 43, after the web's Cumulative Layout Shift) on crafted
/// layouts whose scores are worked out by hand in each test.
@Suite struct LayoutShiftTests {
    /// A 100 × 200 pt screen on `display` with one toolbar holding `items` (id, frame) and
    /// `floating` buttons.
    static func layout(_ items: [(String, Rect)], floating: [(String, Rect)] = [], display: Display = .outer) -> Layout {
        let bar = Bar(id: "toolbar", container: "root", role: .toolbar, axis: .horizontal, edge: .bottom, frame: Rect(x: 0, y: 150, w: 100, h: 50),
                      background: true, items: items.map { PlacedItem(id: $0.0, frame: $0.1, shows: .symbol, badge: nil, tabs: nil) },
                      overflow: [], tabBar: nil)
        return Layout(
            device: DeviceInfo(pose: .closed, display: display, orientation: .portrait, layoutDirection: .ltr, width: 100, height: 200,
                               sizeClass: SizeClassPair(horizontal: .compact, vertical: .regular), window: Rect(x: 0, y: 0, w: 100, h: 200)),
            barAxis: .horizontal, verticalBarEdge: nil, verticalBarSide: nil, safeArea: Insets(), layoutMargins: Insets(),
            regions: [], bars: [bar], columns: [], sheet: nil, inspector: nil, custom: [],
            floating: floating.map { FloatingInfo(id: $0.0, frame: $0.1) }, diagnostics: [])
    }

    @Test("one control 20 pt down: the union of its frames is 200 of 20,000 pt², it moved 20 of 200 pt: 0.01 × 0.1 = 0.001")
    func oneControlMoved() {
        let before = Self.layout([("share", Rect(x: 0, y: 0, w: 10, h: 10))])
        let after = Self.layout([("share", Rect(x: 0, y: 20, w: 10, h: 10))])
        #expect(abs(LayoutShift.score(from: before, to: after) - 0.001) < 1e-12)
        // Under a point is not a move; a size change alone is not either.
        #expect(LayoutShift.score(from: before, to: Self.layout([("share", Rect(x: 0.5, y: 0.9, w: 10, h: 10))])) == 0)
        #expect(LayoutShift.score(from: before, to: Self.layout([("share", Rect(x: 0, y: 0, w: 30, h: 30))])) == 0)
    }

    @Test("two controls, one overlapping its old frame: unions 600 and 150 pt², the greatest move 10 pt: 0.0375 × 0.05 = 0.001875")
    func twoControlsOneOverlapping() {
        // A: (0,0,20,20) -> (0,10,20,20), its two frames cover 20 × 30 = 600; B: (50,0,10,10) ->
        // (55,0,10,10), 15 × 10 = 150; apart, 750 of 20,000 = 0.0375. Moves 10 and 5 of the
        // longer side, 200: 0.05. "new" appears and "edit" only grows: neither counts.
        let before = Self.layout([("a", Rect(x: 0, y: 0, w: 20, h: 20)), ("b", Rect(x: 50, y: 0, w: 10, h: 10)), ("edit", Rect(x: 80, y: 80, w: 10, h: 10))])
        let after = Self.layout([("a", Rect(x: 0, y: 10, w: 20, h: 20)), ("b", Rect(x: 55, y: 0, w: 10, h: 10)), ("edit", Rect(x: 80, y: 80, w: 20, h: 20)),
                                 ("new", Rect(x: 0, y: 100, w: 50, h: 50))])
        #expect(abs(LayoutShift.score(from: before, to: after) - 0.001875) < 1e-12)
        #expect(LayoutShift.unionArea([Rect(x: 0, y: 0, w: 20, h: 20), Rect(x: 0, y: 10, w: 20, h: 20)]) == 600)
    }

    @Test("a floating button counts as a control; a change of display is a new screen, not a shift")
    func floatingAndDisplays() {
        // A 40 × 40 button moved 40 pt right: its frames cover 80 × 40 = 3,200 of 20,000 = 0.16; 40 / 200 = 0.2: 0.032.
        let before = Self.layout([], floating: [("compose", Rect(x: 0, y: 100, w: 40, h: 40))])
        let after = Self.layout([], floating: [("compose", Rect(x: 40, y: 100, w: 40, h: 40))])
        #expect(abs(LayoutShift.score(from: before, to: after) - 0.032) < 1e-12)
        let other = Self.layout([], floating: [("compose", Rect(x: 40, y: 100, w: 40, h: 40))], display: .inner)
        #expect(LayoutShift.score(from: before, to: other) == 0)
    }

    @Test("shifts sum in session windows: under 1 s apart and at most 5 s long; the run's score is the largest window")
    func sessionWindows() {
        var w = LayoutShiftWindows()
        let s: UInt64 = 1_000_000_000
        // 0 s, 0.5 s: one window (0.003); 2 s starts another (a 1.5 s gap): 2, 2.9, 3.8, 4.7, 5.6,
        // 6.5, 7.4 s are each under 1 s apart, but 7.4 s is past 5 s after 2 s: a third window.
        w.add(seq: 1, t: 0, score: 0.001)
        w.add(seq: 2, t: s / 2, score: 0.002)
        w.add(seq: 3, t: 2 * s, score: 0)   // no move: no shift, no window
        for (k, t) in [2.0, 2.9, 3.8, 4.7, 5.6, 6.5, 7.4].enumerated() { w.add(seq: 10 + k, t: UInt64(t * 1e9), score: 0.001) }
        #expect(w.windows.map(\.fromSeq) == [1, 10, 16])
        #expect(w.windows.map(\.toSeq) == [2, 15, 16])
        #expect(abs(w.windows[0].score - 0.003) < 1e-12 && abs(w.windows[1].score - 0.006) < 1e-12 && abs(w.windows[2].score - 0.001) < 1e-12)
        #expect(abs(w.max - 0.006) < 1e-12)
        #expect(LayoutShift.text(0.006) == "0.0060" && LayoutShift.text(0.12665) == "0.1267")
    }
}
