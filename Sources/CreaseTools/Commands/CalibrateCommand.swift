import CreaseCore
import Foundation

/// `crease calibrate TRACE...`: fits the profile's assumed numbers to what the device showed
/// in a campaign's traces (docs/calibrate.md).
enum CalibrateCommand {
    static let usage = "crease calibrate TRACE... [--profile FILE] [--fit FIELD,...] [-o PROFILE] [--json]"

    static func run(_ args: inout Arguments) throws -> Int32 {
        let profilePath = try args.option("--profile")
        let fitList = try args.option("--fit")
        let output = try args.option("-o")
        let json = args.flag("--json")
        let paths = args.remainingPositionals()
        try args.finish()
        guard !paths.isEmpty else { throw UsageError("at least one trace is needed") }
        let known = DeviceProfile.fieldRanges.map(\.name)
        let fields = fitList.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } } ?? ProfileCalibration.defaultFields
        for (i, f) in fields.enumerated() {
            guard known.contains(f) else { throw UsageError("--fit \(f): not a profile field; fields: \(known.joined(separator: ", "))") }
            guard !fields[..<i].contains(f) else { throw UsageError("--fit: \(f) is named twice") }
        }
        var traces: [ProfileCalibration.Trace] = []
        for path in paths {
            let file = try TraceIO.loadForReading(path).file
            TraceIO.warnIfCut(file, name: path)
            let trace = ProfileCalibration.Trace(name: path, file: file)
            if trace.unresolvedLooks > 0 {
                Console.err("warning: \(path): \(trace.unresolvedLooks) looks are kept as a view of a layout this build does not give; they are not judged")
            }
            traces.append(trace)
        }
        // The profile the traces were recorded with, unless one is given.
        let start = try profilePath.map { try Inputs.profile($0) } ?? traces[0].file.header.profile
        let began = TraceIO.monotonicNs()
        let r = ProfileCalibration.calibrate(traces, start: start, fields: fields)
        // Nothing the device showed: no fit, and no profile that would claim one.
        guard r.observations > 0 else {
            throw CheckFailed("no observation in \(paths.count == 1 ? paths[0] : "these \(paths.count) traces"): nothing to calibrate against (a rig records them with observe)")
        }
        let seconds = Double(TraceIO.monotonicNs() - began) / 1e9
        if let output { try TraceIO.write(fittedProfile(r, traces: paths), to: output) }
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("observations"); w.int(r.observations)
            w.key("matchedBefore"); w.int(r.matchedBefore)
            w.key("matchedAfter"); w.int(r.matchedAfter)
            w.key("before"); write(r.before, to: &w)
            w.key("after"); write(r.after, to: &w)
            w.key("replays"); w.int(r.replays)
            w.key("fields"); w.beginArray()
            for f in r.fields {
                w.beginObject()
                w.key("field"); w.string(f.field)
                w.key("start"); w.number(f.start)
                w.key("fitted"); w.number(f.fitted)
                w.key("interval"); w.beginArray(); w.number(f.interval.lowerBound); w.number(f.interval.upperBound); w.endArray()
                w.key("exercised"); w.bool(f.exercised)
                w.key("mismatchesResolved"); w.int(f.mismatchesResolved)
                w.key("resolvedByMatch"); w.int(f.resolvedByMatch)
                w.key("resolvedByStale"); w.int(f.resolvedByStale)
                w.key("explained"); write(f.score, to: &w)
                w.key("restsOnStale"); w.bool(f.restsOnStale)
                w.key("keptStart"); w.bool(f.keptStart)
                w.endObject()
            }
            w.endArray()
            w.key("unexplained"); w.beginArray()
            for u in r.unexplained {
                w.beginObject()
                w.key("trace"); w.string(u.trace); w.key("seq"); w.int(u.seq); w.key("t"); w.int(Int(u.t))
                w.key("differences"); w.beginArray(); for d in u.differences { w.string("\(d)") }; w.endArray()
                w.endObject()
            }
            w.endArray()
            w.endObject()
            Console.out(bytes: w.bytes)
            return ExitStatus.success
        }
        Console.out("calibrate: \(traces.count) trace\(traces.count == 1 ? "" : "s"), \(r.observations) observations; "
                    + "explained before \(r.matchedBefore) (\(r.before.matched) by match), after \(r.matchedAfter) (\(r.after.matched) by match)"
                    + " (\(r.replays) replays in \(Format.fixed(seconds, 2)) s)")
        for f in r.fields {
            let interval = f.interval.lowerBound == f.interval.upperBound ? Format.fixed(f.fitted, 1)
                : "\(Format.fixed(f.interval.lowerBound, 1))…\(Format.fixed(f.interval.upperBound, 1))"
            let name = f.field.padding(toLength: 22, withPad: " ", startingAt: 0)
            let line = f.exercised
                ? "\(name) \(Format.fixed(f.start, 1)) -> \(Format.fixed(f.fitted, 1))   explains equally: \(interval)"
                    + (f.keptStart ? " (holds the start: kept)" : " (its middle)")
                    + "   explained: \(f.score.matched) by match, \(f.score.staleOnly) only stale"
                    + (f.mismatchesResolved > 0 ? "   resolved: \(f.resolvedByMatch) by match, \(f.resolvedByStale) only stale" : "")
                : "\(name) \(Format.fixed(f.start, 1))   not exercised by these traces: kept"
            Console.out(line)
            if f.exercised, f.restsOnStale {
                Console.err("warning: \(f.field): the fit rests mostly on stale looks (\(f.resolvedByStale) of \(f.mismatchesResolved) resolved); "
                            + "the device had not settled when it was read, so the value is doubtful: look after the device settles")
            }
        }
        if !r.unexplained.isEmpty {
            Console.out("unexplained: \(r.unexplained.count) observations no candidate explains (the real bugs):")
            for u in r.unexplained.prefix(10) {
                Console.out("  \(u.trace) seq \(u.seq): " + (u.differences.first.map { "\($0)" } ?? "") + (u.differences.count > 1 ? " and \(u.differences.count - 1) more" : ""))
            }
        }
        if let output { Console.out("fitted profile written to \(output)") }
        return ExitStatus.success
    }

    private static func write(_ s: ProfileCalibration.Score, to w: inout JSONWriter) {
        w.beginObject(); w.key("matched"); w.int(s.matched); w.key("staleOnly"); w.int(s.staleOnly); w.endObject()
    }

    /// The fitted profile, named as calibrated (from which profile and traces), with a
    /// `calibration` member saying where each fitted value came from.
    static func fittedProfile(_ r: ProfileCalibration.Result, traces: [String]) -> [UInt8] {
        var fitted = r.profile
        let base = (traces.first.map { ($0 as NSString).lastPathComponent } ?? "")
        fitted.name = "\(r.profile.name), calibrated from " + (traces.count == 1 ? base : "\(traces.count) traces (\(base), …)")
        var profile = JSONWriter()
        fitted.write(to: &profile)
        var bytes = profile.bytes
        var w = JSONWriter()
        w.key("calibration"); w.beginObject()
        w.key("traces"); w.beginArray(); for t in traces { w.string(t) }; w.endArray()
        w.key("observations"); w.int(r.observations)
        w.key("fields"); w.beginObject()
        for f in r.fields where f.exercised {
            w.key(f.field); w.beginObject()
            w.key("from"); w.number(f.start)
            w.key("interval"); w.beginArray(); w.number(f.interval.lowerBound); w.number(f.interval.upperBound); w.endArray()
            w.key("fitted"); w.number(f.fitted)
            w.key("mismatchesResolved"); w.int(f.mismatchesResolved)
            w.key("resolvedByMatch"); w.int(f.resolvedByMatch)
            w.key("resolvedByStale"); w.int(f.resolvedByStale)
            w.endObject()
        }
        w.endObject()
        w.endObject()
        // Into the profile object, before its closing brace.
        bytes.removeLast()
        bytes.append(UInt8(ascii: ","))
        bytes += w.bytes
        bytes.append(UInt8(ascii: "}"))
        bytes.append(0x0A)
        return bytes
    }
}
