#if canImport(Glibc)
import Glibc
#endif
import CreaseCore

/// valgrind's callgrind: instructions executed, which do not depend on the machine's speed
/// or load (the same binary and input give the same count within a few instructions per
/// thousand), so a regression shows on a noisy machine where a timing cannot.
struct Callgrind {
    let valgrind: String

    /// valgrind on PATH, or nil.
    static func locate() -> Callgrind? {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/valgrind"
            if access(candidate, X_OK) == 0 { return Callgrind(valgrind: candidate) }
        }
        return nil
    }

    /// valgrind's arguments that run a program under callgrind, writing its profile to `outFile`.
    func arguments(outFile: String) -> [String] {
        ["--tool=callgrind", "--callgrind-out-file=\(outFile)", "--quiet"]
    }
}

/// What `crease bench --instructions` reads from a callgrind profile: the total, and for
/// each function the calls made to it and the instructions spent inside them (its callees
/// included), by its mangled name.
struct CallgrindProfile: Sendable {
    /// A profile is a few megabytes; a runaway one is not read.
    static let sizeLimit = 512 << 20

    var total: UInt64 = 0
    var callees: [String: (calls: UInt64, inclusive: UInt64)] = [:]

    static func read(_ path: String) throws -> CallgrindProfile {
        try parse(Inputs.readFile(path, what: "callgrind profile", limit: sizeLimit), path: path)
    }

    /// Reads callgrind's format (version 1, compressed names): `fn=(id) name` or `fn=(id)`,
    /// `cfn=` likewise for the callee, `calls=COUNT …` followed by the line with the
    /// inclusive cost of those calls (its last field: the only event is Ir), and the
    /// `summary:` or `totals:` line.
    static func parse(_ bytes: [UInt8], path: String) throws -> CallgrindProfile {
        var profile = CallgrindProfile()
        // Ids are small integers: tables by id, not dictionaries of strings.
        var names = NameTable()
        var costs: [(calls: UInt64, inclusive: UInt64)] = []
        var ownCosts: [Int: (calls: UInt64, inclusive: UInt64)] = [:]
        var callee: Int?
        var pendingCalls: UInt64?
        var sawEvents = false
        var failure: String?
        bytes.withUnsafeBufferPointer { b in
            var start = 0
            while start < b.count {
                var end = start
                while end < b.count && b[end] != 0x0A { end += 1 }
                let line = UnsafeBufferPointer(rebasing: b[start..<end])
                start = end + 1
                if let count = pendingCalls {
                    // The call's cost line: its last field is the inclusive Ir.
                    pendingCalls = nil
                    if let id = callee, let cost = lastNumber(line) {
                        if id >= NameTable.ownIds {
                            let old = ownCosts[id] ?? (0, 0)
                            ownCosts[id] = (old.calls + count, old.inclusive + cost)
                        } else {
                            if id >= costs.count { costs += Array(repeating: (0, 0), count: id - costs.count + 1) }
                            costs[id].calls += count
                            costs[id].inclusive += cost
                        }
                    }
                } else if has(line, "cfn=") {
                    callee = names.id(UnsafeBufferPointer(rebasing: line[4...]))
                } else if has(line, "calls=") {
                    pendingCalls = firstNumber(UnsafeBufferPointer(rebasing: line[6...]))
                } else if has(line, "fn=") {
                    _ = names.id(UnsafeBufferPointer(rebasing: line[3...]))
                } else if has(line, "summary:") || has(line, "totals:") {
                    let colon = line.firstIndex(of: UInt8(ascii: ":"))! + 1
                    profile.total = max(profile.total, firstNumber(UnsafeBufferPointer(rebasing: line[colon...])) ?? 0)
                } else if has(line, "events:") {
                    sawEvents = true
                    let text = String(decoding: line, as: UTF8.self)
                    if text.split(separator: " ").dropFirst().first != "Ir" {
                        failure = "\(path): callgrind counted \(text.dropFirst(7)), not instructions (Ir) first"
                    }
                }
            }
        }
        if let failure { throw CheckFailed(failure) }
        for (id, cost) in Array(costs.enumerated()) + ownCosts.map({ ($0.key, $0.value) }) where cost.calls > 0 {
            let name = names.name(id)
            var entry = profile.callees[name] ?? (0, 0)
            entry.calls += cost.calls
            entry.inclusive += cost.inclusive
            profile.callees[name] = entry
        }
        guard sawEvents, profile.total > 0 else { throw CheckFailed("\(path) is not a callgrind profile (no events: line or total)") }
        return profile
    }

    private static func has(_ line: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        return line.count >= n && memcmp(line.baseAddress!, prefix.utf8Start, n) == 0
    }

    /// The first run of digits, skipping blanks before it.
    private static func firstNumber(_ s: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var i = 0
        while i < s.count && s[i] == 0x20 { i += 1 }
        var v: UInt64 = 0, digits = 0
        while i < s.count, s[i] >= 0x30, s[i] <= 0x39 {
            v = v &* 10 &+ UInt64(s[i] - 0x30)
            i += 1
            digits += 1
        }
        return digits > 0 ? v : nil
    }

    /// The last blank-separated field, as a number.
    private static func lastNumber(_ s: UnsafeBufferPointer<UInt8>) -> UInt64? {
        var i = s.count
        while i > 0 && s[i - 1] != 0x20 { i -= 1 }
        return firstNumber(UnsafeBufferPointer(rebasing: s[i...]))
    }

    /// The function whose mangled name contains `fragment` and that the most instructions
    /// were spent in (a specialization or a closure of the same name spends fewer).
    func function(_ fragment: String) -> (calls: UInt64, inclusive: UInt64)? {
        var best: (name: String, calls: UInt64, inclusive: UInt64)?
        for (name, entry) in callees where name.contains(fragment) {
            // Ties broken by name: the dictionary's order is not the same from run to run.
            if let b = best, entry.inclusive < b.inclusive || (entry.inclusive == b.inclusive && name > b.name) { continue }
            best = (name, entry.calls, entry.inclusive)
        }
        return best.map { ($0.calls, $0.inclusive) }
    }
}

/// Callgrind's compressed names: `(12) name` defines id 12, `(12)` refers to it; a name
/// written without an id gets one of its own, after the file's.
struct NameTable {
    private var names: [String?] = []
    private var uncompressed: [String: Int] = [:]
    static let ownIds = 1 << 24

    mutating func id(_ field: UnsafeBufferPointer<UInt8>) -> Int {
        if field.first == UInt8(ascii: "("), let close = field.firstIndex(of: UInt8(ascii: ")")), close > 1,
           let id = Self.digits(UnsafeBufferPointer(rebasing: field[1..<close])), id < Self.ownIds {
            var rest = close + 1
            while rest < field.count && field[rest] == 0x20 { rest += 1 }
            if rest < field.count {
                if id >= names.count { names += Array(repeating: nil, count: id - names.count + 1) }
                names[id] = String(decoding: UnsafeBufferPointer(rebasing: field[rest...]), as: UTF8.self)
            }
            return id
        }
        let text = String(decoding: field, as: UTF8.self)
        if let id = uncompressed[text] { return id }
        let id = Self.ownIds + uncompressed.count
        uncompressed[text] = id
        return id
    }

    func name(_ id: Int) -> String {
        if id < names.count, let n = names[id] { return n }
        if id >= Self.ownIds, let n = uncompressed.first(where: { $0.value == id })?.key { return n }
        return "(\(id))"
    }

    private static func digits(_ s: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !s.isEmpty, s.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), s.count < 9 else { return nil }
        return s.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}
