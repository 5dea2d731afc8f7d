import CreaseCore

/// The synthetic large app of the benchmarks: a TabView with 6 tabs, 40 toolbar items
/// in all, and in its first (selected) tab a three-column split view whose detail
/// carries an inspector, two sheets, a keyboard accessory and 24 of the items (groups,
/// every kind of priority, pinned, secondary, destructive and bottom placements,
/// badges, a text-only item and a flexible spacer). Generated in code so its size is
/// stated once, here.
enum LargeApp {
    static let name = "large"

    struct ItemSpec {
        var id: String
        var title: String?
        var symbol: String?
        var placement: String?
        var group: String?
        var priority: Priority?
        var badge: Int?
        var kind: String?

        enum Priority { case high, low, rank(Double) }
    }

    static func item(_ id: String, _ title: String?, _ symbol: String?, placement: String? = nil, group: String? = nil,
                     priority: ItemSpec.Priority? = nil, badge: Int? = nil, kind: String? = nil) -> ItemSpec {
        ItemSpec(id: id, title: title, symbol: symbol, placement: placement, group: group, priority: priority, badge: badge, kind: kind)
    }

    /// The 24 items of the split view's detail screen.
    static let detailItems: [ItemSpec] = [
        item("close", "Close", "xmark", placement: "cancellationAction"),
        item("done", "Done", "checkmark", placement: "confirmationAction"),
        item("compose", "Compose", "square.and.pencil", placement: "topBarPinnedTrailing"),
        item("share", "Share", "square.and.arrow.up", placement: "primaryAction"),
        item("bold", "Bold", "bold", group: "format"),
        item("italic", "Italic", "italic", group: "format"),
        item("underline", "Underline", "underline", group: "format"),
        item("strike", "Strikethrough", "strikethrough", group: "format"),
        item("align", "Align", "text.alignleft", group: "format", priority: .low),
        item("color", "Color", "paintpalette", group: "format", priority: .low),
        item("insertTable", "Table", "tablecells", group: "insert"),
        item("insertImage", "Image", "photo", group: "insert", priority: .high),
        item("insertLink", "Link", "link", group: "insert"),
        item("insertChecklist", "Checklist", "checklist", group: "insert"),
        item("insertDate", "Date", "calendar", group: "insert", priority: .rank(250)),
        item("comments", "Comments", "text.bubble", badge: 7),
        item("history", "History", "clock.arrow.circlepath", priority: .rank(-250)),
        item("editTitle", "Rename", nil),
        item("duplicate", "Duplicate", "plus.square.on.square", placement: "secondaryAction"),
        item("archive", "Archive", "archivebox", placement: "secondaryAction"),
        item("delete", "Delete", "trash", placement: "destructiveAction"),
        item("bottomFlex", nil, nil, placement: "bottomBar", kind: "flexibleSpacer"),
        item("wordCount", "Words", "number", placement: "bottomBar", priority: .low),
        item("zoom", "Zoom", "plus.magnifyingglass", placement: "bottomBar"),
    ]

    /// The manifest, as JSON bytes.
    static func manifest() -> [UInt8] {
        var w = JSONWriter(capacity: 8 * 1024)
        w.beginObject()
        w.key("name"); w.string("Large (synthetic)")
        w.key("root"); w.beginObject()
        w.key("kind"); w.string("tabView"); w.key("id"); w.string("largeTabs")
        w.key("style"); w.string("automatic"); w.key("placement"); w.string("automatic")
        w.key("selected"); w.string("library")
        w.key("tabs"); w.beginArray()

        tab(&w, id: "library", title: "Library", symbol: "books.vertical", badge: 3) { w in
            w.key("kind"); w.string("splitView"); w.key("id"); w.string("librarySplit")
            w.key("sidebar")
            screen(&w, id: "collections", title: "Collections", items: [
                item("newCollection", "New Collection", "folder.badge.plus", placement: "bottomBar"),
                item("editCollections", "Edit", nil),
            ])
            w.key("content")
            screen(&w, id: "documents", title: "Documents", items: [
                item("sortDocuments", "Sort", "arrow.up.arrow.down"),
                item("filterDocuments", "Filter", "line.3.horizontal.decrease", group: "view"),
                item("viewMode", "View", "square.grid.2x2", group: "view"),
                item("selectDocuments", "Select", nil),
            ])
            w.key("detail")
            screen(&w, id: "document", title: "Document", items: detailItems, compression: "prefersToolbarItems") { w in
                w.key("overflowMenu"); w.beginArray()
                itemJSON(&w, item("export", "Export", "square.and.arrow.down"))
                itemJSON(&w, item("print", "Print", "printer"))
                w.endArray()
                w.key("inspector"); w.beginObject(); w.key("toolbar"); w.beginArray()
                itemJSON(&w, item("inspectorClose", "Close", "xmark", placement: "cancellationAction"))
                itemJSON(&w, item("inspectorInfo", "Info", "info.circle"))
                itemJSON(&w, item("inspectorTags", "Tags", "tag"))
                w.endArray(); w.endObject()
                w.key("sheets"); w.beginArray()
                sheet(&w, id: "shareSheet", placement: "trailing", items: [item("shareClose", "Close", "xmark", placement: "cancellationAction"),
                                                                          item("shareCopy", "Copy", "doc.on.doc")])
                sheet(&w, id: "settingsSheet", placement: "center", items: [item("settingsDone", "Done", nil, placement: "confirmationAction")])
                w.endArray()
                w.key("keyboardAccessory"); w.beginArray()
                itemJSON(&w, item("kbBold", "Bold", "bold"))
                itemJSON(&w, item("kbItalic", "Italic", "italic"))
                itemJSON(&w, item("kbFlex", nil, nil, kind: "flexibleSpacer"))
                itemJSON(&w, item("kbDone", "Done", nil))
                w.endArray()
            }
        }
        let others: [(String, String, String, [ItemSpec])] = [
            ("recents", "Recents", "clock", [item("clearRecents", "Clear", "trash", placement: "destructiveAction"), item("recentsFilter", "Filter", "line.3.horizontal.decrease")]),
            ("shared", "Shared", "person.2", [item("invite", "Invite", "person.badge.plus", placement: "primaryAction"), item("sharedSort", "Sort", "arrow.up.arrow.down")]),
            ("tags", "Tags", "tag", [item("newTag", "New Tag", "plus"), item("tagsEdit", "Edit", nil)]),
            ("trash", "Trash", "trash", [item("emptyTrash", "Empty", "trash.slash", placement: "destructiveAction"), item("restoreAll", "Restore All", "arrow.uturn.backward")]),
            ("settings", "Settings", "gear", [item("settingsHelp", "Help", "questionmark.circle"), item("settingsAccount", "Account", "person.crop.circle")]),
        ]
        for (id, title, symbol, items) in others {
            tab(&w, id: id, title: title, symbol: symbol, badge: nil) { w in
                w.key("kind"); w.string("navigationStack"); w.key("id"); w.string(id + "Stack")
                w.key("screens"); w.beginArray()
                screen(&w, id: id + "Home", title: title, items: items)
                // A second screen to push to, with no items of its own.
                screen(&w, id: id + "Detail", title: title + " Detail", items: [])
                w.endArray()
            }
        }
        w.endArray()
        w.endObject()
        w.endObject()
        return w.bytes
    }

    static func app() -> App {
        do { return try App.decode(json: manifest()) } catch {
            preconditionFailure("the synthetic large app does not decode: \(error)")
        }
    }

    private static func tab(_ w: inout JSONWriter, id: String, title: String, symbol: String, badge: Int?,
                            content: (inout JSONWriter) -> Void) {
        w.beginObject()
        w.key("id"); w.string(id); w.key("title"); w.string(title); w.key("symbol"); w.string(symbol)
        if let badge { w.key("badge"); w.int(badge) }
        w.key("content"); w.beginObject(); content(&w); w.endObject()
        w.endObject()
    }

    private static func screen(_ w: inout JSONWriter, id: String, title: String, items: [ItemSpec], compression: String? = nil,
                               extra: (inout JSONWriter) -> Void = { _ in }) {
        w.beginObject()
        w.key("id"); w.string(id); w.key("title"); w.string(title)
        if let compression { w.key("compression"); w.string(compression) }
        w.key("toolbar"); w.beginArray()
        for i in items { itemJSON(&w, i) }
        w.endArray()
        extra(&w)
        w.endObject()
    }

    private static func sheet(_ w: inout JSONWriter, id: String, placement: String, items: [ItemSpec]) {
        w.beginObject()
        w.key("id"); w.string(id); w.key("placement"); w.string(placement)
        w.key("toolbar"); w.beginArray(); for i in items { itemJSON(&w, i) }; w.endArray()
        w.endObject()
    }

    private static func itemJSON(_ w: inout JSONWriter, _ i: ItemSpec) {
        w.beginObject()
        w.key("id"); w.string(i.id)
        if let t = i.title { w.key("title"); w.string(t) }
        if let s = i.symbol { w.key("symbol"); w.string(s) }
        if let p = i.placement { w.key("placement"); w.string(p) }
        if let g = i.group { w.key("group"); w.string(g) }
        switch i.priority {
        case .high?: w.key("priority"); w.string("high")
        case .low?: w.key("priority"); w.string("low")
        case .rank(let r)?: w.key("priority"); w.number(r)
        case nil: break
        }
        if let b = i.badge { w.key("badge"); w.int(b) }
        if let k = i.kind { w.key("kind"); w.string(k) }
        w.endObject()
    }
}
