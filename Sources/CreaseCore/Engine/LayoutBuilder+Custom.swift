/// The builder's app-drawn parts: custom bars and floating buttons, against the reserved regions.
extension LayoutBuilder {
    // MARK: - Custom bars and floating buttons

    /// Rule 3, seeds 001 and 002: "A custom UITabBar, UIToolbar or UINavigationBar you add
    /// to your view … never moves into the vertical bar." One that follows
    /// toolbarVerticalEdge is laid out by the app in the column's free space.
    mutating func layoutCustomBars(_ screen: Screen, vertical: Bool, preferredEdge: HorizontalEdge?, area: Rect) -> [CustomInfo] {
        var out = Reused(remembers ? memo.built.custom : [], capacity: screen.customBars.count)
        for bar in screen.customBars {
            let thickness = bar.kind == .tabBar ? p.tabBarHeight : p.itemLength
            var frame: Rect
            if vertical && bar.followsVerticalEdge {
                let band = Rect(x: g.appSide == .right ? area.maxX - p.columnWidth : area.x, y: 0, w: p.columnWidth, h: g.height)
                let free = FreeSpace.largestInterval(in: band, axis: .vertical, avoiding: regions)
                frame = Rect(x: band.x, y: free.0, w: band.w, h: free.1 - free.0)
            } else {
                let y = bar.edge == .top ? (vertical ? 0 : p.statusBarHeight) : g.height - p.homeIndicatorHeight - thickness
                frame = Rect(x: area.x, y: y, w: area.w, h: thickness)
            }
            var overlapped = RegionKinds()
            for r in regions where r.frame.intersects(frame) { overlapped.add(r.kind) }
            if vertical && !bar.followsVerticalEdge {
                note(.customBarStaysPut, bar.id, "custom \(bar.kind.rawValue) \"\(bar.id)\" will not move into the vertical bar; use the system container, or lay it out from toolbarVerticalEdge and the safe area")
            }
            let collides: [RegionKind]
            if out.reuse({ $0.pointee.id == bar.id && $0.pointee.frame == frame && $0.pointee.verticalBarEdge == preferredEdge
                           && overlapped.lists($0.pointee.collides) }) {
                collides = out.lastKept.collides
            } else {
                collides = overlapped.list
                out.appendNew(CustomInfo(id: bar.id, frame: frame, verticalBarEdge: preferredEdge, collides: collides))
            }
            if !collides.isEmpty { collisionNote(bar.id, collides) }
        }
        return out.array
    }

    /// The kinds of region a custom bar overlaps, listed in `RegionKind`'s order.
    struct RegionKinds {
        private var bits: UInt8 = 0

        mutating func add(_ kind: RegionKind) { bits |= RegionKinds.bit(kind) }

        var list: [RegionKind] {
            guard bits != 0 else { return [] }
            return RegionKind.allCases.filter { bits & RegionKinds.bit($0) != 0 }
        }

        /// Whether `kinds` (in `RegionKind`'s order, each once) lists exactly these.
        func lists(_ kinds: [RegionKind]) -> Bool {
            var other: UInt8 = 0
            for kind in kinds { other |= RegionKinds.bit(kind) }
            return other == bits
        }

        private static func bit(_ kind: RegionKind) -> UInt8 {
            switch kind {
            case .statusBar: 1
            case .dynamicIsland: 2
            case .division: 4
            case .keyboard: 8
            case .pip: 16
            }
        }
    }

    /// Seed 001: floating buttons are the app's to place: "place it from the safe area"
    /// and "Keep it off the fold".
    mutating func layoutFloating(_ screen: Screen, area: Rect, safe: Insets) -> [FloatingInfo] {
        var out = Reused(remembers ? memo.built.floating : [], capacity: screen.floatingButtons.count)
        for button in screen.floatingButtons {
            let fromSafeArea = button.anchor == .safeArea
            let leftInset = fromSafeArea ? (g.direction == .ltr ? safe.leading : safe.trailing) : 0
            let rightInset = fromSafeArea ? (g.direction == .ltr ? safe.trailing : safe.leading) : 0
            let bottomInset = fromSafeArea ? safe.bottom : 0
            let trailingOnRight = g.direction == .ltr
            let x: Double
            switch button.corner {
            case .bottomCenter: x = area.x + leftInset + (area.w - leftInset - rightInset - button.size) / 2
            case .bottomTrailing:
                x = trailingOnRight ? area.maxX - rightInset - p.floatingInset - button.size : area.x + leftInset + p.floatingInset
            case .bottomLeading:
                x = trailingOnRight ? area.x + leftInset + p.floatingInset : area.maxX - rightInset - p.floatingInset - button.size
            }
            let frame = Rect(x: x, y: g.height - bottomInset - p.floatingInset - button.size, w: button.size, h: button.size)
            if regions.contains(where: { $0.kind == .division && $0.frame.intersects(frame) }) {
                note(.floatingButtonOnFold, button.id, "floating button \"\(button.id)\" sits on the fold, where buttons are hard to tap; move it to one side of the division region")
            }
            if !fromSafeArea {
                note(.floatingButtonFromScreenEdge, button.id, "floating button \"\(button.id)\" is placed from the screen edge; offset it from the safe area so the controls never hide it")
            }
            if !out.reuse({ $0.pointee.id == button.id && $0.pointee.frame == frame }) { out.appendNew(FloatingInfo(id: button.id, frame: frame)) }
        }
        return out.array
    }
}
