import CreaseCore

/// Clients coming and going: who may connect and what they may do (the access policy, the
/// readers' limits), hang-ups and lines too long, drops and closes.
extension DaemonCore {
    // MARK: - Clients

    /// A client connected as `peer` (nil when the kernel would not say): it may read from
    /// it, or it is told why not and refused.
    mutating func connected(client: Int, peer: PeerCredentials?, at now: UInt64, into out: inout DaemonActions) {
        stats.accepted += 1
        let policy = config.policy
        // Without credentials only the open policy can let a peer in.
        let access = peer.map(policy.level(for:)) ?? (policy.isOpen ? .publish : .none)
        let who = peer.map(\.description) ?? "unknown peer (no SO_PEERCRED)"
        if access == .read, let full = readerLimitReached(uid: peer?.uid) {
            logRefusal("client \(client) connected: \(who); refused: \(full)", at: now, into: &out)
            stats.forbidden += 1
            let start = out.bytes.count
            Reply.appendError(InputError(.forbidden, "\(full); close another read-only connection first"), to: &out.bytes)
            out.write(client: client, from: start)
            out.append(.refuse(client: client))
            return
        }
        switch access {
        case .publish: out.log(.info, "client \(client) connected: \(who); may publish (\(clients.count + 1) open)")
        case .read: out.log(.info, "client \(client) connected: \(who); may read (\(clients.count + 1) open)")
        case .none:
            logRefusal("client \(client) connected: \(who); refused: no --allow-read or --allow-publish rule names it", at: now, into: &out)
            stats.forbidden += 1
            let start = out.bytes.count
            Reply.appendError(InputError(.forbidden, policy.refusal(.none, peer: peer, wanted: "")), to: &out.bytes)
            out.write(client: client, from: start)
            out.append(.refuse(client: client))
            return
        }
        lastSender = nil
        clients[client] = Client(access: access, peer: peer)
        out.append(.startReading(client: client))
    }

    /// A refused connection's log line, within the refusal log's rate.
    mutating func logRefusal(_ line: String, at now: UInt64, into out: inout DaemonActions) {
        let admitted = refusalLog.admit(at: now)
        guard admitted.log else { return }
        out.log(.warning, line + (admitted.leftOut > 0 ? " (\(admitted.leftOut) refusals before it not logged: more than \(RefusalLog.perSecond) a second)" : ""))
    }

    /// Why one more read-only connection (from `uid`) is one too many, if it is: publishers
    /// are never counted or refused by these limits.
    func readerLimitReached(uid: UInt32?) -> String? {
        var total = 0, fromUid = 0
        for c in clients.values where c.access == .read {
            total += 1
            if let uid, c.peer?.uid == uid { fromUid += 1 }
        }
        if total >= config.readersTotal {
            return "\(total) read-only connections are open, as many as the daemon takes (it keeps its last descriptors for publishers)"
        }
        if let uid, fromUid >= config.readersPerUid {
            return "uid \(uid) has \(fromUid) read-only connections open, the most one uid may hold (--max-readers-per-uid)"
        }
        return nil
    }

    /// The client hung up or its read failed: what it sent before is answered, then it
    /// closes. `unterminatedBytes` followed its last newline: they are not applied, but the
    /// client is told (it may still read), the log says so and `stats` counts it.
    mutating func endOfInput(client: Int, unterminatedBytes: Int = 0, at now: UInt64, into out: inout DaemonActions) {
        flush(at: now, into: &out)
        if unterminatedBytes > 0, let lines = clients[client]?.lines {
            stats.unterminatedLines += 1
            var error = InputError(.unterminatedLine,
                                   "the stream ended inside line \(lines + 1): \(unterminatedBytes) bytes with no newline were not applied; end every line with \\n")
            error.line = lines + 1
            let start = out.bytes.count
            Reply.appendError(error, to: &out.bytes)
            reply(from: start, to: client, into: &out)
            out.log(.warning, "client \(client) ended its stream inside line \(lines + 1) (\(unterminatedBytes) bytes with no newline); not applied")
        }
        closeWhenAnswered(client, into: &out)
    }

    /// The client sent a line longer than the limit: told so, then closed.
    mutating func lineTooLong(client: Int, length: Int, at now: UInt64, into out: inout DaemonActions) {
        stats.oversizedLines += 1
        flush(at: now, into: &out)
        let start = out.bytes.count
        Reply.appendError(InputError(.lineTooLong, "a line of \(length)+ bytes passes the \(config.lineLimit)-byte limit; closing the connection"),
                          to: &out.bytes)
        reply(from: start, to: client, into: &out)
        out.log(.warning, "client \(client): line longer than \(config.lineLimit) bytes; closing it")
        closeWhenAnswered(client, into: &out)
    }

    /// Closes `client` once everything it is owed is written: at once, or, when replies wait for
    /// the disk, once they are released (a client that half-closes still reads its replies).
    mutating func closeWhenAnswered(_ client: Int, into out: inout DaemonActions) {
        if acksWaitForDisk, held.holds(client: client) {
            if !closeAfterHeld.contains(client) { closeAfterHeld.append(client) }
        } else {
            out.append(.closeAfterWrites(client: client))
        }
    }

    /// The client is gone (or going): it gets no more replies or pushes.
    mutating func closed(client: Int) {
        closeAfterHeld.removeAll { $0 == client }
        lastSender = nil
        clients[client] = nil
        subscribers.remove([], for: client)
    }

    /// The shell dropped a client whose queue passed its limit.
    mutating func dropped(client: Int, reason: String, into out: inout DaemonActions) {
        let subscriber = !subscribers.topics(of: client).isEmpty
        out.log(.warning, "dropping client \(client)\(subscriber ? " (subscriber)" : ""): \(reason)")
        stats.dropped += 1
        stats.lastDropReason = reason
        closed(client: client)
    }
}
