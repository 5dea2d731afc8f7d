// libFuzzer harness: the daemon's line framer feeding Wire.decode and the engine.
//
// Built by scripts/fuzz against CreaseCore compiled with the fuzzer and address
// sanitizer instrumentation, with Sources/CreaseSystem/LineFramer.swift in the module.
//
// Input: byte 0 picks the chunk size the stream is cut into (1...64 bytes, or
// whole), byte 1 the built-in app; the rest is the byte stream a client sends.
// Checked on every input, besides "no crash, no sanitizer report":
// - the framer hands out exactly the lines a plain reference split gives (newline
//   removed, one trailing CR removed, lines over the limit end the stream);
// - an event that decodes either applies (seq + 1) or is rejected leaving seq and
//   digest unchanged;
// - every error reply Reply.appendError builds is one line of valid JSON;
// - where the hinge or motion fast path (WireFastPath) decodes a line, the full parser
//   (JSON.parse + Event.decode) accepts it and gives the same envelope;
// - after the stream, the incremental layout equals a layout computed from scratch.

import CreaseCore

/// Small, so the fuzzer reaches the over-limit path often; the daemon's is 64 KiB.
private let lineLimit = 2048

private let apps: [App] = BuiltinApps.names.map { BuiltinApps.app(named: $0)! }

/// The lines a client's byte stream holds, by the contract: split at LF, drop one
/// trailing CR; a line longer than the limit stops everything (nil marks that).
private func referenceLines(_ bytes: ArraySlice<UInt8>, limit: Int) -> (lines: [[UInt8]], tooLong: Bool) {
    var lines: [[UInt8]] = []
    var current: [UInt8] = []
    for b in bytes {
        if b == 0x0A {
            if current.count > limit { return (lines, true) }
            if current.last == 0x0D { current.removeLast() }
            lines.append(current)
            current.removeAll()
        } else {
            current.append(b)
            if current.count > limit { return (lines, true) }
        }
    }
    return (lines, false)
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("FuzzWire: \(message())") }
}

private func checkErrorReply(_ error: InputError) {
    var out: [UInt8] = []
    Reply.appendError(error, to: &out)
    check(out.last == 0x0A && out.dropLast().firstIndex(of: 0x0A) == nil, "error reply is not one line")
    do {
        let v = try JSON.parse(out.dropLast())
        check(v["ok"] == .bool(false), "error reply without ok:false")
        check(v["id"] == error.id, "error reply lost the id")
    } catch {
        fatalError("FuzzWire: error reply is not JSON: \(String(decoding: out, as: UTF8.self))")
    }
}

/// Wire.decode tries the fast path first; it must never answer differently from the full parser.
private func checkFastPath(_ line: UnsafeBufferPointer<UInt8>) {
    guard let fast = WireFastPath.hinge(line) ?? WireFastPath.motion(line) else { return }
    do {
        let full = try Event.decode(try JSON.parse(UnsafeRawBufferPointer(line)))
        check(fast == full && fast.id == full.id && fast.ts == full.ts,
              "fast path \(fast) differs from the full parser's \(full) on \(String(decoding: line, as: UTF8.self))")
    } catch {
        fatalError("FuzzWire: the fast path accepted a line the full parser rejects: \(String(decoding: line, as: UTF8.self))")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWire(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let chunkSize = input[0] == 0 ? size : Int(input[0] % 64) + 1
    var engine = Engine(app: apps[Int(input[1]) % apps.count])
    let stream = Array(input[2...])

    var framer = LineFramer(limit: lineLimit)
    var got: [[UInt8]] = []
    var tooLong = false
    var offset = 0
    while offset < stream.count, !tooLong {
        let end = min(stream.count, offset + chunkSize)
        let outcome = stream[offset..<end].withUnsafeBytes { chunk in
            framer.feed(chunk) { line in
                got.append(Array(line.bindMemory(to: UInt8.self)))
                checkFastPath(line.bindMemory(to: UInt8.self))
                let seq = engine.seq, digest = engine.digest
                do throws(InputError) {
                    switch try Wire.decode(line: line) {
                    case .ignorable, .command:
                        break
                    case .invalidCommand(_, let error):
                        checkErrorReply(error)
                    case .event(let envelope):
                        do throws(InputError) {
                            try engine.apply(envelope.event, at: Int64(offset))
                            check(engine.seq == seq + 1, "an applied event did not advance seq")
                        } catch {
                            check(engine.seq == seq && engine.digest == digest, "a rejected event changed the engine")
                            checkErrorReply(error)
                        }
                    }
                } catch {
                    checkErrorReply(error)
                }
                return true
            }
        }
        switch outcome {
        case .ok: break
        case .stopped: fatalError("FuzzWire: the framer stopped though the handler never asked")
        case .lineTooLong: tooLong = true
        }
        offset = end
    }
    let expected = referenceLines(stream[...], limit: lineLimit)
    check(tooLong == expected.tooLong, "framer over-limit \(tooLong), reference \(expected.tooLong)")
    check(got == expected.lines, "framer lines differ from the reference split")
    check(!tooLong || framer.partial.isEmpty, "framer kept bytes after an over-limit line")

    let scratch = Engine.fromScratch(profile: engine.profile, app: engine.app, state: engine.state, seq: engine.seq)
    check(scratch == engine.layoutJSON(), "incremental layout differs from the layout computed from scratch")
    return 0
}
