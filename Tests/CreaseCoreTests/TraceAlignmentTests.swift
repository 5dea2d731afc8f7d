@testable import CreaseCore
import Testing

/// `crease trace diff --by-event`: a hardware replay lined up with its original.
@Suite struct TraceAlignmentTests {
    @Test("a replay run's marks are read back with their number; other marks are not runs")
    func runMarks() {
        #expect(TraceAlignment.runMark("replay of night, run 3.jsonl, run 12: begin").map { [$0.0] } == [12])
        #expect(TraceAlignment.runMark("replay of a.jsonl, run 2: end")?.1 == "end")
        for label in ["replay of a.jsonl, run x: begin", "replay of a.jsonl: begin", "calibrated, run 2: begin", "replay of a.jsonl, run 2: middle"] {
            #expect(TraceAlignment.runMark(label) == nil, "\(label)")
        }
    }

    @Test("the observed objects' differences name an item by its id where both list it at that place")
    func geometryNamesItems() throws {
        let original = try JSON.parse(Array(#"{"barAxis":"vertical","items":[{"id":"share","frame":{"x":0,"y":61}},{"id":"edit","frame":{"x":0,"y":9}}]}"#.utf8))
        let replay = try JSON.parse(Array(#"{"barAxis":"horizontal","items":[{"id":"share","frame":{"x":0,"y":31}},{"id":"sort","frame":{"x":0,"y":9}}]}"#.utf8))
        let paths = TraceAlignment.geometry(original, replay).map(\.path)
        #expect(paths.contains("barAxis") && paths.contains("items[share].frame.y"), "\(paths)")
        #expect(paths.contains("items[1].id"), "a place whose items differ keeps its index: \(paths)")
    }

    @Test("two folds within the tolerance are one move; other events must be equal")
    func movesCompare() {
        #expect(TraceAlignment.same(.hinge(angle: 90), .hinge(angle: 89.5), hingeTolerance: 1))
        #expect(!TraceAlignment.same(.hinge(angle: 90), .hinge(angle: 88), hingeTolerance: 1))
        #expect(!TraceAlignment.same(.keyboard(visible: true, height: nil), .keyboard(visible: false, height: nil), hingeTolerance: 1))
    }
}
