import CreaseCore
@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Testing

@Suite struct RigLabelOptionTests {
    @Test("--label KEY=VALUE is repeatable, keeps its order, and splits at the first =")
    func labelsParse() throws {
        guard case .run(let o) = try DaemonOptions.parse(["--label", "rig=bench-3", "--label=serial=F2LX=91", "--label", "app.version=1.4.2",
                                                           "--label", "note="]) else {
            Issue.record("expected run"); return
        }
        #expect(o.labels.map(\.key) == ["rig", "serial", "app.version", "note"])
        #expect(o.labels.map(\.value) == ["bench-3", "F2LX=91", "1.4.2", ""])
    }

    @Test("bad labels are usage errors that say why", arguments: [
        (["--label", "rig"], "KEY=VALUE"),
        (["--label", "1rig=a"], "a letter"),
        (["--label", "rig id=a"], "a letter"),
        (["--label", "rig=a", "--label", "rig=b"], "twice"),
        (["--label", "rig=a\u{1}"], "control"),
        (["--label"], "needs a value"),
    ])
    func badLabels(arguments: [String], why: String) {
        do {
            _ = try DaemonOptions.parse(arguments)
            Issue.record("\(arguments) must be refused")
        } catch {
            #expect(error.description.contains(why), "\(error)")
        }
    }
}
