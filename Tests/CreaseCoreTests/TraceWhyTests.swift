@testable import CreaseCore
import Foundation
import Testing

/// `crease trace why`: the rule behind a control or field at a seq, the inputs it read, the
/// events that set them, and which of those inputs decided it.
@Suite struct TraceWhyTests {
    static func trace(_ events: [Event], app: App = builtin("tabs"), after: [Int: TraceObservation] = [:]) throws -> TraceFile {
        let h = TraceHeader(daemon: "test", started: "2026-12-07T00:00:00Z", part: 0, reason: "start", config: .object([]),
                            layouts: false, monotonicOrigin: nil, t: 0, engine: Engine(app: app))
        var bytes = h.encode() + [0x0A]
        for (i, e) in events.enumerated() {
            TraceEncoding.appendEvent(TraceEvent(seq: h.initialSeq + i + 1, t: UInt64(i + 1) * 1_000_000, client: 1, envelope: EventEnvelope(event: e), digest: 0),
                                      to: &bytes)
            if let o = after[i + 1] { TraceEncoding.appendObservation(o, to: &bytes) }
        }
        return try TraceFile(bytes: bytes)
    }

    /// `count` events of the property tests' generator that the engine accepts, with the
    /// state (and app) after each: `states[0]` is the start.
    static func randomEvents(_ count: Int, seed: UInt64, app: App) -> (events: [Event], states: [(DeviceState, App)]) {
        var gen = RandomEvents(seed: seed, app: app)
        var engine = Engine(app: app)
        var events: [Event] = []
        var states: [(DeviceState, App)] = [(engine.state, engine.app)]
        while events.count < count {
            let e = gen.next()
            guard (try? engine.apply(e)) != nil else { continue }
            events.append(e)
            states.append((engine.state, engine.app))
        }
        return (events, states)
    }

    /// The rules' names as docs/rules.md writes them, in bold.
    static let rulesDoc: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/rules.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    @Test("every input records the event that last changed it, and the one before")
    func inputsAndTheirSetters() throws {
        let file = try Self.trace([.hinge(angle: 10), .hinge(angle: 40), .hinge(angle: 45), .keyboard(visible: true, height: nil)])
        let why = try TraceWhy.explain(file, seq: 4)
        func input(_ name: String) -> TraceWhy.Input? { why.allInputs.first { $0.name == name } }
        #expect(input("pose")?.value == "\"partiallyOpen\"" && input("pose")?.setBy?.seq == 2, "\(String(describing: input("pose")))")
        #expect(input("display")?.setBy?.seq == 2)
        #expect(input("keyboard")?.setBy?.seq == 4 && input("keyboard")?.setBy?.event.contains("keyboard") == true)
        #expect(input("hingeAngle")?.setBy?.seq == 3 && input("hingeAngle")?.before?.seq == 2 && input("hingeAngle")?.previousValue == "40")
        #expect(input("pip")?.setBy == nil && input("app")?.setBy == nil)
        #expect(throws: TraceError.self) { try TraceWhy.explain(file, seq: 99) }
    }

    /// Seed 002 ("On the outer display … a single vertical bar"; "In portrait on the inner
    /// display, bars go back to the top and bottom") and seed 003 ("when other interface
    /// elements appear, like the keyboard … The system then moves controls into the overflow menu").
    @Test("closing the hinge across the partly-open threshold is why the bar went vertical; the keyboard is why an item went to the overflow menu")
    func hingeThenKeyboard() throws {
        let file = try Self.trace([.hinge(angle: 180), .hinge(angle: 10), .keyboard(visible: true, height: nil)])
        let axis = try TraceWhy.explain(file, seq: 2).explanation
        #expect(axis.rule == .barAxis && axis.outcome == "\"vertical\"")
        #expect(axis.because?.name == "pose" && axis.because?.setBy?.seq == 2 && axis.because?.setBy?.event.contains("hinge") == true)
        #expect(axis.inputs.first { $0.name == "keyboard" } == nil, "the bar axis does not read the keyboard")

        let before = try TraceWhy.explain(file, seq: 2, subject: .item("search")).explanation
        #expect(before.outcome.hasPrefix("in the vertical bar"))
        let after = try TraceWhy.explain(file, seq: 3, subject: .item("search")).explanation
        #expect(after.rule == .overflow && after.outcome.hasPrefix("in the overflow menu"))
        #expect(after.because?.name == "keyboard" && after.because?.setBy?.seq == 3)
        let keyboard = try #require(after.inputs.first { $0.name == "keyboard" })
        #expect(keyboard.decisive == true && keyboard.previousValue == #"{"visible":false,"height":null}"#)
        #expect(after.inputs.first { $0.name == "pip" }?.decisive == nil, "an input still at its start value has no counterfactual")
    }

    @Test("every item of every layout of a random trace gets a rule docs/rules.md names, and each setter really changed its input")
    func everyItemOfEveryLayout() throws {
        let app = builtin("tabs")
        let (events, states) = Self.randomEvents(30, seed: 43, app: app)
        let file = try Self.trace(events, app: app)
        var asked = 0
        for seq in 1...events.count {
            var replay = Engine(app: app)
            for e in events[0..<seq] { _ = try replay.apply(e) }
            let ids = replay.layout.bars.flatMap { $0.items.map(\.id) + $0.overflow }
            for id in ids {
                let why = try TraceWhy.explain(file, seq: seq, subject: .item(id))
                let e = why.explanation
                #expect(Self.rulesDoc.contains("**\(e.rule.name)**"), "\(e.rule.name) is not in docs/rules.md")
                for input in e.inputs {
                    guard let s = input.setBy, let i = WhyInputs.names.firstIndex(of: input.name) else { continue }
                    #expect(s.seq <= seq)
                    let (a, appA) = states[s.seq - 1], (b, appB) = states[s.seq]
                    #expect(WhyInputs.differs(i, a, appA, b, appB), "seq \(s.seq) did not change \(input.name) (asked about \(id) at seq \(seq))")
                }
                asked += 1
            }
        }
        #expect(asked > 100)
    }

    @Test("every rule has its name in docs/rules.md, a passage and inputs the layout has")
    func theRuleTable() {
        for rule in LayoutRule.allCases {
            #expect(Self.rulesDoc.contains("**\(rule.name)**"), "\(rule.name)")
            #expect(!rule.passage.isEmpty)
            for name in rule.inputs { #expect(WhyInputs.names.contains(name), "\(rule.name) reads \(name)") }
        }
    }

    @Test("why's inputs are exactly the state encoding's members and the app")
    func inputsAreTheEncoding() throws {
        let app = builtin("tabs")
        var w = JSONWriter()
        DeviceState(app: app).write(to: &w, app: app)
        guard case .object(let fields) = try JSON.parse(w.bytes) else { Issue.record("not an object"); return }
        #expect(WhyInputs.names == ["app"] + fields.map(\.0))
    }

    /// A load folds the device shut and turns it to landscape at once: either alone makes the
    /// bar vertical, so neither is decisive alone; put back together they are.
    @Test("inputs one event set together are decisive together when neither is alone")
    func jointlyDecisive() throws {
        let app = builtin("tabs")
        var bytes = Array(try Self.trace([.hinge(angle: 180)], app: app).bytes)
        var loaded = DeviceState(app: app)
        loaded.orientation = .landscapeLeft
        loaded.deviceOrientation = .landscapeRight
        let engine = Engine(profile: .builtin, app: app, state: loaded, seq: 2)
        TraceEncoding.appendLoad(TraceLoad(seq: 2, t: 5_000_000, client: 1, engine: engine), to: &bytes)
        let why = try TraceWhy.explain(try TraceFile(bytes: bytes), seq: 2, subject: .field("barAxis")).explanation
        #expect(why.outcome == "\"vertical\"")
        let decisive = why.inputs.filter { $0.decisive == true }.map(\.name)
        #expect(decisive.contains("pose") && decisive.contains("orientation"), "\(why.inputs.map { ($0.name, $0.decisive) })")
        #expect(why.because?.setBy?.seq == 2)
    }

    @Test("fields by path: values, their rule, and clear errors for paths the layout lacks")
    func fields() throws {
        let file = try Self.trace([.hinge(angle: 180), .orientation(.landscapeLeft)])
        let side = try TraceWhy.explain(file, seq: 2, subject: .field("verticalBarSide")).explanation
        #expect(side.rule == .barSide && side.outcome == "\"right\"")
        let pose = try TraceWhy.explain(file, seq: 2, subject: .field("device.pose")).explanation
        #expect(pose.rule == .hingePose && pose.because?.setBy?.seq == 1)
        #expect(try TraceWhy.explain(file, seq: 2, subject: .field("bars.0.overflow")).explanation.rule == .overflow)
        #expect(throws: TraceError.self) { try TraceWhy.explain(file, seq: 2, subject: .field("bars.99")) }
        #expect(throws: TraceError.self) { try TraceWhy.explain(file, seq: 2, subject: .field("nothing")) }
        #expect(throws: TraceError.self) { try TraceWhy.explain(file, seq: 2, subject: .item("noSuchControl")) }
    }

    @Test("an observation that disagreed at the seq: what the device showed, what the model expected, and why")
    func mismatchAtAnObservation() throws {
        // The device still shows the open layout after the fold closed.
        var open = Engine(app: builtin("tabs"))
        _ = try open.apply(.hinge(angle: 180))
        var closed = open
        _ = try closed.apply(.hinge(angle: 10))
        let request = ObserveRequest(observed: Observation(describing: open.layout))
        let differences = Conformance.differences(request.observed, tolerance: request.tolerance, layout: closed.layout)
        let result = ConformanceResult(verdict: .mismatch, seq: 2, layoutSeq: 2, matchedSeq: 1, differences: differences)
        let file = try Self.trace([.hinge(angle: 180), .hinge(angle: 10)],
                                  after: [2: TraceObservation(seq: 2, t: 2_500_000, client: 1, request: request, result: result)])
        let why = try TraceWhy.explain(file, seq: 2)
        #expect(!why.mismatches.isEmpty)
        let axis = try #require(why.mismatches.first { $0.path == "barAxis" })
        #expect(axis.expected == "\"vertical\"" && axis.observed == "\"horizontal\"")
        #expect(axis.explanation?.rule == .barAxis && axis.explanation?.because?.setBy?.seq == 2)
    }
}

/// Checkpoints: a query that starts from the nearest one answers as one from the trace's start.
@Suite struct WhyCheckpointTests {
    @Test("from the nearest checkpoint (written and read back), every seq and subject gets the answer a replay from the start gives")
    func fromACheckpointAsFromTheStart() throws {
        let app = builtin("tabs")
        let events = TraceWhyTests.randomEvents(60, seed: 7, app: app).events
        let file = try TraceWhyTests.trace(events, app: app)
        let header = Array(file.bytes[0..<(file.recordsStart - 1)])
        let points = try WhyCheckpoint.build(file, every: 7)
        #expect(points.map(\.seq) == Array(stride(from: 7, through: 56, by: 7)))
        let sidecar = WhyCheckpoint.encode(points, every: 7, traceBytes: file.bytes.count, header: header, app: app)
        #expect(WhyCheckpoint.belongs(sidecar, every: 7, traceBytes: file.bytes.count, header: header))
        #expect(!WhyCheckpoint.belongs(sidecar, every: 7, traceBytes: file.bytes.count + 1, header: header), "a trace that grew")
        for seq in 0...events.count {
            let (point, readTo) = try #require(WhyCheckpoint.nearest(sidecar, before: seq, app: app))
            #expect(point.map { $0.seq <= seq && seq - $0.seq < 7 } ?? (seq < 7))
            let from = point?.offset ?? file.recordsStart
            let ranged = try TraceFile(bytes: header + [0x0A] + Array(file.bytes[from..<(readTo ?? file.bytes.count)]))
            for subject in [WhySubject.field("barAxis"), .field("device.orientation"), .item("search"), .item("edit")] {
                let resumed = try TraceWhy.explain(ranged, seq: seq, subject: subject, from: point)
                let whole = try TraceWhy.explain(file, seq: seq, subject: subject)
                #expect(resumed.json() == whole.json(), "seq \(seq) \(subject)")
            }
        }
    }

    /// A checkpoint's state is read back against the header's manifest: after another app
    /// replaced it, none is kept, and questions there replay from the last one before it.
    @Test("no checkpoint after an app event replaced the header's app; answers after it are those from the start")
    func noCheckpointPastAnotherApp() throws {
        let tabs = builtin("tabs"), split = builtin("split")
        let events: [Event] = [.hinge(angle: 180), .keyboard(visible: true, height: nil), .pip(active: true), .app(split),
                               .inspector(presented: true), .hinge(angle: 90), .keyboard(visible: false, height: nil), .orientation(.landscapeLeft)]
        let file = try TraceWhyTests.trace(events, app: tabs)
        let header = Array(file.bytes[0..<(file.recordsStart - 1)])
        let points = try WhyCheckpoint.build(file, every: 2)
        #expect(points.map(\.seq) == [2])
        let sidecar = WhyCheckpoint.encode(points, every: 2, traceBytes: file.bytes.count, header: header, app: tabs)
        for seq in 4...events.count {
            let (point, readTo) = try #require(WhyCheckpoint.nearest(sidecar, before: seq, app: tabs))
            let ranged = try TraceFile(bytes: header + [0x0A] + Array(file.bytes[(point?.offset ?? file.recordsStart)..<(readTo ?? file.bytes.count)]))
            let resumed = try TraceWhy.explain(ranged, seq: seq, from: point)
            #expect(resumed.json() == (try TraceWhy.explain(file, seq: seq)).json(), "seq \(seq)")
        }
    }

    /// A campaign resets the phone every few events with a `load` that keeps the profile and
    /// app: checkpoints go on past those, so a question late in a night's trace does not
    /// replay it from the start; a load of another app still ends them.
    @Test("checkpoints go on past a reset load and stop at a load of another app; every answer is the one from the start")
    func checkpointsPastResets() throws {
        let tabs = builtin("tabs"), split = builtin("split")
        var b = TraceBuilder(app: tabs)
        for round in 0..<4 {
            try b.event(.hinge(angle: 180))
            try b.event(round % 2 == 0 ? .orientation(.landscapeLeft) : .keyboard(visible: true, height: nil))
            try b.event(.pip(active: true))
            try b.load(LoadRequest())
        }
        let resetsEnd = b.engine.seq
        try b.load(LoadRequest(app: split))
        try b.event(.hinge(angle: 90))
        try b.event(.inspector(presented: true))
        let file = try b.file()
        let engine = b.engine
        let header = Array(file.bytes[0..<(file.recordsStart - 1)])
        let points = try WhyCheckpoint.build(file, every: 2)
        // Events at 1–3, 5–7, 9–11 and 13–15 (a reset after each three); a checkpoint at every second seq that is an event's.
        #expect(points.map(\.seq) == [2, 6, 10, 14] && points.allSatisfy { $0.seq < resetsEnd }, "\(points.map(\.seq))")
        let sidecar = WhyCheckpoint.encode(points, every: 2, traceBytes: file.bytes.count, header: header, app: tabs)
        for seq in 1...engine.seq {
            let (point, readTo) = try #require(WhyCheckpoint.nearest(sidecar, before: seq, app: tabs))
            let ranged = try TraceFile(bytes: header + [0x0A] + Array(file.bytes[(point?.offset ?? file.recordsStart)..<(readTo ?? file.bytes.count)]))
            let resumed = try TraceWhy.explain(ranged, seq: seq, from: point)
            #expect(resumed.json() == (try TraceWhy.explain(file, seq: seq)).json(), "seq \(seq)")
        }
    }

    @Test("a checkpoint whose state does not give its digest is refused, not trusted")
    func aForeignCheckpointIsRefused() throws {
        let file = try TraceWhyTests.trace([.hinge(angle: 180), .hinge(angle: 10), .keyboard(visible: true, height: nil), .pip(active: true)])
        var point = try #require(try WhyCheckpoint.build(file, every: 2).first)
        point.digest ^= 1
        let ranged = try TraceFile(bytes: Array(file.bytes[0..<file.recordsStart]) + Array(file.bytes[point.offset...]))
        #expect(!point.resumes(file.header))
        #expect { try TraceWhy.explain(ranged, seq: 3, from: point) } throws: { ($0 as? TraceError)?.message.contains("does not give the digest it recorded") == true }
    }
}
