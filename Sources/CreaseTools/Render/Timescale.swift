/// Times printed for people: seconds with millisecond precision, without Foundation's
/// locale-dependent formatting.
enum Timescale {
    static func seconds(_ ns: Int64) -> String { decimals3(Double(ns) / 1e9) + " s" }

    static func decimals3(_ v: Double) -> String {
        let thousandths = Int64((v * 1000).rounded())
        let a = abs(thousandths), frac = String(a % 1000)
        return (thousandths < 0 ? "-" : "") + String(a / 1000) + "." + String(repeating: "0", count: 3 - frac.count) + frac
    }
}
