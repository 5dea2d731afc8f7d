@testable import CreaseCore
import Testing

/// `crease trace why`, its first part: each input of the layout at a seq and the event that set it.
@Suite struct TraceWhyTests {
    static func trace(_ events: [Event]) throws -> TraceFile {
        let h = MinimizeTests.header()
        var bytes = h.encode() + [0x0A]
        for (i, e) in events.enumerated() {
            TraceEncoding.appendEvent(TraceEvent(seq: h.initialSeq + i + 1, t: UInt64(i + 1) * 1_000_000, client: 1, envelope: EventEnvelope(event: e), digest: 0),
                                      to: &bytes)
        }
        return try TraceFile(bytes: bytes)
    }

    @Test("the hinge across the partly open threshold set the pose and the display; the keyboard event set the keyboard")
    func hingeThenKeyboard() throws {
        let file = try Self.trace([.hinge(angle: 10), .hinge(angle: 40), .hinge(angle: 45), .keyboard(visible: true, height: nil)])
        let why = try TraceWhy.explain(file, seq: 4)
        func input(_ name: String) -> TraceWhy.Input? { why.inputs.first { $0.name == name } }
        #expect(input("pose")?.value == "\"partiallyOpen\"" && input("pose")?.setBy?.seq == 2, "\(String(describing: input("pose")))")
        #expect(input("display")?.setBy?.seq == 2)
        #expect(input("keyboard")?.setBy?.seq == 4 && input("keyboard")?.setBy?.event.contains("keyboard") == true)
        #expect(input("hingeAngle")?.setBy?.seq == 3 && input("hingeAngle")?.before?.seq == 2 && input("hingeAngle")?.previousValue == "40")
        #expect(input("pip")?.setBy == nil && input("app")?.setBy == nil)
        #expect(throws: TraceError.self) { try TraceWhy.explain(file, seq: 99) }
    }
}
