import CreaseCore

/// The commands: one case each, answered into the client's reply. A new command is a
/// case of `Command` (decoded in CreaseCore) and a case here.
extension DaemonCore {
    mutating func perform(_ command: Command, id: JSONValue?, for client: Int, at now: UInt64, into out: inout DaemonActions) {
        let start = out.bytes.count
        defer { out.write(client: client, from: start) }
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
                w.key("access"); w.string((c?.access ?? .none).description)
                if let p = c?.peer {
                    w.key("peer"); w.beginObject()
                    w.key("pid"); w.int(Int(p.pid))
                    w.key("uid"); w.int(Int(p.uid))
                    w.key("gid"); w.int(Int(p.gid))
                    w.endObject()
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
        case .stats:
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("stats"); writeStats(at: now, to: &w)
            }
        case .mark(let label):
            if tracing { out.append(.record(.mark(seq: engine.seq, tNs: now, label: label))) }
            out.log(.info, "mark at seq \(engine.seq): \(label)")
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("traced"); w.bool(tracing)
            }
        case .sync:
            Reply.appendOK(id: id, to: &out.bytes) { w in
                w.key("seq"); w.int(engine.seq)
                w.key("digest"); w.string(Digest.hex(engine.digest))
            }
        case .trace(.rotate):
            guard tracing else {
                Reply.appendError(InputError("traceDisabled", "this daemon records no trace", id: id), to: &out.bytes)
                break
            }
            out.append(.reopenTrace(client: client, id: id))
        }
    }

    /// The shell reopened the trace for `trace rotate`: the new file's path, or nil when it failed.
    public mutating func traceReopened(path: String?, client: Int, id: JSONValue?, into out: inout DaemonActions) {
        guard clients[client] != nil else { return }
        let start = out.bytes.count
        if let path {
            Reply.appendOK(id: id, to: &out.bytes) { w in w.key("trace"); w.string(path) }
        } else {
            Reply.appendError(InputError("traceFailed", "the trace could not be reopened; see the daemon's log", id: id), to: &out.bytes)
        }
        out.write(client: client, from: start)
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
