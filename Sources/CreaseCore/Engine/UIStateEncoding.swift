/// The UI state's encoding, by ids: the `ui` member of the state's.
extension UIState {
    func write(to w: inout JSONWriter, app: App) {
        w.beginObject()
        w.key("selectedTabs"); w.beginArray()
        for (i, c) in app.containers.enumerated() {
            guard case .tabView(let t) = c else { continue }
            w.beginObject(); w.key("tabView"); w.string(t.id); w.key("tab"); w.string(t.tabs[selectedTab[i]].id); w.endObject()
        }
        w.endArray()
        w.key("stacks"); w.beginArray()
        for (i, c) in app.containers.enumerated() {
            guard case .navigationStack(let s) = c else { continue }
            w.beginObject(); w.key("stack"); w.string(s.id)
            w.key("pushed"); w.beginArray(); for screen in pushed[i] { w.string(app.screens[screen].id) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key("sheet"); if let ref = sheet { w.string(app.screens[ref.screen].sheets[ref.sheet].id) } else { w.null() }
        w.key("inspectors"); w.beginArray()
        for (i, screen) in app.screens.enumerated() where inspector[i] { w.string(screen.id) }
        w.endArray()
        w.endObject()
    }

    /// Reads what `write(to:app:)` wrote, checking it is a UI state the events could reach.
    static func decode(_ ui: FieldReader, app: App) throws(InputError) -> UIState {
        var u = UIState(app: app)
        try ui.rejectUnknown(allowed: ["selectedTabs", "stacks", "sheet", "inspectors"])
        var tabViewsNamed: [Int] = []
        for (i, v) in try ui.array("selectedTabs").enumerated() {
            let e = try FieldReader(v, path: "ui.selectedTabs[\(i)]", what: "selected tab")
            let tv = try e.string("tabView"), tab = try e.string("tab")
            guard let ci = app.containers.firstIndex(where: { $0.id.sameBytes(tv) }), case .tabView(let spec) = app.containers[ci],
                  let ti = spec.tabs.firstIndex(where: { $0.id.sameBytes(tab) }) else {
                throw InputError(.unknownId, "state names tab \"\(tab)\" of \"\(tv)\", which the manifest lacks", field: "ui.selectedTabs[\(i)]")
            }
            guard !tabViewsNamed.contains(ci) else {
                throw InputError(.invalidState, "state selects a tab of \"\(tv)\" twice; each tab view is listed once", field: "ui.selectedTabs[\(i)]")
            }
            tabViewsNamed.append(ci)
            u.selectedTab[ci] = ti
        }
        var stacksNamed: [Int] = []
        for (i, v) in try ui.array("stacks").enumerated() {
            let e = try FieldReader(v, path: "ui.stacks[\(i)]", what: "stack")
            let sid = try e.string("stack")
            guard let ci = app.containers.firstIndex(where: { $0.id.sameBytes(sid) }), case .navigationStack(let spec) = app.containers[ci] else {
                throw InputError(.unknownId, "state names stack \"\(sid)\", which the manifest lacks", field: "ui.stacks[\(i)]")
            }
            // Listed twice, the second would silently replace the first.
            guard !stacksNamed.contains(ci) else {
                throw InputError(.invalidState, "state lists navigation stack \"\(sid)\" twice; each stack is listed once", field: "ui.stacks[\(i)]")
            }
            stacksNamed.append(ci)
            var pushed: [Int] = []
            for p in try e.array("pushed") {
                guard case .string(let screenId) = p, let si = spec.screens.first(where: { app.screens[$0].id.sameBytes(screenId) }) else {
                    throw InputError(.unknownId, "state pushes an unknown screen on \"\(sid)\"", field: "ui.stacks[\(i)].pushed")
                }
                guard si != spec.screens[0], !pushed.contains(si) else {
                    throw InputError(.invalidState, "state lists screen \"\(screenId)\" twice on navigation stack \"\(sid)\" (the root counts); a screen is on a stack once",
                                     field: "ui.stacks[\(i)].pushed")
                }
                pushed.append(si)
            }
            guard pushed.count <= App.maxStackDepth else {
                throw InputError.outOfRange("ui.stacks[\(i)].pushed", "may hold at most \(App.maxStackDepth) screens", got: "\(pushed.count)")
            }
            u.pushed[ci] = pushed
        }
        if let sheetId = try ui.optionalString("sheet") {
            var found: UIState.SheetRef?
            for (si, screen) in app.screens.enumerated() {
                if let k = screen.sheets.firstIndex(where: { $0.id.sameBytes(sheetId) }) { found = .init(screen: si, sheet: k) }
            }
            guard let found else { throw InputError(.unknownId, "state presents unknown sheet \"\(sheetId)\"", field: "ui.sheet") }
            u.sheet = found
        }
        for v in try ui.array("inspectors") {
            guard case .string(let screenId) = v, let si = app.screens.firstIndex(where: { $0.id.sameBytes(screenId) }),
                  app.screens[si].inspector != nil else {
                throw InputError(.unknownId, "state shows the inspector of a screen that declares none", field: "ui.inspectors")
            }
            u.inspector[si] = true
        }
        // As the state machine keeps it: a sheet belongs to a screen on screen.
        if let sheet = u.sheet, !VisiblePath(app: app, ui: u).visibleScreens(app: app, ui: u).contains(sheet.screen) {
            throw InputError(.invalidState, "state presents a sheet of screen \"\(app.screens[sheet.screen].id)\", which is not visible", field: "ui.sheet")
        }
        return u
    }
}
