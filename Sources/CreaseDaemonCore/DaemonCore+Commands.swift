import CreaseCore

/// The commands: one case each, answered into the client's reply. A new command is a
/// case of `Command` (decoded in CreaseCore) and a case here.
extension DaemonCore {
    /// Every command but `load` (`load(_:…)`, below): only a reply, written once it is encoded.
    /// `line` is the command as sent and `readNs` when it was read (an observation records both).
    mutating func perform(_ command: Command, id: JSONValue?, line: UnsafeRawBufferPointer, for client: Int, readAt readNs: UInt64,
                          at now: UInt64, into out: inout DaemonActions) {
        let start = out.bytes.count
        var answered = false
        defer { if !answered { reply(from: start, to: client, into: &out) } }
        switch command {
        case .hello:
            let c = clients[client]
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("protocol"); w.int(Reply.protocolVersion)
                w.key("daemon"); w.string(config.daemonName)
                w.key("profile"); w.string(engine.profileName)
                w.key("app"); w.string(engine.appName)
                w.key("seq"); w.int(engine.seq)
                w.key("digest"); w.string(Digest.hex(engine.digest))
                w.key("client"); w.int(client)
                w.key("socketActivated"); w.bool(config.socketActivated)
                w.key("budgetUs"); w.int(Int(config.budgetUs))
                w.key("lineLimit"); w.int(config.lineLimit)
                w.key("access"); w.string((c?.access ?? .none).description)
                if let p = c?.peer {
                    w.key("peer"); w.beginObject()
                    w.key("pid"); w.int(Int(p.pid))
                    w.key("uid"); w.int(Int(p.uid))
                    w.key("gid"); w.int(Int(p.gid))
                    w.endObject()
                }
                w.key("labels"); Label.write(config.labels, to: &w)
                switch config.resume {
                case .resumed(let from, let truncated)?:
                    w.key("resumed"); w.beginObject()
                    w.key("file"); w.string(from.file); w.key("seq"); w.int(from.seq); w.key("digest"); w.string(Digest.hex(from.digest))
                    w.key("truncatedBytes"); w.int(truncated)
                    w.endObject()
                case .fresh(let why)?:
                    w.key("resumed"); w.beginObject(); w.key("fresh"); w.string(why); w.endObject()
                case nil: break
                }
            }
        case .layout:
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("layout"); w.raw(engine.layoutJSON())
            }
        case .state:
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("state"); w.raw(engine.stateJSON())
            }
        case .subscribe(let topics):
            let added = TopicSet(topics)
            let before = subscribers.add(added, for: client)
            appendTopicsReply(id: id, for: client, to: &out.bytes)
            // New layout subscribers start from the current layout.
            if !before.contains(.layout), added.contains(.layout) {
                Reply.appendLayoutPush(seq: engine.seq, digest: engine.digest, to: &out.bytes) { engine.appendLayoutJSON(to: &$0) }
            }
            if !before.contains(.diagnostics), added.contains(.diagnostics) {
                // Every diagnostics subscriber has now seen these.
                lastDiagnostics = engine.layout.diagnostics
                appendDiagnosticsPush(to: &out.bytes)
            }
            out.log(.debug, "client \(client) subscribed to \(topics.map(\.rawValue).joined(separator: ", "))")
        case .unsubscribe(let topics):
            subscribers.remove(TopicSet(topics), for: client)
            appendTopicsReply(id: id, for: client, to: &out.bytes)
        case .stats(let reset):
            // The figures are taken now; the reply waits for the gauges the shell samples.
            answered = true
            awaitGauges(.reply(client: client, id: id, reset: reset, snapshot(at: now)), into: &out)
            if reset {
                // The figures just answered close the period; the next one starts empty.
                stats = DaemonStats(budgetNs: config.budgetUs * 1000)
                periodStartNs = now
                lastStatsPushEvents = .max
                out.log(.info, "client \(client) reset the stats")
            }
        case .load:
            preconditionFailure("load publishes; receive(line:) hands it to load(_:…)")
        case .mark(let label):
            if tracing {
                out.append(.record(.mark(seq: engine.seq, tNs: now, label: label)))
                held.recordQueued()
            }
            out.log(.info, "mark at seq \(engine.seq): \(label)")
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("traced"); w.bool(tracing)
            }
            // "traced": true under --fsync always means on disk, as for an event.
            answered = true
            reply(from: start, to: client, mustWait: tracing, into: &out)
        case .frame(let verdict):
            if tracing {
                out.append(.record(.frame(seq: engine.seq, tNs: now, client: client, verdict: verdict)))
                held.recordQueued()
            }
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("traced"); w.bool(tracing)
            }
            answered = true
            reply(from: start, to: client, mustWait: tracing, into: &out)
        case .clock:
            // When the line was read, on the clock of `capturedAt` and of the trace's origin.
            Reply.appendOK(id: id, to: &out.bytes) { w in w.key("now"); w.int(Int(readNs)) }
        case .sync:
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("digest"); w.string(Digest.hex(engine.digest))
            }
        case .trace(.rotate):
            guard tracing else {
                Reply.appendError(InputError(.traceDisabled, "this daemon records no trace", id: id), to: &out.bytes)
                break
            }
            out.append(.reopenTrace(reason: "trace rotate", client: client, id: id))
        case .observe(let request):
            if let error = DaemonCore.captureOffClock(request.capturedAt, readNs: readNs, startNs: startNs, id: id) {
                reject(error, from: client, at: now, into: &out)
                answered = true
                break
            }
            // Answered here: the reply, then the record and the push, whose bytes follow it.
            answered = true
            // The tracker's clock is the read time's: `capturedAt` is on it already. A capture
            // ending after `readNs` (a small clock offset) is judged and recorded as ending then,
            // so the record holds only times on the trace's axis.
            let captured = request.capturedAt.map { min($0.lowerBound, readNs)...min($0.upperBound, readNs) }
            let judged = conformance.observe(request, seq: engine.seq, t: readNs, captured: captured)
            let result = judged.result
            stats.observations[Verdict.allCases.firstIndex(of: result.verdict)!] += 1
            Reply.appendOK(id: id, to: &out.bytes) { w in result.writeMembers(to: &w) }
            // Under --fsync always the reply waits for the record, as an event's does.
            if tracing { held.recordQueued() }
            reply(from: start, to: client, mustWait: tracing, into: &out)
            if tracing {
                if let reference = compactLook(request, judged) {
                    let kept = request.jsonBytes(observed: false).withUnsafeBytes { out.keep($0) }
                    out.append(.record(.observation(tNs: readNs, client: client, line: kept, result: result, captured: captured, observedAs: reference)))
                } else {
                    out.append(.record(.observation(tNs: readNs, client: client, line: out.keep(line), result: result, captured: captured,
                                                    observedAs: nil)))
                }
                if acksWaitForDisk { out.append(.flushTrace) }
            }
            guard result.verdict != .match else { return }
            report(glitches.check(verdict: NonMatchVerdict(result, t: readNs &- startNs)), into: &out)
            guard subscribers.any(.conformance) else { return }
            let push = out.bytes.count
            Reply.appendPush("conformance", seq: engine.seq, to: &out.bytes) { w in
                w.key("client"); w.int(client)
                if let ts = request.ts { w.key("ts"); w.int(Int(ts)) }
                result.writeMembers(to: &w, seq: false)
            }
            fanOut(.conformance, push..<out.bytes.count, into: &out)
        }
    }

    /// The reference a look is recorded as, when it is exactly a view of the layout it
    /// agrees with and the daemon keeps looks compact (a mismatch is always recorded whole).
    func compactLook(_ request: ObserveRequest, _ judged: ConformanceTracker.Judgement) -> ObservedReference? {
        config.wholeLooks ? nil : conformance.reference(for: request.observed, judged)
    }

    /// How far a capture may end after its line was read: a rig's clock offset, not another clock.
    static let captureLeadNs: UInt64 = 1_000_000_000

    /// An error for a `capturedAt` that is not on the daemon's clock (ending more than a
    /// second after the line was read, or before the daemon started): a wall clock in place of
    /// the daemon's is refused at the door, never recorded as a time no reader could place.
    static func captureOffClock(_ captured: ClosedRange<UInt64>?, readNs: UInt64, startNs: UInt64, id: JSONValue?) -> InputError? {
        guard let captured else { return nil }
        let clockHint = "capturedAt is in ns on creased's clock (CLOCK_MONOTONIC, what the clock command replies), not the wall clock"
        if captured.upperBound > readNs &+ captureLeadNs {
            let ahead = Double(captured.upperBound - readNs) / 1e9
            return InputError(.badValue, "field \"capturedAt\" ends \(ahead < 1e6 ? "\((ahead * 10).rounded() / 10) s" : "\((ahead / 86_400).rounded()) days") after creased read the line (now \(readNs)): \(clockHint)",
                              field: "capturedAt", id: id)
        }
        if captured.lowerBound < startNs {
            return InputError(.badValue, "field \"capturedAt\" starts before creased started (\(startNs)): \(clockHint)", field: "capturedAt", id: id)
        }
        return nil
    }

    /// Profile, app and state replaced at once, one seq on: published like an event's
    /// change, recorded in the trace, answered with the seq and digest. A load that does not
    /// fit (or gives another digest than asked) is rejected and changes nothing.
    mutating func load(_ request: LoadRequest, id: JSONValue?, for client: Int, readAt readNs: UInt64, at now: UInt64,
                       into out: inout DaemonActions) {
        let loaded: Engine
        do { loaded = try request.loaded(onto: engine, now: Int64(bitPattern: readNs &- startNs)) } catch {
            var e = error
            e.id = id
            reject(e, from: client, at: now, into: &out)
            return
        }
        let changed = loaded.digest != engine.digest
        let before = engine
        engine = loaded
        glitches.replaced(app: engine.app)
        // A load changes what the device should show as an event does: the judge holds
        // observations against the loaded layout from now on.
        conformance.publish(layout: engine.layout, digest: engine.digest, seq: engine.seq, t: readNs)
        if tracing {
            out.append(.record(.load(tNs: readNs, TraceLoad(seq: engine.seq, t: 0, client: client, engine: engine, replacing: before))))
        }
        if engine.digest != lastPublishedDigest {
            publish(into: &out)
            report(glitches.check(layout: engine.layout, seq: engine.seq, t: readNs &- startNs, digest: engine.digest), into: &out)
            stats.publishes += 1
        }
        if tracing { out.append(.flushTrace) }
        out.log(.notice, "client \(client) loaded app \"\(engine.appName)\", profile \"\(engine.profileName)\" and a state at seq \(engine.seq)")
        let start = out.bytes.count
        Reply.appendOK(id: id, to: &out.bytes) { w in
            w.key("seq"); w.int(engine.seq)
            w.key("changed"); w.bool(changed)
            w.key("digest"); w.string(Digest.hex(engine.digest))
        }
        // Under --fsync always an acknowledged load is on disk, as an event is.
        reply(from: start, to: client, mustWait: tracing, into: &out)
    }

    /// The shell reopened the trace for `trace rotate`: the new file's path, or nil when it failed.
    mutating func traceReopened(path: String?, client: Int, id: JSONValue?, into out: inout DaemonActions) {
        guard clients[client] != nil else { return }
        let start = out.bytes.count
        if let path {
            Reply.appendOK(id: id, to: &out.bytes) { w in w.key("trace"); w.string(path) }
        } else {
            Reply.appendError(InputError(.traceFailed, "the trace could not be reopened; see the daemon's log", id: id), to: &out.bytes)
        }
        reply(from: start, to: client, into: &out)
    }

    private func appendTopicsReply(id: JSONValue?, for client: Int, to bytes: inout [UInt8]) {
        let topics = subscribers.topics(of: client)
        Reply.appendOK(id: id, to: &bytes) { w in
            w.key("seq"); w.int(engine.seq)
            w.key("topics"); w.beginArray()
            for t in topics.topics { w.string(t.rawValue) }
            w.endArray()
        }
    }
}
