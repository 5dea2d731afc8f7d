/// `crease trace why TRACE --seq N [--item ID | --field PATH]`: for the layout at seq N, the
/// rule that decided the subject (docs/rules.md's name and the passage it applies), the
/// inputs that rule reads with their values, and for each the event that last set it (and the
/// one before). An input is `decisive` when putting it back to its value before that event,
/// everything else as it is, moves the subject: the layout is built again from scratch for
/// each, so nothing of this runs on the event path. An observation at seq N that disagreed
/// with the model gets the same answer for each field it disagreed on.
public struct TraceWhy: Sendable {
    /// What set an input: the event's seq, time and line.
    public struct Setter: Sendable, Equatable {
        public var seq: Int
        public var t: UInt64
        public var event: String
    }

    public struct Input: Sendable, Equatable {
        public var name: String
        /// Its value at the seq, as JSON text.
        public var value: String
        /// The event that last changed it; nil while it is still the trace's start value.
        public var setBy: Setter?
        /// The event that changed it before `setBy`, and the value it left.
        public var before: Setter?
        public var previousValue: String?
        /// Whether its value before `setBy` would have put the subject elsewhere; nil where
        /// that is not asked (no setter, or an input seen through another: the angle
        /// through the pose, the device orientation through the interface's).
        public var decisive: Bool?
    }

    /// The rule and its inputs for one subject.
    public struct Explanation: Sendable, Equatable {
        public var subject: WhySubject
        public var rule: LayoutRule
        /// Where the control is, or the field's value as JSON text.
        public var outcome: String
        public var inputs: [Input]

        /// The decisive input set last, and the event that set it: what made the subject what
        /// it is at this seq. Nil when no input the rule reads was decisive (the manifest, or
        /// the trace's start, decided it).
        public var because: Input? {
            inputs.filter { $0.decisive == true }.max { ($0.setBy?.seq ?? .min) < ($1.setBy?.seq ?? .min) }
        }
    }

    /// A field an observation at this seq found different from the model.
    public struct Mismatch: Sendable, Equatable {
        public var path: String
        public var expected: String
        public var observed: String
        public var explanation: Explanation?
    }

    public var seq: Int
    public var t: UInt64
    public var digest: UInt64
    public var explanation: Explanation
    /// Every input of the layout, the rule's and the others.
    public var allInputs: [Input]
    public var mismatches: [Mismatch]

    /// What the replay knows of each input as it goes: the events that set it and the state
    /// just before the last of them (for the counterfactual).
    struct Provenance: Sendable {
        var setBy: Setter?
        var before: Setter?
        var stateBefore: DeviceState?
        var appBefore: String?
    }

    /// A replay that follows what set each input. `TraceWhy.explain` runs one to a seq;
    /// `WhyCheckpoint.build` runs one over the whole trace, keeping it every so many events.
    struct Following: Sendable {
        var replayer: TraceReplayer
        var provenance: [Provenance]

        init(header: TraceHeader) {
            replayer = TraceReplayer(header: header, verify: false)
            provenance = [Provenance](repeating: Provenance(), count: WhyInputs.names.count)
        }

        /// From a checkpoint: the engine in the state it recorded, what set each input then.
        init(header: TraceHeader, resuming c: WhyCheckpoint) {
            var h = header
            h.initialSeq = c.seq
            h.initialT = c.t
            h.initialState = c.state
            replayer = TraceReplayer(header: h, verify: false)
            provenance = c.provenance
        }

        /// Applies one record; the seq and time it applied at, for an event, a load or a gap.
        mutating func apply(_ traced: TracedRecord) throws(TraceError) -> (seq: Int, t: UInt64)? {
            // Marks, observations, layouts and frames set no input: applied (checked) and nothing copied.
            guard let applied = traced.record.appliedSeq ?? gapSeq(traced.record) else {
                _ = try replayer.apply(traced)
                return nil
            }
            let priorState = replayer.engine.state, priorApp = replayer.engine.app
            if let d = try replayer.apply(traced), case .rejected(let error) = d.kind {
                throw TraceError("seq \(d.seq) cannot be applied: \(error)", line: traced.line, offset: traced.offset)
            }
            let now = replayer.engine.state, app = replayer.engine.app
            var setter: Setter?
            for i in WhyInputs.names.indices where WhyInputs.differs(i, priorState, priorApp, now, app) {
                if setter == nil { setter = Setter(seq: applied, t: time(traced.record), event: describe(traced.record)) }
                var p = provenance[i]
                p.before = p.setBy
                p.setBy = setter
                p.stateBefore = priorState
                p.appBefore = priorApp.name
                provenance[i] = p
            }
            return (applied, time(traced.record))
        }
    }

    /// Replays `file` to the event with seq `seq` (from its start, or its last load or gap
    /// before it, which set every input at once). With `checkpoint`, `file` holds the records
    /// from just after the checkpoint's event, and the replay starts from its state.
    public static func explain(_ file: TraceFile, seq: Int, subject: WhySubject = .field("barAxis"),
                               from checkpoint: WhyCheckpoint? = nil) throws(TraceError) -> TraceWhy {
        var following = checkpoint.map { Following(header: file.header, resuming: $0) } ?? Following(header: file.header)
        if let c = checkpoint, !c.resumes(file.header) {
            throw TraceError("the checkpoint at seq \(c.seq) does not give the digest it recorded: it does not belong to this trace or this build", line: 0, offset: 0)
        }
        let start = checkpoint.map { ($0.seq, $0.t) } ?? (file.header.initialSeq, file.header.initialT)
        var reachedT: UInt64? = seq == start.0 ? start.1 : nil
        var observations: [TraceObservation] = []
        var cursor = file.cursor()
        while let traced = try cursor.next() {
            if reachedT != nil {
                // The observations recorded at the seq come after its event, before the next.
                if case .observation(let o) = traced.record, o.seq == seq { observations.append(o); continue }
                if traced.record.appliedSeq != nil { break }
                continue
            }
            guard let (applied, t) = try following.apply(traced) else { continue }
            if applied == seq { reachedT = t }
            if applied > seq { break }
        }
        let replayer = following.replayer, provenance = following.provenance
        guard let t = reachedT else {
            throw TraceError("the trace has no event at seq \(seq) (it runs from seq \(file.header.initialSeq) to \(replayer.engine.seq))", line: 0, offset: 0)
        }
        let engine = replayer.engine
        let all = allInputs(engine, provenance)
        let explanation: Explanation
        do throws(WhyError) {
            explanation = try explain(subject, engine: engine, all: all, provenance: provenance)
        } catch {
            throw TraceError("seq \(seq): \(error.message)", line: 0, offset: 0)
        }
        var mismatches: [Mismatch] = []
        for o in observations where o.result.verdict != .match {
            for d in o.result.differences {
                mismatches.append(Mismatch(path: d.path, expected: Conformance.text(d.expected), observed: Conformance.text(d.observed),
                                           explanation: try? explain(Self.subject(of: d.path, in: engine.layout), engine: engine, all: all, provenance: provenance)))
            }
        }
        return TraceWhy(seq: seq, t: t, digest: engine.digest, explanation: explanation, allInputs: all, mismatches: mismatches)
    }

    /// Every input of the engine's state with what set it.
    static func allInputs(_ engine: Engine, _ provenance: [Provenance]) -> [Input] {
        let values = WhyInputs.values(engine.state, app: engine.app)
        return WhyInputs.names.indices.map { i in
            let p = provenance[i]
            return Input(name: WhyInputs.names[i], value: values[i], setBy: p.setBy, before: p.before,
                         previousValue: p.stateBefore.map { WhyInputs.values($0, app: engine.app)[i] }, decisive: nil)
        }
    }

    /// The explanations at many seqs in one pass over `file` (for `crease report`'s frames):
    /// at each of `seqs` (ascending; the trace's initial seq may be one), the subjects
    /// `subjects` names for the engine there, each explained as `explain` would. Subjects the
    /// layout cannot answer for are left out. Seqs the trace does not reach get no entry.
    public static func explainAll(_ file: TraceFile, at seqs: [Int],
                                  subjects: (Engine) -> [WhySubject]) throws(TraceError) -> [(seq: Int, explanations: [Explanation])] {
        var following = Following(header: file.header)
        var out: [(seq: Int, explanations: [Explanation])] = []
        var next = 0
        func answer(_ seq: Int) {
            let engine = following.replayer.engine, provenance = following.provenance
            let all = allInputs(engine, provenance)
            let explanations = subjects(engine).compactMap { subject in try? explain(subject, engine: engine, all: all, provenance: provenance) }
            out.append((seq, explanations))
        }
        while next < seqs.count, seqs[next] < file.header.initialSeq { next += 1 }
        if next < seqs.count, seqs[next] == file.header.initialSeq {
            answer(seqs[next])
            next += 1
        }
        var cursor = file.cursor()
        while next < seqs.count, let traced = try cursor.next() {
            guard let (applied, _) = try following.apply(traced) else { continue }
            while next < seqs.count, seqs[next] < applied { next += 1 }
            if next < seqs.count, seqs[next] == applied {
                answer(applied)
                next += 1
            }
        }
        return out
    }

    /// The rule for `subject` at the engine's layout, its inputs, and which of them were decisive.
    static func explain(_ subject: WhySubject, engine: Engine, all: [Input], provenance: [Provenance]) throws(WhyError) -> Explanation {
        let decision = try LayoutWhy.decide(subject, app: engine.app, layout: engine.layout)
        func moves(_ state: DeviceState) -> Bool {
            let layout = LayoutBuilder.build(profile: engine.profile, app: engine.app, state: state)
            return (try? LayoutWhy.decide(subject, app: engine.app, layout: layout))?.key != decision.key
        }
        var inputs = decision.rule.inputs.map { name -> Input in
            let i = WhyInputs.names.firstIndex(of: name)!
            var input = all[i]
            let p = provenance[i]
            if p.setBy != nil, let earlier = p.stateBefore, p.appBefore == engine.app.name,
               let changed = WhyInputs.replacing(name, in: engine.state, from: earlier) {
                input.decisive = moves(changed)
            }
            return input
        }
        // None decided it alone: the inputs the latest event set together may have (a load, an
        // app, a fold that also turned the interface), when either alone would have kept it.
        // Put them back together, to the state before that event; if the subject moves, they
        // decided it jointly.
        if !inputs.contains(where: { $0.decisive == true }),
           let last = inputs.compactMap({ $0.decisive == false ? $0.setBy?.seq : nil }).max() {
            let together = inputs.indices.filter { inputs[$0].decisive == false && inputs[$0].setBy?.seq == last }
            if together.count > 1 {
                var state = engine.state
                for k in together {
                    let i = WhyInputs.names.firstIndex(of: inputs[k].name)!
                    if let earlier = provenance[i].stateBefore, let changed = WhyInputs.replacing(inputs[k].name, in: state, from: earlier) {
                        state = changed
                    }
                }
                if moves(state) { for k in together { inputs[k].decisive = true } }
            }
        }
        return Explanation(subject: subject, rule: decision.rule, outcome: decision.outcome, inputs: inputs)
    }

    /// The subject of an observed difference: `items[share].frame.x` and `overflow[share]` are
    /// about the control `share`; `columns[detail]` and `sheet.frame` about those fields;
    /// `tabBar` about the tab bar's state in `layout` (`bars.N.tabBar`).
    public static func subject(of path: String, in layout: Layout? = nil) -> WhySubject {
        for prefix in ["items[", "overflow["] where path.hasPrefix(prefix) {
            guard let close = path.firstIndex(of: "]") else { break }
            let id = path[path.index(path.startIndex, offsetBy: prefix.count)..<close].split(separator: "#").first.map(String.init) ?? ""
            return .item(id)
        }
        let field = String(path.prefix { $0 != "." && $0 != "[" })
        if field == "tabBar", let bar = layout?.bars.firstIndex(where: { $0.tabBar != nil }) { return .field("bars.\(bar).tabBar") }
        return .field(field)
    }

    static func gapSeq(_ r: TraceRecord) -> Int? { if case .gap(let g) = r { g.seq } else { nil } }

    static func time(_ r: TraceRecord) -> UInt64 {
        switch r {
        case .event(let e): e.t
        case .load(let l): l.t
        case .gap(let g): g.t
        default: 0
        }
    }

    static func describe(_ r: TraceRecord) -> String {
        switch r {
        case .event(let e): String(decoding: e.envelope.event.jsonBytes(), as: UTF8.self)
        case .load: "a load of a whole state"
        default: "a gap (records lost; the state after it recorded)"
        }
    }

    // MARK: JSON

    public func json() -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("seq"); w.int(seq)
        w.key("t"); w.int(Int(t))
        w.key("digest"); w.string(Digest.hex(digest))
        Self.writeMembers(explanation, to: &w)
        w.key("mismatches"); w.beginArray()
        for m in mismatches {
            w.beginObject()
            w.key("path"); w.string(m.path)
            w.key("expected"); w.string(m.expected)
            w.key("observed"); w.string(m.observed)
            w.key("why")
            if let e = m.explanation { w.beginObject(); Self.writeMembers(e, to: &w); w.endObject() } else { w.null() }
            w.endObject()
        }
        w.endArray()
        w.key("state"); Self.write(allInputs, to: &w)
        w.endObject()
        return w.bytes
    }

    static func writeMembers(_ e: Explanation, to w: inout JSONWriter) {
        w.key("subject"); w.string(e.subject.description)
        w.key("outcome"); w.string(e.outcome)
        w.key("rule"); w.string(e.rule.name)
        w.key("passage"); w.string(e.rule.passage)
        w.key("inputs"); write(e.inputs, to: &w)
        w.key("because")
        if let b = e.because, let s = b.setBy {
            w.beginObject(); w.key("input"); w.string(b.name); w.key("seq"); w.int(s.seq); w.key("t"); w.int(Int(s.t)); w.key("event"); w.string(s.event); w.endObject()
        } else {
            w.null()
        }
    }

    static func write(_ inputs: [Input], to w: inout JSONWriter) {
        func setter(_ s: Setter?) {
            guard let s else { w.null(); return }
            w.beginObject(); w.key("seq"); w.int(s.seq); w.key("t"); w.int(Int(s.t)); w.key("event"); w.string(s.event); w.endObject()
        }
        w.beginArray()
        for i in inputs {
            w.beginObject()
            w.key("name"); w.string(i.name)
            w.key("value"); w.string(i.value)
            w.key("setBy"); setter(i.setBy)
            w.key("before"); setter(i.before)
            w.key("previousValue"); if let v = i.previousValue { w.string(v) } else { w.null() }
            if let d = i.decisive { w.key("decisive"); w.bool(d) }
            w.endObject()
        }
        w.endArray()
    }
}
