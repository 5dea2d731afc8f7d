/// The layout-shift score, after the web's Cumulative Layout Shift (docs/glitches.md), between
/// two consecutive published layouts on the same display:
/// - the controls are the bars' items and the floating buttons (custom bars and regions are
///   not controls), matched by id;
/// - a control moved when its frame's x or y changed by 1 pt or more (one that appears,
///   disappears or only changes size is left to the flash and lost checks);
/// - the impact fraction is the area of the union of the moved controls' frames, before and
///   after, over the screen's area; the distance fraction is the greatest distance any moved
///   control moved, horizontally or vertically, over the screen's longer side;
/// - the shift scores impact × distance.
public enum LayoutShift {
    /// How far a frame's x or y must change for its control to have moved (points).
    public static let moved = 1.0

    /// The score of going from `before` to `after`: 0 when the display changed, or no control moved.
    public static func score(from before: Layout, to after: Layout) -> Double {
        guard before.device.display == after.device.display else { return 0 }
        let width = after.device.width, height = after.device.height
        guard width > 0, height > 0 else { return 0 }
        let old = controls(before)
        var rects: [Rect] = []
        var distance = 0.0
        for (id, now) in controls(after) {
            guard let was = old.first(where: { $0.id == id })?.frame else { continue }
            let dx = abs(now.x - was.x), dy = abs(now.y - was.y)
            guard dx >= moved || dy >= moved else { continue }
            rects.append(was)
            rects.append(now)
            distance = max(distance, dx, dy)
        }
        guard !rects.isEmpty else { return 0 }
        let impact = min(1, unionArea(rects) / (width * height))
        return impact * (distance / max(width, height))
    }

    /// A score as printed: four decimals.
    public static func text(_ score: Double) -> String {
        let scaled = (score * 10_000).rounded()
        let whole = Int(scaled / 10_000), fraction = Int(scaled) - whole * 10_000
        let digits = String(fraction)
        return "\(whole)." + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// The bars' items and the floating buttons, by id (the first of an id where it repeats).
    static func controls(_ layout: Layout) -> [(id: String, frame: Rect)] {
        var out: [(id: String, frame: Rect)] = []
        for bar in layout.bars {
            for item in bar.items where !out.contains(where: { $0.id == item.id }) { out.append((item.id, item.frame)) }
        }
        for f in layout.floating where !out.contains(where: { $0.id == f.id }) { out.append((f.id, f.frame)) }
        return out
    }

    /// The area the rectangles cover together: a grid of their edges, each cell counted once
    /// (a few dozen rectangles at most).
    public static func unionArea(_ rects: [Rect]) -> Double {
        let boxes = rects.filter { !$0.isEmpty }
        guard !boxes.isEmpty else { return 0 }
        func edges(_ values: [Double]) -> [Double] {
            var out: [Double] = []
            for v in values.sorted() where out.last != v { out.append(v) }
            return out
        }
        let xs = edges(boxes.flatMap { [$0.x, $0.maxX] }), ys = edges(boxes.flatMap { [$0.y, $0.maxY] })
        var area = 0.0
        for i in 0..<(xs.count - 1) {
            let x0 = xs[i], x1 = xs[i + 1]
            for j in 0..<(ys.count - 1) {
                let y0 = ys[j], y1 = ys[j + 1]
                if boxes.contains(where: { $0.x <= x0 && $0.maxX >= x1 && $0.y <= y0 && $0.maxY >= y1 }) {
                    area += (x1 - x0) * (y1 - y0)
                }
            }
        }
        return area
    }
}

/// Shifts summed over session windows, as the web does: a window holds shifts less than 1 s
/// apart and lasts at most 5 s from its first; a run's score is its largest window.
public struct LayoutShiftWindows: Sendable, Equatable {
    public struct Window: Sendable, Equatable {
        public var fromSeq: Int
        public var toSeq: Int
        public var firstT: UInt64
        public var lastT: UInt64
        public var score: Double
    }

    public static let gapNs: UInt64 = 1_000_000_000
    public static let spanNs: UInt64 = 5_000_000_000

    public private(set) var windows: [Window] = []

    public init() {}

    /// The largest window's score (0 with none).
    public var max: Double { windows.map(\.score).max() ?? 0 }

    /// A shift of `score` (ignored when 0) into the layout at `seq`, published at `t`.
    public mutating func add(seq: Int, t: UInt64, score: Double) {
        guard score > 0 else { return }
        if var last = windows.last, t >= last.lastT, t - last.lastT < LayoutShiftWindows.gapNs, t - last.firstT <= LayoutShiftWindows.spanNs {
            last.toSeq = seq
            last.lastT = t
            last.score += score
            windows[windows.count - 1] = last
        } else {
            windows.append(Window(fromSeq: seq, toSeq: seq, firstT: t, lastT: t, score: score))
        }
    }
}
