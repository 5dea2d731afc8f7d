import CreaseCore
@testable import CreaseTools
import Foundation
import Testing

/// Issue 39 through the command line: `crease plan --tour` writes the same bytes every run,
/// `crease replay --to` runs it on a real creased, `crease coverage` counts its classes, and
/// an interrupted campaign resumes from its coverage.
@Suite struct TourCommandTests {
    static let rigs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/rigs").path

    static func lines(_ path: String) throws -> [JSONValue] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
    }

    @Test("a tour is the same bytes on every run, its header says what it holds, and its summary goes to stderr")
    func sameBytesAndAHeader() throws {
        let scratch = Scratch()
        let a = scratch.path + "/a.jsonl", b = scratch.path + "/b.jsonl"
        for out in [a, b] {
            let r = try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:split", "--rig", Self.rigs + "/motor-rig.json",
                                                  "--max-depth", "4", "-o", out], in: scratch)
            #expect(r.status == 0 && r.stdout.isEmpty && r.stderr.contains("classes to observe"), "\(r.stderr)")
        }
        #expect(FileManager.default.contents(atPath: a) == FileManager.default.contents(atPath: b))
        let lines = try Self.lines(a)
        let header = lines[0]
        #expect(header["crease"] == .string("tour") && header["observe"] == .string("page-source") && header["truncated"] == .bool(false))
        guard case .number(let steps)? = header["steps"], case .number(let estimate)? = header["estimatedSeconds"],
              case .number(let bound)? = header["lowerBoundSeconds"], case .array(let unreachable)? = header["unreachable"] else {
            Issue.record("header fields missing"); return
        }
        #expect(Int(steps) == lines.count - 1 && estimate >= bound && !unreachable.isEmpty)
        var sum = 0.0
        for step in lines.dropFirst() {
            guard case .number(let c)? = step["cost"] else { Issue.record("a step without cost"); return }
            sum += c
            let observe = step["why"] == .string("observe")
            #expect((step["expected"] != nil) == observe && step["class"] != nil)
        }
        #expect(abs(sum - estimate) < 1e-6)
        #expect(unreachable.allSatisfy { $0["needs"] != nil && $0["expected"] != nil && $0["class"] != nil })
    }

    @Test("the tour runs on a real creased digest for digest; coverage of its trace is 100 % of its classes; a budget-cut tour resumes to the rest")
    func runCoverAndResume() throws {
        let scratch = Scratch()
        let rig = Self.rigs + "/motor-rig.json"
        let tour = scratch.path + "/tour.jsonl", first = scratch.path + "/first.jsonl", rest = scratch.path + "/rest.jsonl"
        let common = ["plan", "--tour", "--app", "builtin:split", "--rig", rig, "--max-depth", "4"]
        #expect(try runProgram(Built.crease, common + ["-o", tour], in: scratch).status == 0)
        #expect(try runProgram(Built.crease, common + ["--budget", "200", "-o", first], in: scratch).status == 0)
        let cut = try Self.lines(first)[0]
        #expect(cut["truncated"] == .bool(true))

        // The first night: the budget-cut tour on a real daemon.
        let daemon = try LiveDaemon(scratch, ["--app", "builtin:split"])
        let ran = try runProgram(Built.crease, ["replay", first, "--to", daemon.socket], in: scratch)
        #expect(ran.status == 0, "\(ran.stdout)\(ran.stderr)")
        // A daemon no longer at the tour's start is refused, naming both digests.
        let again = try runProgram(Built.crease, ["replay", first, "--to", daemon.socket], in: scratch)
        #expect(again.status == 1 && again.stderr.contains("the tour starts at"), "\(again.stderr)")
        _ = daemon.stop()
        let traces = try daemon.traceFiles()
        let partial = try runProgram(Built.crease, ["coverage", "--plan", tour, "--json"] + traces, in: scratch)
        #expect(partial.status == 0, "\(partial.stderr)")
        let coverage = scratch.path + "/coverage.json"
        try partial.stdout.write(toFile: coverage, atomically: true, encoding: .utf8)
        let report = try JSON.parse(Array(partial.stdout.utf8))
        guard case .number(let classes)? = report["classes"]?["total"], case .number(let covered)? = report["covered"],
              report["headline"] == .string("passed"), report["classes"]?["observed"] == .number(0) else {
            Issue.record("coverage --json has no classes: \(partial.stdout)"); return
        }
        #expect(covered > 0 && covered < classes)
        let belowMin = try runProgram(Built.crease, ["coverage", "--plan", tour, "--min", "100"] + traces, in: scratch)
        #expect(belowMin.status == 1)

        // The next night: the rest, from the start again, skipping what was seen.
        let resumed = try runProgram(Built.crease, common + ["--resume", coverage, "-o", rest], in: scratch)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let otherCount = try runProgram(Built.crease, common + ["--observe", "digest", "--resume", coverage, "-o", rest + ".digest"], in: scratch)
        #expect(otherCount.status == 2 && otherCount.stderr.contains("counts classes by \"page-source\""), "\(otherCount.stderr)")
        let restHeader = try Self.lines(rest)[0]
        guard case .number(let restClasses)? = restHeader["classes"] else { Issue.record("no classes"); return }
        #expect(restClasses == classes - covered)
        let second = try LiveDaemon(scratch, name: "e", ["--app", "builtin:split"])
        #expect(try runProgram(Built.crease, ["replay", rest, "--to", second.socket], in: scratch).status == 0)
        _ = second.stop()
        let whole = try runProgram(Built.crease, ["coverage", "--plan", tour, "--min", "100"] + traces + (try second.traceFiles()), in: scratch)
        #expect(whole.status == 0 && whole.stdout.contains("(100.00 %) passed by the model, by page-source"), "\(whole.stdout)\(whole.stderr)")
    }

    @Test("--split N writes N files whose classes together are the tour's; bad input is exit 2 naming what is wrong")
    func splitAndErrors() throws {
        let scratch = Scratch()
        let out = scratch.path + "/night.jsonl"
        let r = try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:split", "--max-depth", "4", "--split", "3", "-o", out], in: scratch)
        #expect(r.status == 0, "\(r.stderr)")
        var classes: [JSONValue] = []
        for i in 1...3 {
            let lines = try Self.lines(scratch.path + "/night-\(i).jsonl")
            #expect(lines[0]["part"] == .number(Double(i)) && lines[0]["parts"] == .number(3))
            classes += lines.dropFirst().filter { $0["why"] == .string("observe") }.compactMap { $0["class"] }
        }
        let header = try Self.lines(scratch.path + "/night-1.jsonl")[0]
        #expect(header["classes"] == .number(Double(classes.count)))
        // Two phones, each its part from the start; the parts' coverage together is the whole.
        let pair = scratch.path + "/pair.jsonl"
        #expect(try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:split", "--max-depth", "3", "--split", "2", "-o", pair],
                               in: scratch).status == 0)
        var traces: [String] = []
        for i in 1...2 {
            let phone = try LiveDaemon(scratch, name: "phone\(i)", ["--app", "builtin:split"])
            let ran = try runProgram(Built.crease, ["replay", scratch.path + "/pair-\(i).jsonl", "--to", phone.socket], in: scratch)
            #expect(ran.status == 0, "\(ran.stderr)")
            _ = phone.stop()
            traces += try phone.traceFiles()
        }
        let parts = ["--plan", scratch.path + "/pair-1.jsonl", "--plan", scratch.path + "/pair-2.jsonl"]
        let merged = try runProgram(Built.crease, ["coverage"] + parts + ["--min", "100"] + traces, in: scratch)
        #expect(merged.status == 0 && merged.stdout.contains("(100.00 %)"), "\(merged.stdout)\(merged.stderr)")
        let onePhone = try runProgram(Built.crease, ["coverage"] + parts + ["--min", "100", traces[0]], in: scratch)
        #expect(onePhone.status == 1, "one phone's trace covers only its part")
        let badRig = scratch.path + "/bad-rig.json"
        try #"{"crease":"rig","version":1,"name":"x","moves":{}}"#.write(toFile: badRig, atomically: true, encoding: .utf8)
        for (args, says) in [(["--rig", badRig], "moves.hinge"), (["--observe", "pixels"], "--observe is digest or page-source"),
                             (["--split", "2"], "give -o"), (["--json"], "give -o"), (["--budget", "-1"], "--budget"), (["--calibration", "x.json"], "x.json")] {
            let bad = try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:split", "--max-depth", "2"] + args, in: scratch)
            #expect(bad.status == 2 && bad.stderr.contains(says), "\(args): \(bad.stderr)")
        }
    }

    @Test("plan --tour --calibration takes crease calibrate --json and puts the probes in the middle of what it left open")
    func calibrationPlacesTheProbes() throws {
        let scratch = Scratch()
        let observations = ReportCommandTests.traces.appendingPathComponent("rig-observations.jsonl").path
        let calibrated = try runProgram(Built.crease, ["calibrate", observations, "--fit", "partialOpenThreshold,fullyOpenThreshold", "--json"], in: scratch)
        let calibration = scratch.path + "/calibration.json"
        try calibrated.stdout.write(toFile: calibration, atomically: true, encoding: .utf8)
        let c = try JSON.parse(Array(calibrated.stdout.utf8))
        guard case .array(let fields)? = c["fields"], case .array(let partial)? = fields.first(where: { $0["field"] == .string("partialOpenThreshold") })?["interval"],
              case .number(let lo)? = partial.first, case .number(let hi)? = partial.last else {
            Issue.record("no interval for partialOpenThreshold: \(calibrated.stdout)"); return
        }
        let tour = scratch.path + "/tour.jsonl"
        let r = try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:split", "--max-depth", "2", "--calibration", calibration, "-o", tour], in: scratch)
        #expect(r.status == 0, "\(r.stderr)")
        // The probes (--calibration implies --probes): the first sweep is around the interval's middle.
        let steps = try String(contentsOfFile: tour, encoding: .utf8).split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
        let probed = steps.filter { $0["why"] == .string("probe") && $0["expected"] != nil && $0["expected"] != .null }.compactMap { step -> Double? in
            if case .number(let a)? = step["event"]?["angle"] { a } else { nil }
        }
        let expected = TourProbes.sweep(20, profile: .builtin, within: lo...hi)
        #expect(Array(probed.prefix(4)) == expected, "\(probed) against \(expected)")
        let notCalibration = scratch.path + "/other.json"
        try #"{"coveredClasses":[]}"#.write(toFile: notCalibration, atomically: true, encoding: .utf8)
        let bad = try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:split", "--max-depth", "2", "--calibration", notCalibration], in: scratch)
        #expect(bad.status == 2 && bad.stderr.contains("not the output of crease calibrate --json"), "\(bad.stderr)")
        let tabOnly = scratch.path + "/tab.json"
        try #"{"fields":[{"field":"tabLength","interval":[1,2]}]}"#.write(toFile: tabOnly, atomically: true, encoding: .utf8)
        let neither = try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:split", "--max-depth", "2", "--calibration", tabOnly], in: scratch)
        #expect(neither.status == 2 && neither.stderr.contains("calibrates none of the fields the probes sweep (its fields: tabLength)"), "\(neither.stderr)")
    }

    @Test("replay TOUR --looks rehearses a tour as a correct device: each observe step's expected is sent, matches, and is kept as a reference to its layout")
    func rehearsalWithLooks() throws {
        let scratch = Scratch()
        let tour = scratch.path + "/tour.jsonl"
        #expect(try runProgram(Built.crease, ["plan", "--tour", "--app", "builtin:sidebar", "--max-depth", "2", "-o", tour], in: scratch).status == 0)
        let observes = try Self.lines(tour).dropFirst().filter { $0["why"] == .string("observe") }.count
        let daemon = try LiveDaemon(scratch, ["--app", "builtin:sidebar"])
        let ran = try runProgram(Built.crease, ["replay", tour, "--to", daemon.socket, "--looks"], in: scratch)
        #expect(ran.status == 0 && ran.stderr.contains("\(observes) looks: \(observes) match"), "\(ran.stderr)")
        _ = daemon.stop()
        let records = try String(contentsOfFile: try daemon.traceFiles()[0], encoding: .utf8).split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
        let looks = records.filter { $0["observe"] != nil }
        #expect(looks.count == observes && looks.allSatisfy { $0["observedAs"]?["view"] == .string("pageSource") && $0["verdict"] == .string("match") })
        // An expected that is no observation is refused when the tour is read, before anything is sent.
        let bad = scratch.path + "/bad.jsonl"
        try (try String(contentsOfFile: tour, encoding: .utf8)).replacingOccurrences(of: #""expected":{"#, with: #""expected":{"colour":1,"#)
            .write(toFile: bad, atomically: false, encoding: .utf8)
        let refused = try runProgram(Built.crease, ["replay", bad, "--to", daemon.socket, "--looks"], in: scratch)
        #expect(refused.status == 2 && refused.stderr.contains("\"expected\" is no observation"), "\(refused.stderr)")
        let alone = try runProgram(Built.crease, ["replay", tour, "--looks"], in: scratch)
        #expect(alone.status == 2 && alone.stderr.contains("--looks"), "\(alone.stderr)")
    }

    @Test("with a tilt stage, the probes' motion samples carry their read times: layout --events ends on the tour's digest, replay --to at full speed still holds each past the settle time, and a calibration of the filter places them")
    func tiltStageProbesRunOnADaemon() throws {
        let scratch = Scratch()
        let tour = scratch.path + "/tour.jsonl"
        let plan = ["plan", "--tour", "--app", "builtin:tabs", "--rig", Self.rigs + "/tilt-stage-rig.json", "--max-depth", "2", "--probes"]
        let r = try runProgram(Built.crease, plan + ["-o", tour], in: scratch)
        #expect(r.status == 0, "\(r.stderr)")
        let steps = try Self.lines(tour).dropFirst()
        let motion = steps.filter { $0["event"]?["event"] == .string("motion") }
        #expect(motion.count == 24 && motion.allSatisfy { if case .number? = $0["event"]?["ts"] { true } else { false } })
        let events = scratch.path + "/events.jsonl"
        var text = ""
        for step in steps where step["event"] != .null {
            var w = JSONWriter()
            w.value(step["event"]!)
            text += String(decoding: w.bytes, as: UTF8.self) + "\n"
        }
        try text.write(toFile: events, atomically: true, encoding: .utf8)
        let layout = try runProgram(Built.crease, ["layout", "--app", "builtin:tabs", "--events", events], in: scratch)
        #expect(try JSON.parse(Array(layout.stdout.utf8))["digest"] == steps.last!["digest"], "\(layout.stderr)")

        let daemon = try LiveDaemon(scratch, ["--app", "builtin:tabs"])
        let ran = try runProgram(Built.crease, ["replay", tour, "--to", daemon.socket, "--speed", "max", "--looks"], in: scratch)
        let looks = steps.filter { $0["expected"] != nil }.count
        #expect(ran.status == 0 && ran.stderr.contains("\(looks) looks: \(looks) match"), "\(ran.stdout)\(ran.stderr)")
        _ = daemon.stop()

        let calibration = scratch.path + "/filter.json"
        try #"{"fields":[{"field":"orientationHysteresis","interval":[18,26]},{"field":"orientationSettleMs","interval":[80,250]}]}"#
            .write(toFile: calibration, atomically: true, encoding: .utf8)
        let placed = scratch.path + "/placed.jsonl"
        #expect(try runProgram(Built.crease, plan + ["--calibration", calibration, "-o", placed], in: scratch).status == 0)
        let held = try Self.lines(placed).dropFirst().filter { $0["event"]?["event"] == .string("motion") }
        guard case .number(let a)? = held[0]["event"]?["ts"], case .number(let b)? = held[1]["event"]?["ts"] else {
            Issue.record("no ts on the motion probes"); return
        }
        #expect(b - a == 350_000_000, "held past the calibrated settle time's top (250 ms) by 100 ms")
        let outOfRange = scratch.path + "/far.json"
        try #"{"fields":[{"field":"flatTilt","interval":[5,95]}]}"#.write(toFile: outOfRange, atomically: true, encoding: .utf8)
        let refused = try runProgram(Built.crease, plan + ["--calibration", outOfRange], in: scratch)
        #expect(refused.status == 2 && refused.stderr.contains("(flatTilt) has no interval [low, high] within 10…89"), "\(refused.stderr)")
    }
}
