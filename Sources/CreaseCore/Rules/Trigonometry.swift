/// Sine and cosine without the platform's libm: the pure core imports nothing, and a
/// series evaluated in a fixed order gives the same bits on every machine, so a profile's
/// angles become the same filter bounds wherever a trace is replayed.
public enum Trigonometry {
    /// Of an angle in degrees: reduced exactly to the nearest quarter turn (whole degrees
    /// stay whole), so sin 90° is 1 and sin 180° is 0, then a series on at most ±45°.
    public static func sin(degrees: Double) -> Double {
        guard degrees.isFinite else { return .nan }
        var d = degrees.truncatingRemainder(dividingBy: 360)
        if d < 0 { d += 360 }
        let quarter = (d / 90).rounded()
        return quadrant(Int(quarter) % 4, (d - quarter * 90) * (Double.pi / 180))
    }

    public static func cos(degrees: Double) -> Double {
        guard degrees.isFinite else { return .nan }
        return sin(degrees: degrees.truncatingRemainder(dividingBy: 360) + 90)
    }

    /// sin(q·90° + r) for |r| ≤ π/4.
    private static func quadrant(_ q: Int, _ r: Double) -> Double {
        switch q {
        case 0: sinSeries(r)
        case 1: cosSeries(r)
        case 2: -sinSeries(r)
        default: -cosSeries(r)
        }
    }

    /// Taylor terms to r^19 / r^20: below 1e-19 for |r| ≤ π/4.
    private static func sinSeries(_ r: Double) -> Double {
        let r2 = r * r
        var term = r, sum = r, n = 1.0
        for _ in 0..<9 {
            term *= -r2 / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }

    private static func cosSeries(_ r: Double) -> Double {
        let r2 = r * r
        var term = 1.0, sum = 1.0, n = 0.0
        for _ in 0..<10 {
            term *= -r2 / ((n + 1) * (n + 2))
            sum += term
            n += 2
        }
        return sum
    }
}
