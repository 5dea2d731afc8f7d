import CreaseCore
import Foundation

/// `plan`: how fast an app is explored and toured, in process, for every built-in app and
/// the bench's large app: states explored per second (`crease plan`'s exploration), tours
/// per second (`crease plan --tour` on the default rig, classes by page source), and the
/// process's peak memory after each (getrusage; it only grows, so each figure is the peak
/// so far). `--quick` bounds the exploration to 2,000 states.
enum PlanScenario {
    static func run(maxStates: Int, progress: Progress) -> ScenarioReport {
        var report = ScenarioReport(name: "plan")
        var apps: [(String, App)] = BuiltinApps.names.map { ("builtin:\($0)", BuiltinApps.app(named: $0)!) }
        apps.append(("the bench's large app", LargeApp.app()))
        report.setup.append("apps: \(apps.map(\.0).joined(separator: ", ")); at most \(Format.grouped(maxStates)) states; the tour on the default rig, classes by page source")
        for (name, app) in apps {
            progress.phase("plan: exploring \(name)")
            let start = DeviceState(app: app)
            var t = Clock.now()
            let plan = ModelExplorer.explore(app: app, profile: .builtin, from: start, options: .init(maxStates: maxStates))
            let exploreNs = max(1, Clock.now() - t)
            progress.phase("plan: touring \(name)")
            t = Clock.now()
            let tour: Tour
            do {
                tour = try Tour.plan(app: app, profile: .builtin, rig: .standard, from: start,
                                     options: .init(observe: .pageSource, maxStates: maxStates))
            } catch {
                report.problems.append("\(name): the tour failed: \(error)")
                continue
            }
            let tourNs = max(1, Clock.now() - t)
            let label = name.hasPrefix("builtin:") ? String(name.dropFirst("builtin:".count)) : "large"
            report.figures.append(Figure(name: "\(label): states explored", value: Double(plan.states) / (Double(exploreNs) / 1e9), unit: "states/s"))
            report.figures.append(Figure(name: "\(label): tours", value: 1e9 / Double(tourNs), unit: "tours/s"))
            report.figures.append(Figure(name: "\(label): peak RSS so far", value: Double(peakRSSKiB()) / 1024, unit: "MiB"))
            report.notes.append("\(label): \(Format.grouped(plan.states)) states, \(Format.grouped(plan.layouts)) layouts\(plan.truncated ? " (cut)" : ""); "
                                + "tour of \(Format.grouped(tour.classes)) classes in \(Format.fixed(Double(tourNs) / 1e9, 2)) s, "
                                + "estimated \(Format.fixed(tour.parts[0].seconds / 60, 1)) min, bound \(Format.fixed(tour.lowerBound / 60, 1)) min")
        }
        return report
    }

    static func peakRSSKiB() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return usage.ru_maxrss
    }
}
