/// The builder's diagnostics that read the manifest (seed rules that advise rather than lay out).
extension LayoutBuilder {
    // MARK: - Diagnostics that read the manifest

    mutating func itemDiagnostics(_ item: Item, vertical: Bool) {
        guard item.kind == .button else { return }
        if let s = item.symbol, SymbolRule.isReservedEllipsis(s) {
            note(.reservedEllipsis, item.id, "the ellipsis symbol is reserved for the system overflow menu; give \"\(item.id)\" a symbol of its own")
        }
        if vertical, item.symbol == nil, !item.customView, item.axisBehavior != .horizontalOnly {
            note(.titleOnlyItem, item.id, "\"\(item.id)\" has a title and no symbol, so it stays horizontal; give it a symbol to let it join the vertical bar")
        }
        if item.title == nil {
            note(.missingTitle, item.id, "\"\(item.id)\" has no title; the overflow menu shows each item's title, so give every item one")
        }
    }

    /// The badge notes of a bar's displaced items: they depend on the toolbar and the ids
    /// alone, so a memo hands back the previous build's for the same toolbar and ids.
    mutating func badgeDiagnostics(_ displaced: [String], screen: Screen) {
        // Most toolbars badge nothing: then no displaced id needs looking up.
        guard !displaced.isEmpty, screen.toolbar.hasBadgedItem else { return }
        if let i = pools.badgeNotes.firstIndex(where: { BuildMemo.identical($0.pointee.toolbar, screen.toolbar) && $0.pointee.displaced == displaced }) {
            noteAgain(pools.badgeNotes.entries[i].diagnostics)
            return
        }
        let mark = diagnostics.count
        for id in displaced { badgeDiagnostic(id, screen: screen) }
        if remembers {
            pools.badgeNotes.add(.init(toolbar: screen.toolbar, displaced: displaced, diagnostics: diagnostics.suffix(from: mark)))
        }
    }

    mutating func badgeDiagnostic(_ id: String, screen: Screen) {
        guard let item = (screen.toolbar.first { $0.id == id }), item.badge != nil else { return }
        let advice = item.priority < VisibilityPriority.high
            ? "give it visibilityPriority(.high) so its status stays visible" : "even its high priority did not keep it in the bar here"
        note(.badgedItemInOverflow, id, "\"\(id)\" shows a badge but is in the overflow menu; \(advice)")
    }

    /// A custom bar's overlap note: the previous build's when the bar overlaps the same
    /// kinds of region (its message is the same), so a keyboard moving under it builds none.
    mutating func collisionNote(_ id: String, _ collides: [RegionKind]) {
        if let i = pools.collisionNotes.firstIndex(where: { $0.pointee.subject == id && $0.pointee.collides == collides }) {
            pools.collisionNotes.entries.withUnsafeBufferPointer { all in diagnostics.append((all.baseAddress! + i).pointer(to: \.note)!) }
            return
        }
        note(.customBarCollides, id, "custom bar \"\(id)\" overlaps \(collides.map(\.rawValue).joined(separator: ", ")); query reserved regions")
        if remembers { pools.collisionNotes.add(.init(subject: id, collides: collides, note: diagnostics[diagnostics.count - 1])) }
    }

    mutating func manifestDiagnostics() {
        // Seed 000: "Keep the choice stable across tabs so the layout doesn't jump as people switch."
        guard let tv = scene.tabView else { return }
        // It reads the manifest alone: a memo hands back the previous build's for the same tab
        // view (read in place: binding the memo's entry or the tab view copied them).
        if tabViewNotes?.tabView == tv, BuildMemo.identical(tabViewNotes!.containers, app.containers) {
            noteAgain(tabViewNotes!.diagnostics)
            return
        }
        guard case .tabView(let spec) = app.containers[tv] else { return }
        let mark = diagnostics.count
        let behaviors = spec.tabs.map { OptOutRule.rootBehavior(app.containers[$0.content], app: app) }
        if let first = behaviors.first, behaviors.contains(where: { $0 != first }) {
            note(.inconsistentOptOut, spec.id, "tabs of \"\(spec.id)\" opt out of the vertical bar differently; the layout will jump as people switch tabs")
        }
        if remembers {
            tabViewNotes = .init(containers: app.containers, tabView: tv, diagnostics: diagnostics.suffix(from: mark))
        }
    }
}
