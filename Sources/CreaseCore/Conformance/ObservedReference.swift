/// The ways a device reading can be exactly what a layout predicts: what a page-source
/// reader sees of it (`PageSourceView`), or everything an observation can say of it
/// (`Observation(describing:)`). A correct device read through the page source gives the
/// first (as a tour's `expected` is), `crease demo` and `crease gen` send the second, so a
/// trace can keep such a look as a reference to the layout instead of its whole observed object.
public enum ObservationView: String, Sendable, CaseIterable {
    case pageSource
    case complete

    public func observation(of layout: Layout) -> Observation {
        switch self {
        case .pageSource: PageSourceView.observation(of: layout)
        case .complete: Observation(describing: layout)
        }
    }
}

extension Observation {
    /// The digest (crease64v) of the observation's canonical JSON: two observations with
    /// the same digest write the same object.
    public var digest: UInt64 {
        var w = JSONWriter(capacity: 2048)
        write(to: &w)
        return Digest.crease64v(w.bytes)
    }
}

/// A look kept as "the `view` of the layout whose digest is `layout`" (a trace record's
/// `observedAs`): a look of the tabs app is 233 bytes so, 1,163 whole. Replay finds that
/// layout among the layouts its judge keeps (those of the capture and the settle window before it), rebuilds the
/// observation and judges it again; `digest`, the rebuilt observation's, catches a view
/// this build computes otherwise than the one that recorded it.
public struct ObservedReference: Sendable, Equatable {
    public var view: ObservationView
    public var layout: UInt64
    public var digest: UInt64

    public init(view: ObservationView, layout: UInt64, digest: UInt64) {
        self.view = view
        self.layout = layout
        self.digest = digest
    }

    /// The reference for `observed` when it is exactly one view of `layout` (digest
    /// `layoutDigest`); nil when the rig saw anything else (a partial reading, frames off
    /// within the tolerance), which a trace keeps whole.
    public static func of(_ observed: Observation, layout: Layout, layoutDigest: UInt64) -> ObservedReference? {
        guard observed.complete, let items = observed.items, items.count == layout.bars.reduce(0, { $0 + $1.items.count }) else { return nil }
        // Only the complete view says what the sheet is (`null` for none); the page source never does.
        let view: ObservationView = observed.sheet == nil ? .pageSource : .complete
        let expected = view.observation(of: layout)
        return expected == observed ? ObservedReference(view: view, layout: layoutDigest, digest: expected.digest) : nil
    }

    /// The observation this reference stands for, rebuilt from `layout` (the one whose
    /// digest is `self.layout`); nil when this build's view of it is not the recorded one.
    public func resolve(in layout: Layout) -> Observation? {
        let observed = view.observation(of: layout)
        return observed.digest == digest ? observed : nil
    }

    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("view"); w.string(view.rawValue)
        w.key("layout"); w.string(Digest.hex(layout))
        w.key("digest"); w.string(Digest.hex(digest))
        w.endObject()
    }

    static func decode(_ value: JSONValue, path: String) throws(InputError) -> ObservedReference {
        let r = try FieldReader(value, path: path, what: "observedAs")
        try r.rejectUnknown(allowed: ["view", "layout", "digest"])
        func digest(_ name: String) throws(InputError) -> UInt64 {
            guard let d = Digest.parseHex(try r.string(name)) else {
                throw InputError(.badValue, "\(r.fieldPath(name)) must be 16 hex digits", field: r.fieldPath(name))
            }
            return d
        }
        return ObservedReference(view: try r.enumeration("view", ObservationView.self), layout: try digest("layout"), digest: try digest("digest"))
    }
}
