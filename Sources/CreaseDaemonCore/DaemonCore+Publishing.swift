import CreaseCore

/// Batches and publishing: a batch is cut at a flush point or by the budget, its layout
/// pushed once to every subscriber, its glitches checked and counted, its replies sent.
extension DaemonCore {
    // MARK: - Publishing

    /// The loop finished an iteration: the open batch publishes.
    mutating func endOfIteration(at now: UInt64, into out: inout DaemonActions) {
        flush(at: now, into: &out)
    }

    /// The replies of the iteration are out: frees what its relayouts evicted from the
    /// engine's recent cache (see `Engine.releaseRetired`), off the way to the replies.
    mutating func repliesSent() { engine.releaseRetired() }

    /// A flush point: publishes the open batch and sends its replies.
    mutating func flush(at now: UInt64, into out: inout DaemonActions) {
        if let batch = scheduler.flush() { finish(batch, at: now, into: &out) }
    }

    mutating func finish(_ batch: PublishScheduler.Batch, at cut: UInt64, into out: inout DaemonActions) {
        // A batch that changed nothing leaves the published layout current; one whose
        // changes cancel out (a keyboard up and down again) publishes nothing either.
        // The checker sees each event, then the layout if it is published; then the latency
        // is taken, so it counts the publishing and the checks too, and each event's is
        // checked against the budget.
        for e in batchEvents { glitches.applied(e) }
        let lastReadT = batchEvents.last?.t
        let published = batch.changed && engine.digest != lastPublishedDigest
        var layoutGlitches: [Glitch] = []
        if published {
            publish(into: &out)
            layoutGlitches = glitches.check(layout: engine.layout, seq: engine.seq, t: lastReadT ?? (cut &- startNs), digest: engine.digest)
            stats.publishes += 1
        }
        // An event's latency runs from its read to the cut of its batch, a time the shell read
        // and handed in (after the batch's last line was applied): the core reads no clock.
        let now = cut
        for i in batchEvents.indices {
            let latency = now &- (batchEvents[i].t &+ startNs)
            stats.latency.record(latency)
            batchEvents[i].latencyNs = latency
            report(glitches.check(latencyOf: batchEvents[i]), into: &out)
        }
        batchEvents.empty()
        report(layoutGlitches, into: &out)
        // The events' records carry their latency, so they come before the batch record.
        if tracing, lastReadT != nil { out.append(.record(.queued(tNs: now))) }
        if published, batch.events > 1 {
            stats.batches += 1
            stats.batchedEvents += UInt64(batch.events)
            if tracing { out.append(.record(.batch(firstSeq: batch.firstSeq, lastSeq: batch.lastSeq))) }
        }
        if tracing { out.append(.flushTrace) }
        // The replies are the batch's last writes: on one core, the client they wake finds
        // the loop with nothing left to do but wait (work after the write measured no faster).
        if acksWaitForDisk {
            held.hold(batchAcks)
        } else {
            DaemonCore.sendAcks(batchAcks[...], clients: clients, lastSender: lastSender?.client, at: now, into: &out)
        }
        batchAcks.empty()
    }

    /// Each client's replies in one write, clients in the order of their first reply (to those
    /// still in `clients`; `lastSender` is known to be, without a lookup). Static: a method of
    /// the core, called from a mutating one, copied the whole core per batch.
    static func sendAcks(_ acks: ArraySlice<Ack>, clients: [Int: Client], lastSender: Int?, at now: UInt64, into out: inout DaemonActions) {
        // Acks are read in place: a loop over the slice copied each one (its id, its held
        // reply) and destroyed it again, about 140 instructions per acknowledged event.
        acks.withUnsafeBufferPointer { acks in
            guard !acks.isEmpty else { return }
            let first = acks[0].client
            if acks.indices.allSatisfy({ acks[$0].client == first }) {
                appendAcks(acks, for: first, clients: clients, lastSender: lastSender, at: now, into: &out)
                return
            }
            var done: [Int] = []
            for i in acks.indices where !done.contains(acks[i].client) {
                done.append(acks[i].client)
                appendAcks(acks, for: acks[i].client, clients: clients, lastSender: lastSender, at: now, into: &out)
            }
        }
    }

    static func appendAcks(_ acks: UnsafeBufferPointer<Ack>, for client: Int, clients: [Int: Client], lastSender: Int?,
                                   at now: UInt64, into out: inout DaemonActions) {
        guard client == lastSender || clients.index(forKey: client) != nil else { return }
        let start = out.bytes.count
        for i in acks.indices where acks[i].client == client {
            if let reply = acks[i].held?.reply {
                out.bytes += reply
                continue
            }
            Reply.appendEventAck(id: acks[i].id, seq: acks[i].seq, changed: acks[i].changed, digest: acks[i].digest,
                                 latencyNs: now &- acks[i].readNs, to: &out.bytes)
        }
        out.write(client: client, from: start)
    }

    /// Pushes the current layout (and diagnostics, when they changed) to every
    /// subscriber of those topics.
    mutating func publish(into out: inout DaemonActions) {
        lastPublishedDigest = engine.digest
        if subscribers.any(.layout) {
            let start = out.bytes.count
            Reply.appendLayoutPush(seq: engine.seq, digest: engine.digest, to: &out.bytes) { engine.appendLayoutJSON(to: &$0) }
            fanOut(.layout, start..<out.bytes.count, into: &out)
        }
        if subscribers.any(.diagnostics), engine.layout.diagnostics != lastDiagnostics {
            lastDiagnostics = engine.layout.diagnostics
            let start = out.bytes.count
            appendDiagnosticsPush(to: &out.bytes)
            fanOut(.diagnostics, start..<out.bytes.count, into: &out)
        }
    }

    /// Counts glitches by kind and pushes each to the `glitches` subscribers as
    /// `{"push":"glitches","seq":N,"glitch":{…}}`.
    mutating func report(_ found: [Glitch], into out: inout DaemonActions) {
        guard !found.isEmpty else { return }
        for g in found {
            stats.glitches[g.kind.index] += 1
            guard subscribers.any(.glitches) else { continue }
            let start = out.bytes.count
            Reply.appendPush("glitches", seq: engine.seq, to: &out.bytes) { w in w.key("glitch"); g.write(to: &w) }
            fanOut(.glitches, start..<out.bytes.count, into: &out)
        }
    }

    func appendDiagnosticsPush(to bytes: inout [UInt8]) {
        let d = engine.diagnosticsJSON()
        Reply.appendPush("diagnostics", seq: engine.seq, to: &bytes) { w in w.key("diagnostics"); w.raw(d) }
    }

    /// Sends one encoded push to every subscriber of `topic`.
    func fanOut(_ topic: TopicSet, _ range: Range<Int>, into out: inout DaemonActions) {
        subscribers.forEach(subscribedTo: topic) { out.write(client: $0, range: range) }
    }
}
