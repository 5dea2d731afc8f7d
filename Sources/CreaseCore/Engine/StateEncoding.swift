/// The state as JSON (the `state` command and trace headers) and back, by ids so a
/// reader needs only the manifest. Keys in a fixed order; arrays in manifest order.
extension DeviceState {
    public func write(to w: inout JSONWriter, app: App) {
        w.beginObject()
        w.key("hingeAngle"); w.number(hingeAngle)
        w.key("pose"); w.string(pose.rawValue)
        w.key("display"); w.string(display.rawValue)
        w.key("orientation"); w.string(orientation.rawValue)
        w.key("keyboard"); w.beginObject()
        w.key("visible"); w.bool(keyboardVisible)
        w.key("height"); if let h = keyboardHeight { w.number(h) } else { w.null() }
        w.endObject()
        w.key("pip"); w.bool(pipActive)
        w.key("liveActivities"); w.int(liveActivities)
        w.key("splitView"); w.string(splitSide.rawValue)
        w.key("layoutDirection"); w.string(layoutDirection.rawValue)
        w.key("reduceTransparency"); w.bool(reduceTransparency)
        w.key("ui"); w.beginObject()
        w.key("selectedTabs"); w.beginArray()
        for (i, c) in app.containers.enumerated() {
            guard case .tabView(let t) = c else { continue }
            w.beginObject(); w.key("tabView"); w.string(t.id); w.key("tab"); w.string(t.tabs[ui.selectedTab[i]].id); w.endObject()
        }
        w.endArray()
        w.key("stacks"); w.beginArray()
        for (i, c) in app.containers.enumerated() {
            guard case .navigationStack(let s) = c else { continue }
            w.beginObject(); w.key("stack"); w.string(s.id)
            w.key("pushed"); w.beginArray(); for screen in ui.pushed[i] { w.string(app.screens[screen].id) }; w.endArray()
            w.endObject()
        }
        w.endArray()
        w.key("sheet"); if let ref = ui.sheet { w.string(app.screens[ref.screen].sheets[ref.sheet].id) } else { w.null() }
        w.key("inspectors"); w.beginArray()
        for (i, screen) in app.screens.enumerated() where ui.inspector[i] { w.string(screen.id) }
        w.endArray()
        w.endObject()
        w.endObject()
    }

    public func jsonBytes(app: App) -> [UInt8] {
        var w = JSONWriter()
        write(to: &w, app: app)
        return w.bytes
    }

    /// Reads a state written by `write(to:app:)`. The pose is taken as recorded (it
    /// depends on the angle's history, not only on the angle).
    public static func decode(_ value: JSONValue, app: App) throws(InputError) -> DeviceState {
        let r = try FieldReader(value, path: "", what: "state")
        var s = DeviceState(app: app)
        s.hingeAngle = try r.number("hingeAngle")
        let pose = try r.string("pose")
        guard let p = Pose(rawValue: pose) else { throw InputError.badValue("pose", pose, allowed: Pose.allCases.map(\.rawValue)) }
        s.pose = p
        s.orientation = try r.enumeration("orientation", Orientation.self)
        let kb = try FieldReader(try r.required("keyboard"), path: "keyboard", what: "keyboard")
        s.keyboardVisible = try kb.bool("visible")
        s.keyboardHeight = try kb.optionalNumber("height")
        s.pipActive = try r.bool("pip")
        s.liveActivities = try r.integer("liveActivities", min: 0, max: EventLimits.maxLiveActivities)
        s.splitSide = try r.enumeration("splitView", SplitSide.self)
        s.layoutDirection = try r.enumeration("layoutDirection", LayoutDirection.self)
        s.reduceTransparency = try r.bool("reduceTransparency")
        let ui = try FieldReader(try r.required("ui"), path: "ui", what: "ui state")
        for (i, v) in try ui.array("selectedTabs").enumerated() {
            let e = try FieldReader(v, path: "ui.selectedTabs[\(i)]", what: "selected tab")
            let tv = try e.string("tabView"), tab = try e.string("tab")
            guard let ci = app.containers.firstIndex(where: { $0.id == tv }), case .tabView(let spec) = app.containers[ci],
                  let ti = spec.tabs.firstIndex(where: { $0.id == tab }) else {
                throw InputError("unknownId", "state names tab \"\(tab)\" of \"\(tv)\", which the manifest lacks", field: "ui.selectedTabs[\(i)]")
            }
            s.ui.selectedTab[ci] = ti
        }
        for (i, v) in try ui.array("stacks").enumerated() {
            let e = try FieldReader(v, path: "ui.stacks[\(i)]", what: "stack")
            let sid = try e.string("stack")
            guard let ci = app.containers.firstIndex(where: { $0.id == sid }), case .navigationStack(let spec) = app.containers[ci] else {
                throw InputError("unknownId", "state names stack \"\(sid)\", which the manifest lacks", field: "ui.stacks[\(i)]")
            }
            var pushed: [Int] = []
            for p in try e.array("pushed") {
                guard case .string(let screenId) = p, let si = spec.screens.first(where: { app.screens[$0].id == screenId }) else {
                    throw InputError("unknownId", "state pushes an unknown screen on \"\(sid)\"", field: "ui.stacks[\(i)].pushed")
                }
                pushed.append(si)
            }
            s.ui.pushed[ci] = pushed
        }
        if let sheetId = try ui.optionalString("sheet") {
            var found: UIState.SheetRef?
            for (si, screen) in app.screens.enumerated() {
                if let k = screen.sheets.firstIndex(where: { $0.id == sheetId }) { found = .init(screen: si, sheet: k) }
            }
            guard let found else { throw InputError("unknownId", "state presents unknown sheet \"\(sheetId)\"", field: "ui.sheet") }
            s.ui.sheet = found
        }
        for v in try ui.array("inspectors") {
            guard case .string(let screenId) = v, let si = app.screens.firstIndex(where: { $0.id == screenId }) else {
                throw InputError("unknownId", "state shows the inspector of an unknown screen", field: "ui.inspectors")
            }
            s.ui.inspector[si] = true
        }
        return s
    }
}

extension Engine {
    public func stateJSON() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("state"); state.write(to: &w, app: app)
        w.endObject()
        return w.bytes
    }
}
