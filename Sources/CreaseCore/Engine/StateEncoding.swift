/// The state as JSON (the `state` command and trace headers) and back, by ids so a
/// reader needs only the manifest. Keys in a fixed order; arrays in manifest order.
extension DeviceState {
    public func write(to w: inout JSONWriter, app: App) {
        w.beginObject()
        w.key("hingeAngle"); w.number(hingeAngle)
        w.key("pose"); w.string(pose.rawValue)
        w.key("display"); w.string(display.rawValue)
        w.key("orientation"); w.string(orientation.rawValue)
        w.key("deviceOrientation"); if let d = deviceOrientation { w.string(d.rawValue) } else { w.null() }
        w.key("rotationLock"); w.bool(rotationLock)
        w.key("pendingOrientation")
        if let p = pendingOrientation {
            w.beginObject(); w.key("orientation"); w.string(p.orientation.rawValue); w.key("since"); w.int(Int(p.since)); w.endObject()
        } else {
            w.null()
        }
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
        try r.rejectUnknown(allowed: ["hingeAngle", "pose", "display", "orientation", "deviceOrientation", "rotationLock", "pendingOrientation",
                                      "keyboard", "pip", "liveActivities", "splitView", "layoutDirection", "reduceTransparency", "ui"])
        var s = DeviceState(app: app)
        s.hingeAngle = try r.number("hingeAngle")
        guard s.hingeAngle >= 0, s.hingeAngle <= EventLimits.maxAngle else {
            throw InputError.outOfRange("hingeAngle", "must be between 0 and 180 degrees", got: s.hingeAngle)
        }
        s.pose = try r.enumeration("pose", Pose.self)
        // The display follows from the pose; when given it must say the same.
        if let display = try r.optionalEnumeration("display", Display.self), display != s.display {
            throw InputError(.badValue, "field \"display\" is \"\(display.rawValue)\", but pose \"\(s.pose.rawValue)\" shows the \(s.display.rawValue) display",
                             field: "display")
        }
        s.orientation = try r.enumeration("orientation", Orientation.self)
        // States written before the IMU existed have none of these: the interface orientation
        // was the rig's to set (no device orientation), with no lock and nothing pending.
        s.deviceOrientation = try r.optionalEnumeration("deviceOrientation", DeviceOrientation.self)
        s.rotationLock = try r.optionalBool("rotationLock") ?? false
        if let pending = r.optional("pendingOrientation"), pending != .null {
            let p = try FieldReader(pending, path: "pendingOrientation", what: "pending orientation")
            try p.rejectUnknown(allowed: ["orientation", "since"])
            let since = try p.number("since")
            guard since == since.rounded(), abs(since) < 9.2e18 else {
                throw InputError.wrongType("pendingOrientation.since", expected: "an integer (nanoseconds)", got: .number(since))
            }
            s.pendingOrientation = .init(orientation: try p.enumeration("orientation", DeviceOrientation.self), since: Int64(since))
        }
        let kb = try FieldReader(try r.required("keyboard"), path: "keyboard", what: "keyboard")
        try kb.rejectUnknown(allowed: ["visible", "height"])
        s.keyboardVisible = try kb.bool("visible")
        s.keyboardHeight = try kb.optionalNumber("height")
        if let h = s.keyboardHeight, !(h >= 0 && h <= EventLimits.maxKeyboardHeight) {
            throw InputError.outOfRange("keyboard.height", "must be between 0 and \(Int(EventLimits.maxKeyboardHeight)) points", got: h)
        }
        // A loaded state is one the events could have produced: hiding the keyboard drops its height.
        if !s.keyboardVisible, let h = s.keyboardHeight {
            throw InputError(.invalidState, "state has a hidden keyboard with height \(InputError.shown(h)); a hidden keyboard keeps no height (give null)",
                             field: "keyboard.height")
        }
        s.pipActive = try r.bool("pip")
        s.liveActivities = try r.integer("liveActivities", min: 0, max: EventLimits.maxLiveActivities)
        s.splitSide = try r.enumeration("splitView", SplitSide.self)
        s.layoutDirection = try r.enumeration("layoutDirection", LayoutDirection.self)
        s.reduceTransparency = try r.bool("reduceTransparency")
        let ui = try FieldReader(try r.required("ui"), path: "ui", what: "ui state")
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
            s.ui.selectedTab[ci] = ti
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
            s.ui.pushed[ci] = pushed
        }
        if let sheetId = try ui.optionalString("sheet") {
            var found: UIState.SheetRef?
            for (si, screen) in app.screens.enumerated() {
                if let k = screen.sheets.firstIndex(where: { $0.id.sameBytes(sheetId) }) { found = .init(screen: si, sheet: k) }
            }
            guard let found else { throw InputError(.unknownId, "state presents unknown sheet \"\(sheetId)\"", field: "ui.sheet") }
            s.ui.sheet = found
        }
        for v in try ui.array("inspectors") {
            guard case .string(let screenId) = v, let si = app.screens.firstIndex(where: { $0.id.sameBytes(screenId) }),
                  app.screens[si].inspector != nil else {
                throw InputError(.unknownId, "state shows the inspector of a screen that declares none", field: "ui.inspectors")
            }
            s.ui.inspector[si] = true
        }
        // As the state machine keeps it: a sheet belongs to a screen on screen.
        if let sheet = s.ui.sheet, !VisiblePath(app: app, ui: s.ui).visibleScreens(app: app, ui: s.ui).contains(sheet.screen) {
            throw InputError(.invalidState, "state presents a sheet of screen \"\(app.screens[sheet.screen].id)\", which is not visible", field: "ui.sheet")
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
