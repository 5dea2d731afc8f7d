/// Rule 6, seed 003: "On the side, they share the height with the status bar and with
/// the Dynamic Island, which grows when Live Activities arrive." The status bar and
/// island sit at the camera end of the hardware column; the keyboard, Picture in
/// Picture and (partly folded) the fold division take room as well.
public enum ReservedRegionRule {
    /// The band along the hardware side where the column, status bar and island live.
    public static func hardwareBand(_ g: ScreenGeometry, profile p: DeviceProfile) -> Rect {
        Rect(x: g.hardwareSide == .right ? g.width - p.columnWidth : 0, y: 0, w: p.columnWidth, h: g.height)
    }

    public static func islandLength(_ g: ScreenGeometry, liveActivities: Int, profile p: DeviceProfile) -> Double {
        let base = g.display == .outer ? p.outerIslandLength : p.innerIslandLength
        return base + p.islandGrowthPerActivity * min(Double(liveActivities), p.maxActivitiesShown)
    }

    /// Status bar and Dynamic Island. With vertical bars the status bar runs down the
    /// column below the island; with horizontal bars it is a strip across the top.
    public static func statusRegions(_ g: ScreenGeometry, verticalStatus: Bool, liveActivities: Int, profile p: DeviceProfile) -> [Region] {
        let band = hardwareBand(g, profile: p)
        let island = islandLength(g, liveActivities: liveActivities, profile: p)
        let cameraWidth = 37.0
        var out: [Region] = []
        out.reserveCapacity(5)   // the caller adds the division, keyboard and PiP regions
        let islandSpan = island > 0 ? p.islandStart + island : 0
        if verticalStatus {
            let statusY = g.cameraEndAtTop ? islandSpan : g.height - islandSpan - p.statusBarLength
            out.append(Region(kind: .statusBar, frame: Rect(x: band.x, y: statusY, w: band.w, h: p.statusBarLength)))
        } else {
            out.append(Region(kind: .statusBar, frame: Rect(x: 0, y: 0, w: g.width, h: p.statusBarHeight)))
        }
        if island > 0, !verticalStatus, g.display == .inner {
            // No cutout inside: with horizontal bars the Live Activities pill sits in the status strip.
            out.append(Region(kind: .dynamicIsland, frame: Rect(x: band.maxX - p.barInset - island, y: 0, w: island, h: p.statusBarHeight)))
        } else if island > 0 {
            let y = g.cameraEndAtTop ? p.islandStart : g.height - p.islandStart - island
            out.append(Region(kind: .dynamicIsland, frame: Rect(x: band.x + (band.w - cameraWidth) / 2, y: y, w: cameraWidth, h: island)))
        }
        return out
    }

    /// The fold: active only while partly folded (duo-facts §4), across the middle of
    /// the inner display: a vertical strip in landscape, a horizontal one in portrait.
    public static func division(_ g: ScreenGeometry, pose: Pose, profile p: DeviceProfile) -> Region? {
        guard pose == .partiallyOpen, g.display == .inner else { return nil }
        if g.orientation.isLandscape {
            return Region(kind: .division, frame: Rect(x: g.width / 2 - p.foldWidth / 2, y: 0, w: p.foldWidth, h: g.height))
        }
        return Region(kind: .division, frame: Rect(x: 0, y: g.height / 2 - p.foldWidth / 2, w: g.width, h: p.foldWidth))
    }

    public static func keyboard(_ g: ScreenGeometry) -> Region? {
        guard g.keyboardHeight > 0 else { return nil }
        return Region(kind: .keyboard, frame: Rect(x: 0, y: g.height - g.keyboardHeight, w: g.width, h: g.keyboardHeight))
    }

    /// Picture in Picture docks in the bottom corner on the app's bar side, above the
    /// keyboard or home indicator (`bottomInset`).
    public static func pip(_ g: ScreenGeometry, active: Bool, bottomInset: Double, profile p: DeviceProfile) -> Region? {
        guard active else { return nil }
        let x = g.appSide == .right ? g.window.maxX - p.pipMargin - p.pipWidth : g.window.x + p.pipMargin
        // Never above the title row: with a tall keyboard the window may overlap the keyboard instead.
        let y = max(p.statusBarHeight + p.navigationBarHeight, g.height - bottomInset - p.pipMargin - p.pipHeight)
        return Region(kind: .pip, frame: Rect(x: x, y: y, w: p.pipWidth, h: p.pipHeight))
    }
}

/// Free space along a bar: the bar's band minus every reserved region that crosses it.
public enum FreeSpace {
    /// The largest free interval of `band` along `axis` (ties go to the first), as
    /// (start, end) in screen coordinates.
    public static func largestInterval(in band: Rect, axis: Axis, avoiding regions: [Region]) -> (Double, Double) {
        let lo = axis == .vertical ? band.y : band.x
        let hi = axis == .vertical ? band.maxY : band.maxX
        // Most bands cross no region: the sweep below over no blocked interval, without its
        // buffer. The test is the sweep's last one with cursor = lo and best = (lo, lo),
        // written the same way so that infinite or empty bands give the same bits.
        guard regions.contains(where: { $0.frame.intersects(band) }) else {
            return hi - lo > lo - lo ? (lo, hi) : (lo, lo)
        }
        // Blocked intervals, sorted by start (insertion sort: there are at most a handful),
        // on the stack: an array allocated whenever a region crossed the band.
        return withUnsafeTemporaryAllocation(of: (Double, Double).self, capacity: regions.count) { blocked in
            var count = 0
            regions.withUnsafeBufferPointer { all in
                for r in all where r.frame.intersects(band) {
                    let s = axis == .vertical ? r.frame.y : r.frame.x
                    let e = axis == .vertical ? r.frame.maxY : r.frame.maxX
                    var i = count
                    while i > 0, blocked[i - 1].0 > s { blocked[i] = blocked[i - 1]; i -= 1 }
                    blocked[i] = (s, e)
                    count += 1
                }
            }
            var best = (lo, lo)
            var cursor = lo
            for (s, e) in blocked[..<count] {
                if s > cursor, min(s, hi) - cursor > best.1 - best.0 { best = (cursor, min(s, hi)) }
                cursor = max(cursor, e)
            }
            if hi - cursor > best.1 - best.0 { best = (cursor, hi) }
            return best
        }
    }
}
