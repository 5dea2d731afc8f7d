import CreaseCore
import Foundation

/// `crease glitches --layouts FILE|-`: the glitch checks over layouts given directly, one
/// layout line per input line as Crease prints it with an added integer `t` (ns), so
/// layouts from anywhere (a device, another tool) can be checked. Exit 1 when any glitch
/// is found, 0 when none, 2 for bad input (naming the line and field).
enum GlitchesCommand {
    static let usage = "crease glitches --layouts FILE|- [--app FILE|builtin:NAME] [--json] [--ignore KIND[:SUBJECT]]... \(GlitchCLI.thresholdUsage)"

    static func run(_ args: inout Arguments) throws -> Int32 {
        guard let path = try args.option("--layouts") else { throw UsageError("--layouts FILE|- is needed") }
        let appSpec = try args.option("--app")
        let output = try GlitchCLI.parse(&args)
        try args.finish()
        // Without an app the declared items are unknown, so lostItem is not checked.
        let app = try appSpec.map { try Inputs.app($0) }
        var checker = GlitchChecker(options: output.options, app: app)
        let name = path == "-" ? "stdin" : path
        var glitches: [Glitch] = []
        var layouts = 0
        for (number, line) in Inputs.lines(try Inputs.readFile(path)) {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            let frame: (seq: Int, t: UInt64, layout: Layout)
            do { frame = try LayoutStream.decode(line) } catch {
                throw UsageError("\(name):\(number): \(error)")
            }
            layouts += 1
            let digest = Digest.fnv1a(frame.layout.encodeBody())
            let found = checker.check(layout: frame.layout, seq: frame.seq, t: frame.t, digest: digest)
            output.print(found)
            glitches += found
        }
        output.summary(glitches, of: "\(layouts) layouts\(app == nil ? " (no --app: lostItem not checked)" : "")")
        return glitches.contains(where: output.options.fails) ? ExitStatus.checkFailed : ExitStatus.success
    }
}

/// One line of `crease glitches --layouts`: a layout line with its `t`.
enum LayoutStream {
    static func decode(_ line: ArraySlice<UInt8>) throws(InputError) -> (seq: Int, t: UInt64, layout: Layout) {
        let value: JSONValue
        do { value = try JSON.parse(line) } catch {
            throw InputError(.badJSON, "not valid JSON: \(error)")
        }
        let decoded = try Layout.decodeLine(value, extra: ["t"])
        guard let tValue = value["t"] else { throw InputError.missing("t", in: "layout") }
        guard case .number(let t) = tValue else { throw InputError.wrongType("t", expected: "a whole number of nanoseconds", got: tValue) }
        guard t >= 0, t == t.rounded(), t <= Double(TraceHeader.maxInteger) else {
            throw InputError.outOfRange("t", "must be a whole number of nanoseconds from 0 to 2^53", got: t)
        }
        return (decoded.seq, UInt64(t), decoded.layout)
    }
}

/// What `crease glitches` and `crease trace glitches` share: threshold and ignore options,
/// and printing glitches as lines or JSON.
struct GlitchCLI {
    static let thresholdUsage = "[--flap-returns N] [--flap-window-ms MS] [--flash-ms MS] [--budget-us US] [--stale-fails]"

    var options: GlitchOptions
    var json: Bool

    static func parse(_ args: inout Arguments) throws -> GlitchCLI {
        var o = GlitchOptions()
        if let n = try args.int("--flap-returns") {
            guard n >= 0 else { throw UsageError("--flap-returns must be 0 or more") }
            o.flappingReturns = n
        }
        if let ms = try args.double("--flap-window-ms") { o.flappingWindowNs = try nanoseconds(ms, scale: 1e6, name: "--flap-window-ms") }
        if let ms = try args.double("--flash-ms") { o.flashNs = try nanoseconds(ms, scale: 1e6, name: "--flash-ms") }
        if let us = try args.double("--budget-us") { o.budgetNs = try nanoseconds(us, scale: 1e3, name: "--budget-us") }
        for text in try args.options("--ignore") {
            do { o.ignore.append(try GlitchIgnore.parse(text)) } catch { throw UsageError("--ignore \(text): \(error)") }
        }
        o.staleFails = args.flag("--stale-fails")
        if let score = try args.double("--layout-shift") {
            guard score >= 0, score.isFinite else { throw UsageError("--layout-shift takes a score of 0 or more (0.1 is the web's poor)") }
            o.layoutShift = score
        }
        return GlitchCLI(options: o, json: args.flag("--json"))
    }

    private static func nanoseconds(_ v: Double, scale: Double, name: String) throws -> UInt64 {
        guard v > 0, v * scale < 1e18 else { throw UsageError("\(name) must be more than 0") }
        return UInt64((v * scale).rounded())
    }

    /// Glitches as found: one JSON object per line with `--json`, else one readable line each.
    func print(_ glitches: [Glitch]) {
        for g in glitches {
            if json { Console.out(bytes: g.json()) } else { Console.out(GlitchCLI.line(g)) }
        }
    }

    /// `flash      keyboard   seq 41…42   the keyboard appeared at seq 41 and was gone 18 ms later, at seq 42`
    static func line(_ g: Glitch) -> String {
        func column(_ s: String, _ width: Int) -> String { s.count >= width ? s : s + String(repeating: " ", count: width - s.count) }
        return "\(column(g.kind.rawValue, 11)) \(column(g.subject, 18)) \(column(g.seqText, 15)) \(g.message)"
    }

    /// `3 glitches in 179 events: flash 1, occluded 2`, on stderr with --json.
    func summary(_ glitches: [Glitch], of what: String) {
        let text = GlitchCLI.summary(glitches, of: what)
        if json { Console.err(text) } else { Console.out(text) }
    }

    /// Stale looks (the device catching up) are counted apart from the glitches.
    static func summary(_ glitches: [Glitch], of what: String) -> String {
        let stale = glitches.count { $0.kind == .stale }
        let others = glitches.count - stale
        let staleText = stale == 0 ? "" : "; \(stale) stale look\(stale == 1 ? "" : "s") (the device catching up)"
        guard others > 0 else { return "no glitches in \(what)" + staleText }
        let counts = GlitchKind.allCases.compactMap { k -> String? in
            guard k != .stale else { return nil }
            let n = glitches.filter { $0.kind == k }.count
            return n > 0 ? "\(k.rawValue) \(n)" : nil
        }
        return "\(others) glitch\(others == 1 ? "" : "es") in \(what): \(counts.joined(separator: ", "))" + staleText
    }
}
