import CreaseCore

/// What a drawing says about an id that the layout only names: titles and symbols come
/// from the app manifest (the layout carries ids and frames only).
struct ItemCatalog {
    struct Entry: Equatable {
        var title: String?
        var symbol: String?
        var badge: Int? = nil
    }

    /// Lookup only; nothing iterates it, so its order never reaches the output.
    private var entries: [String: Entry] = [:]
    /// The tab ids of each tab view, in manifest order.
    private var tabViews: [String: [String]] = [:]

    /// The items the system adds (contract section 4), with the symbols UIKit uses.
    static let system: [(String, Entry)] = [
        ("system.back", Entry(title: "Back", symbol: "chevron.backward")),
        ("system.overflow", Entry(title: "More", symbol: "ellipsis.circle")),
        ("system.tabs", Entry(title: "Tabs", symbol: "square.grid.2x2")),
    ]

    init(app: App) {
        for (id, e) in ItemCatalog.system { entries[id] = e }
        for container in app.containers {
            if case .tabView(let t) = container {
                for tab in t.tabs { add(tab.id, Entry(title: tab.title, symbol: tab.symbol, badge: tab.badge)) }
                tabViews[t.id] = t.tabs.map(\.id)
            }
        }
        for screen in app.screens {
            add(screen.id, Entry(title: screen.title, symbol: nil))
            var items = screen.toolbar + screen.overflowMenu + screen.keyboardAccessory + (screen.inspector ?? [])
            for sheet in screen.sheets {
                add(sheet.id, Entry(title: nil, symbol: nil))
                items += sheet.toolbar
            }
            for item in items { add(item.id, Entry(title: item.title, symbol: item.symbol, badge: item.badge)) }
        }
    }

    /// Ids are unique within a manifest; should one repeat anyway, the first keeps its entry.
    private mutating func add(_ id: String, _ e: Entry) {
        if entries[id] == nil { entries[id] = e }
    }

    func tabs(ofTabView id: String) -> [String] { tabViews[id] ?? [] }

    func title(_ id: String) -> String? { entries[id]?.title }
    func symbol(_ id: String) -> String? { entries[id]?.symbol }
    /// The manifest's badge: what a menu entry shows (placed items carry theirs in the layout).
    func badge(_ id: String) -> Int? { entries[id]?.badge }

    /// A menu line: the title, else the id.
    func name(_ id: String) -> String { title(id) ?? id }
}

/// One line about an event for captions and tooltips: its canonical JSON, except that an
/// `app` event is named by its app rather than printing the whole manifest.
enum EventLabel {
    static func text(_ event: Event) -> String {
        if case .app(let app) = event { return "app \"\(app.name)\"" }
        return String(decoding: event.jsonBytes(), as: UTF8.self)
    }
}
