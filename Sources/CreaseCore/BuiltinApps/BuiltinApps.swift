/// Manifests compiled into the binary. Together they exercise every rule: `tabs`
/// (the default) is a TabView app with a browse screen and a task screen, sheets of
/// every placement, a custom bar, a keyboard accessory and a floating button; `split`
/// is a three-column NavigationSplitView with an inspector; `sidebar` opts into a
/// sidebar on the inner display.
public enum BuiltinApps {
    public static let names = ["tabs", "split", "sidebar"]
    public static let defaultName = "tabs"

    public static func source(named name: String) -> String? {
        switch name {
        case "tabs": tabs
        case "split": split
        case "sidebar": sidebar
        default: nil
        }
    }

    public static func app(named name: String) -> App? {
        guard let source = source(named: name) else { return nil }
        // The sources are tested to decode; a failure here is a bug in this file.
        return try? App.decode(json: Array(source.utf8))
    }

    static let tabs = #"""
    {"name": "Trailhead",
     "root": {"kind": "tabView", "id": "tabs", "style": "automatic", "placement": "automatic", "selected": "browse",
      "tabs": [
       {"id": "browse", "title": "Browse", "symbol": "map", "content": {"kind": "navigationStack", "id": "browseStack", "screens": [
         {"id": "browseHome", "title": "Browse", "compression": "automatic",
          "toolbar": [
            {"id": "search", "title": "Search", "symbol": "magnifyingglass", "placement": "primaryAction"},
            {"id": "filter", "title": "Filter", "symbol": "line.3.horizontal.decrease", "group": "view"},
            {"id": "sort", "title": "Sort", "symbol": "arrow.up.arrow.down", "group": "view"},
            {"id": "layoutToggle", "title": "Layout", "symbol": "square.grid.2x2", "group": "view"},
            {"id": "edit", "title": "Edit", "placement": "topBarTrailing"},
            {"id": "downloads", "title": "Downloads", "symbol": "arrow.down.circle", "badge": 3, "priority": "high"},
            {"id": "share", "title": "Share", "symbol": "square.and.arrow.up", "placement": "bottomBar"},
            {"id": "bottomFlex", "kind": "flexibleSpacer", "placement": "bottomBar"},
            {"id": "locate", "title": "Locate", "symbol": "location", "placement": "bottomBar", "priority": "low"}
          ],
          "overflowMenu": [{"id": "settings", "title": "Settings", "symbol": "gear"}],
          "sheets": [
            {"id": "filters", "placement": "center", "detents": ["medium", "large"], "toolbar": [
              {"id": "filtersClose", "title": "Close", "symbol": "xmark", "placement": "cancellationAction"},
              {"id": "filtersApply", "title": "Apply", "symbol": "checkmark", "placement": "confirmationAction"}]},
            {"id": "trailInfo", "placement": "trailing", "detents": ["large"], "toolbar": [
              {"id": "infoClose", "title": "Close", "symbol": "xmark", "placement": "cancellationAction"},
              {"id": "infoSave", "title": "Save", "symbol": "bookmark"},
              {"id": "infoShare", "title": "Share", "symbol": "square.and.arrow.up"}]},
            {"id": "photos", "placement": "leading", "toolbar": [
              {"id": "photosClose", "title": "Close", "symbol": "xmark", "placement": "cancellationAction"},
              {"id": "photosAdd", "title": "Add Photo", "symbol": "plus"}]},
            {"id": "about", "placement": "automatic", "verticalBehavior": "disabled", "toolbar": [
              {"id": "aboutDone", "title": "Done", "placement": "confirmationAction"}]}
          ],
          "customBars": [{"id": "mapScale", "kind": "toolbar", "edge": "bottom"}],
          "floatingButtons": [{"id": "recenter", "size": 56, "anchor": "safeArea", "corner": "bottomCenter"}]},
         {"id": "trailDetail", "title": "Trail", "toolbar": [
            {"id": "favorite", "title": "Favorite", "symbol": "star"},
            {"id": "directions", "title": "Directions", "symbol": "arrow.triangle.turn.up.right.diamond", "placement": "primaryAction"},
            {"id": "reviews", "title": "Reviews", "symbol": "text.bubble", "badge": 12}]}
       ]}},
       {"id": "plan", "title": "Plan", "symbol": "checklist", "badge": 2, "content": {"kind": "navigationStack", "id": "planStack", "screens": [
         {"id": "planForm", "title": "New Hike", "compression": "prefersToolbarItems",
          "toolbar": [
            {"id": "planCancel", "title": "Cancel", "symbol": "xmark", "placement": "cancellationAction"},
            {"id": "planSave", "title": "Save", "symbol": "checkmark", "placement": "confirmationAction"},
            {"id": "addStop", "title": "Add Stop", "symbol": "plus", "group": "stops"},
            {"id": "removeStop", "title": "Remove Stop", "symbol": "minus", "group": "stops"},
            {"id": "reorder", "title": "Reorder", "symbol": "arrow.up.arrow.down", "group": "stops", "priority": "low"},
            {"id": "weather", "title": "Weather", "symbol": "cloud.sun"},
            {"id": "gearList", "title": "Gear List", "symbol": "backpack", "priority": 500},
            {"id": "duplicate", "title": "Duplicate", "symbol": "plus.square.on.square", "placement": "secondaryAction"}],
          "keyboardAccessory": [
            {"id": "prevField", "title": "Previous", "symbol": "chevron.up"},
            {"id": "nextField", "title": "Next", "symbol": "chevron.down"},
            {"id": "accessoryFlex", "kind": "flexibleSpacer"},
            {"id": "doneTyping", "title": "Done"}]}]}},
       {"id": "saved", "title": "Saved", "symbol": "bookmark", "content": {"kind": "navigationStack", "id": "savedStack", "screens": [
         {"id": "savedList", "title": "Saved",
          "toolbar": [{"id": "savedEdit", "title": "Edit"}, {"id": "savedSort", "title": "Sort", "symbol": "arrow.up.arrow.down"}],
          "customBars": [{"id": "savedFilterBar", "kind": "tabBar", "edge": "top", "followsVerticalEdge": true}]}]}},
       {"id": "profile", "title": "Profile", "symbol": "person.crop.circle", "content": {"kind": "navigationStack", "id": "profileStack", "screens": [
         {"id": "profileHome", "title": "Profile", "verticalBehavior": "disabled",
          "toolbar": [{"id": "profileSettings", "title": "Settings", "symbol": "gearshape"}]}]}},
       {"id": "recent", "title": "Recent", "content": {"kind": "navigationStack", "id": "recentStack", "screens": [
         {"id": "recentList", "title": "Recent", "toolbar": [{"id": "clearRecent", "title": "Clear", "symbol": "trash", "placement": "destructiveAction"}]}]}}
      ]}}
    """#

    static let split = #"""
    {"name": "Field Notes",
     "root": {"kind": "splitView", "id": "notesSplit",
      "sidebar": {"id": "folders", "title": "Folders",
        "toolbar": [{"id": "newFolder", "title": "New Folder", "symbol": "folder.badge.plus", "placement": "bottomBar"},
                    {"id": "foldersEdit", "title": "Edit"}]},
      "content": {"id": "noteList", "title": "Notes",
        "toolbar": [{"id": "sortNotes", "title": "Sort", "symbol": "arrow.up.arrow.down"}]},
      "detail": {"id": "note", "title": "Note", "compression": "prefersTabBar",
        "toolbar": [
          {"id": "compose", "title": "New Note", "symbol": "square.and.pencil", "placement": "topBarPinnedTrailing"},
          {"id": "noteShare", "title": "Share", "symbol": "square.and.arrow.up"},
          {"id": "checklist", "title": "Checklist", "symbol": "checklist", "group": "format"},
          {"id": "table", "title": "Table", "symbol": "tablecells", "group": "format"},
          {"id": "attach", "title": "Attach", "symbol": "paperclip", "group": "format"},
          {"id": "markup", "title": "Markup", "symbol": "pencil.tip.crop.circle"},
          {"id": "lock", "title": "Lock", "symbol": "lock", "priority": "low"},
          {"id": "noteDelete", "title": "Delete", "symbol": "trash", "placement": "destructiveAction"},
          {"id": "pin", "title": "Pin", "symbol": "pin", "placement": "secondaryAction"}],
        "inspector": {"toolbar": [
          {"id": "inspectorClose", "title": "Close", "symbol": "xmark", "placement": "cancellationAction"},
          {"id": "inspectorInfo", "title": "Info", "symbol": "info.circle"},
          {"id": "inspectorTags", "title": "Tags"}]},
        "sheets": [{"id": "shareSheet", "placement": "trailing", "toolbar": [
          {"id": "shareClose", "title": "Close", "symbol": "xmark", "placement": "cancellationAction"}]}],
        "keyboardAccessory": [
          {"id": "bold", "title": "Bold", "symbol": "bold"},
          {"id": "italic", "title": "Italic", "symbol": "italic"},
          {"id": "checkItem", "title": "Checklist", "symbol": "checklist.checked"}]}}}
    """#

    static let sidebar = #"""
    {"name": "Atlas",
     "root": {"kind": "tabView", "id": "atlasTabs", "style": "sidebarAdaptable", "placement": "sidebar",
      "tabs": [
       {"id": "home", "title": "Home", "symbol": "house", "content": {"kind": "navigationStack", "id": "homeStack", "screens": [
         {"id": "homeScreen", "title": "Home", "toolbar": [
           {"id": "homeSearch", "title": "Search", "symbol": "magnifyingglass"},
           {"id": "homeAdd", "title": "Add", "symbol": "plus", "placement": "primaryAction"}]}]}},
       {"id": "favorites", "title": "Favorites", "symbol": "star", "badge": 4, "content": {"kind": "navigationStack", "id": "favoritesStack", "screens": [
         {"id": "favoritesScreen", "title": "Favorites", "toolbar": [{"id": "favoritesEdit", "title": "Edit"}]}]}},
       {"id": "places", "title": "Places", "symbol": "mappin.and.ellipse", "content": {"kind": "navigationStack", "id": "placesStack", "screens": [
         {"id": "placesScreen", "title": "Places", "toolbar": [{"id": "placesShare", "title": "Share", "symbol": "square.and.arrow.up"}]}]}},
       {"id": "library", "title": "Library", "symbol": "books.vertical", "content": {"kind": "navigationStack", "id": "libraryStack", "screens": [
         {"id": "libraryScreen", "title": "Library", "toolbar": [{"id": "librarySort", "title": "Sort", "symbol": "arrow.up.arrow.down"}]}]}}
      ]}}
    """#
}

extension Engine {
    public static var builtinProfile: DeviceProfile { .builtin }
    public static func builtinApp(named name: String) -> App? { BuiltinApps.app(named: name) }
    public static func loadApp(json: [UInt8]) throws(InputError) -> App { try App.decode(json: json) }
    public static func loadProfile(json: [UInt8]) throws(InputError) -> DeviceProfile { try DeviceProfile.decode(json: json) }
}
