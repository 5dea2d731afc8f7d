// libFuzzer harness: the manifest decoder (App.decode), then the engine driven by
// the app it returns.
//
// Built by scripts/fuzz against CreaseCore compiled with the fuzzer and address
// sanitizer instrumentation.
//
// Input: a manifest (JSON), optionally followed by a NUL byte and an event script:
// each script byte picks one event among the device events and the select, push
// and present events naming every tab, screen and sheet of the app.
// Checked on every input, besides "no crash, no sanitizer report":
// - a rejected manifest's error names a field (unless the JSON is bad or not an
//   object), and its reply is valid JSON;
// - an accepted one lays out; each event applies (seq + 1) or is rejected leaving
//   seq and digest unchanged;
// - every layout line is valid JSON, and no manifest id appears twice among the
//   bars' items and overflow menus (contract section 4: one place at most);
// - the final incremental layout equals the layout computed from scratch.

import CreaseCore

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("FuzzManifest: \(message())") }
}

/// Every kind's representative values (`EventKind.values`), and the edges those skip: angles
/// near the thresholds, a zero and a tall keyboard, pushing a stack's root, ids of any screen.
private func vocabulary(_ app: App) -> [Event] {
    var events = EventKind.allCases.flatMap { $0.values(app: app, profile: .builtin) }
    events += [.hinge(angle: 30), .hinge(angle: 150), .keyboard(visible: true, height: 0), .keyboard(visible: true, height: 400)]
    events += app.screens.map { .push(screen: $0.id) }
    return events
}

/// Parses a layout line and checks it places each manifest id at most once.
private func checkLayout(_ line: [UInt8]) {
    let layout: JSONValue
    do { layout = try JSON.parse(line) } catch {
        fatalError("FuzzManifest: layout is not JSON (\(error)): \(String(decoding: line.prefix(400), as: UTF8.self))")
    }
    guard case .array(let bars)? = layout["bars"] else { fatalError("FuzzManifest: layout without bars") }
    var seen: Set<String> = []
    for bar in bars {
        var ids: [String] = []
        if case .array(let items)? = bar["items"] {
            for item in items { if case .string(let id)? = item["id"] { ids.append(id) } }
        }
        if case .array(let overflow)? = bar["overflow"] {
            for o in overflow { if case .string(let id) = o { ids.append(id) } }
        }
        for id in ids where !id.hasPrefix("system.") {
            check(seen.insert(id).inserted, "id \"\(id)\" is placed twice in \(String(decoding: line, as: UTF8.self))")
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let split = input.firstIndex(of: 0) ?? size
    let manifest = Array(input[..<split])
    let script = split < size ? Array(input[(split + 1)...]) : []

    let app: App
    do throws(InputError) {
        app = try App.decode(json: manifest)
    } catch {
        // Only two errors have no field to name: bad JSON, and a manifest that is not an object.
        let topLevel = error.code == .badJSON || (error.code == .wrongType && error.message.hasPrefix("manifest must be"))
        check(error.field != nil || topLevel, "manifest error names no field: \(error)")
        var out: [UInt8] = []
        Reply.appendError(error, to: &out)
        check((try? JSON.parse(out.dropLast())) != nil, "error reply is not JSON")
        return 0
    }
    var engine = Engine(app: app)
    checkLayout(engine.layoutJSON())
    let events = vocabulary(app)
    for (i, b) in script.prefix(64).enumerated() {
        let seq = engine.seq, digest = engine.digest
        do throws(InputError) {
            // 10 ms apart on the engine's clock (motion samples need one).
            try engine.apply(events[Int(b) % events.count], at: Int64(i) * 10_000_000)
            check(engine.seq == seq + 1, "an applied event did not advance seq")
            checkLayout(engine.layoutJSON())
        } catch {
            check(engine.seq == seq && engine.digest == digest, "a rejected event changed the engine")
        }
    }
    let scratch = Engine.fromScratch(profile: engine.profile, app: engine.app, state: engine.state, seq: engine.seq)
    check(scratch == engine.layoutJSON(), "incremental layout differs from the layout computed from scratch")
    return 0
}
