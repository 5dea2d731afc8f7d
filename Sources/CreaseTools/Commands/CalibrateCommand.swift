import CreaseCore

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
        for f in fields where !known.contains(f) {
            throw UsageError("--fit \(f): not a profile field; fields: \(known.joined(separator: ", "))")
        }
        var traces: [ProfileCalibration.Trace] = []
        for path in paths {
            let file = try TraceIO.load(path)
            TraceIO.warnIfCut(file, name: path)
            traces.append(.init(name: path, file: file))
        }
        // The profile the traces were recorded with, unless one is given.
        let start = try profilePath.map { try Inputs.profile($0) } ?? traces[0].file.header.profile
        let began = TraceIO.monotonicNs()
        let r = ProfileCalibration.calibrate(traces, start: start, fields: fields)
        let seconds = Double(TraceIO.monotonicNs() - began) / 1e9
        if let output { try TraceIO.write(fittedProfile(r, traces: paths), to: output) }
        if json {
            var w = JSONWriter()
            w.beginObject()
            w.key("observations"); w.int(r.observations)
            w.key("matchedBefore"); w.int(r.matchedBefore)
            w.key("matchedAfter"); w.int(r.matchedAfter)
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
                    + "\(r.matchedBefore) explained before, \(r.matchedAfter) after (\(r.replays) replays in \(Format.fixed(seconds, 2)) s)")
        for f in r.fields {
            let interval = f.interval.lowerBound == f.interval.upperBound ? Format.fixed(f.fitted, 1)
                : "\(Format.fixed(f.interval.lowerBound, 1))…\(Format.fixed(f.interval.upperBound, 1))"
            let line = f.exercised
                ? "\(f.field.padding(toLength: 22, withPad: " ", startingAt: 0)) \(Format.fixed(f.start, 1)) -> \(Format.fixed(f.fitted, 1))   explains equally: \(interval)"
                    + (f.mismatchesResolved > 0 ? "   \(f.mismatchesResolved) mismatches resolved" : "")
                : "\(f.field.padding(toLength: 22, withPad: " ", startingAt: 0)) \(Format.fixed(f.start, 1))   not exercised by these traces: kept"
            Console.out(line)
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

    /// The fitted profile, with a `calibration` member saying where each fitted value came from.
    static func fittedProfile(_ r: ProfileCalibration.Result, traces: [String]) -> [UInt8] {
        var profile = JSONWriter()
        r.profile.write(to: &profile)
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
            w.key("mismatchesResolved"); w.int(f.mismatchesResolved)
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
