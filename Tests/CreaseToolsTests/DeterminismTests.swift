import CreaseCore
import Foundation
import Testing

/// Swift seeds its hashing per process, so an output that depends on the order of a
/// Set or Dictionary differs between processes while two runs in one process agree.
/// Here every run is a process of its own, checked against this process's engine.
@Suite struct DeterminismTests {
    @Test("identical input gives identical layout bytes in separate processes",
          arguments: ["tabs", "split-view", "app-replace", "rtl", "sheet", "outer-landscape"])
    func separateProcessesAgree(scenario: String) throws {
        let gen = try CommandRunner.run(["gen", "--scenario", scenario, "--seed", "11", "--seconds", "2"])
        #expect(gen.status == 0, "\(gen.stderr)")
        var engine = Engine(profile: Engine.builtinProfile, app: Engine.builtinApp(named: "tabs")!)
        var expected = ""
        for line in gen.stdout.split(separator: "\n") {
            guard case .event(let envelope) = try Wire.decode(line: Array(line.utf8)) else { continue }
            try engine.apply(envelope.event)
            expected += String(decoding: engine.layoutJSON(), as: UTF8.self) + "\n"
        }
        #expect(engine.seq > 100, "the scenario has events")
        for _ in 0..<2 {
            let run = try CommandRunner.run(["layout", "--events", "-", "--each"], stdin: gen.stdout)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == expected)
        }
    }
}
