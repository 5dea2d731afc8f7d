/// Rule 9, seed 001: "Outer display: the sheet's toolbar moves into a vertical bar.
/// Inner display: the sheet is centered with horizontal bars. Partly folded: the sheet
/// slides off the fold." "centered and leading sheets keep horizontal bars, and trailing
/// sheets get a vertical bar." With `.toolbarVerticalBehavior(.disabled)` "the sheet then
/// stops just short of the front camera, and the status bar moves."
public enum SheetRule {
    /// The screen side a sheet's placement resolves to, or nil for centred.
    public static func side(of placement: SheetPlacement, direction: LayoutDirection) -> Side? {
        switch placement {
        case .automatic, .center: nil
        case .leading: direction == .ltr ? .left : .right
        case .trailing: direction == .ltr ? .right : .left
        }
    }

    public static func barVertical(_ sheet: Sheet, geometry g: ScreenGeometry) -> Bool {
        guard g.verticalPossible, sheet.verticalBehavior != .disabled else { return false }
        if g.display == .outer { return true }
        return side(of: sheet.placement, direction: g.direction) == g.appSide
    }

    public static func frame(_ sheet: Sheet, geometry g: ScreenGeometry, pose: Pose, islandBottom: Double?, profile p: DeviceProfile) -> Rect {
        var f = placedFrame(sheet, geometry: g, pose: pose, islandBottom: islandBottom, profile: p)
        // With the keyboard up a sheet rises to sit on it, keeping at least a bar's height.
        if g.keyboardHeight > 0 {
            let keyboardTop = g.height - g.keyboardHeight
            let top = min(f.y, max(0, keyboardTop - 2 * p.navigationBarHeight))
            f = Rect(x: f.x, y: top, w: f.w, h: max(0, min(f.maxY, keyboardTop) - top))
        }
        return f
    }

    static func placedFrame(_ sheet: Sheet, geometry g: ScreenGeometry, pose: Pose, islandBottom: Double?, profile p: DeviceProfile) -> Rect {
        let win = g.window
        if g.display == .outer {
            var y = sheet.detents.contains(.medium) ? g.height / 2 : p.sheetInset
            if sheet.verticalBehavior == .disabled, g.cameraEndAtTop, let island = islandBottom {
                y = max(y, island + p.sheetCameraClearance)
            }
            return Rect(x: win.x, y: y, w: win.w, h: g.height - y)
        }
        let margin = 16.0
        let top = p.statusBarHeight + margin
        var frame: Rect
        switch side(of: sheet.placement, direction: g.direction) {
        case nil:
            let w = min(p.centeredSheetWidth, win.w - 2 * margin)
            frame = Rect(x: win.x + (win.w - w) / 2, y: top, w: w, h: g.height - top - margin)
        case .left?:
            frame = Rect(x: win.x, y: 0, w: win.w / 2 - p.foldWidth / 2, h: g.height)
        case .right?:
            let w = win.w / 2 - p.foldWidth / 2
            frame = Rect(x: win.maxX - w, y: 0, w: w, h: g.height)
        }
        // A sheet that offers the medium detent opens at it, on both displays.
        if sheet.detents.contains(.medium) {
            let mid = g.height / 2
            frame.h = frame.maxY - mid
            frame.y = mid
        }
        if pose == .partiallyOpen { frame = offTheFold(frame, geometry: g, profile: p, top: top, margin: margin) }
        return frame
    }

    /// Partly folded: landscape folds run down the middle, so a sheet crossing it moves
    /// into the right half; portrait folds run across, so it moves into the top half.
    static func offTheFold(_ f: Rect, geometry g: ScreenGeometry, profile p: DeviceProfile, top: Double, margin: Double) -> Rect {
        if g.orientation.isLandscape {
            let foldStart = g.width / 2 - p.foldWidth / 2, foldEnd = g.width / 2 + p.foldWidth / 2
            guard f.x < foldEnd, f.maxX > foldStart else { return f }
            let w = min(f.w, g.width - foldEnd - margin)
            return Rect(x: g.width - margin - w, y: f.y, w: w, h: f.h)
        }
        let foldStart = g.height / 2 - p.foldWidth / 2
        guard f.maxY > foldStart else { return f }
        let y = min(f.y, top)
        return Rect(x: f.x, y: y, w: f.w, h: foldStart - margin - y)
    }
}
