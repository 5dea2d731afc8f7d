#if canImport(Glibc)
import Glibc
#endif
import CLibUV
import CreaseCore
import CreaseDaemonCore
import CreaseSystem

/// Reading: a client's bytes become lines for the core, each client a turn of work at a time.
extension Daemon {
    // MARK: - Input

    func didRead(_ c: Connection, nread: Int, bytes: UnsafeRawPointer?) {
        guard c.state == .open else { return }
        if nread < 0 {
            if nread != Int(UV_EOF.rawValue) {
                log.debug("client \(c.id): read failed: \(uvErrorName(Int32(nread)))")
            }
            // Answer what it sent before it hung up, then close.
            feed(.endOfInput(client: c.id, unterminatedBytes: c.framer.partial.count), at: uv_hrtime(), into: &actions)
            perform()
            return
        }
        guard nread > 0, let bytes else { return }
        recordInput(.bytesRead(nread), at: 0)
        core.handleBytesRead(nread)
        let readNs = uv_hrtime()
        let turnEnds = turns.end(ofTurnStartingAt: readNs)
        let outcome = c.framer.feed(UnsafeRawBufferPointer(start: bytes, count: nread)) { line in
            self.handle(line, from: c, readAt: readNs, turnEnds: turnEnds)
        }
        if outcome == .ok, c.framer.partial.count < nread {
            // At least one whole line was handled: learn what a byte costs.
            readSizer.observe(bytes: nread, ns: uv_hrtime() &- readNs)
            readBuffer.size = readSizer.size
        }
        settle(outcome, of: c, readAt: readNs)
    }

    /// One line of `c`'s, read at `readNs`; false when `c` is gone or its turn is over.
    @inline(__always)
    func handle(_ line: UnsafeRawBufferPointer, from c: Connection, readAt readNs: UInt64, turnEnds: UInt64) -> Bool {
        // The two inputs of every line, as `feed` gives them, without building them.
        let readAt = uv_hrtime()
        recordInput(.line(line, client: c.id, readNs: readNs), at: readAt)
        core.handleLine(line, client: c.id, readNs: readNs, at: readAt, into: &actions)
        let now = uv_hrtime()
        recordInput(.lineHandled, at: now)
        core.handleLineHandled(at: now, into: &actions)
        if !actions.isEmpty { perform() }
        return c.state == .open && ClientTurns.goesOn(at: now, turnEnds: turnEnds)
    }

    /// After a feed: a line too long ends the connection; lines held back because `c`'s turn
    /// ran out wait their next turn (`ClientTurns`), with its reading paused, for the next loop turn.
    func settle(_ outcome: LineFramer.Outcome, of c: Connection, readAt readNs: UInt64) {
        if case .lineTooLong(let length) = outcome {
            feed(.lineTooLong(client: c.id, length: length), at: uv_hrtime(), into: &actions)
            perform()
            return
        }
        guard c.state == .open else { return }
        if c.framer.held.isEmpty {
            c.resumeReading()
            return
        }
        if !c.paused {
            c.heldReadNs = readNs
            c.pauseReading()
            turns.ranOut(c.id)
            if backlogTurn == nil { backlogTurn = UVIdle(loop: loop) { [unowned self] in self.serveBacklog() } }
            backlogTurn?.start()
        }
    }

    /// One turn for each client whose lines wait, in the order `ClientTurns` gives.
    func serveBacklog() {
        for id in turns.nextRound() {
            guard let c = connections[id], c.state == .open else { continue }
            let readNs = c.heldReadNs
            let turnEnds = turns.end(ofTurnStartingAt: uv_hrtime())
            let outcome = c.framer.resume { line in self.handle(line, from: c, readAt: readNs, turnEnds: turnEnds) }
            if c.state == .open, !c.framer.held.isEmpty, outcome != .ok {
                turns.ranOut(c.id)
            } else {
                settle(outcome, of: c, readAt: readNs)
            }
        }
        if turns.isEmpty { backlogTurn?.stop() }
    }
}
