import CreaseCore

/// The lines simulated clients send: events a rig streams, commands, and lines the daemon
/// must refuse. Each is a pure function of its arguments, so a schedule's bytes are its seed's.
enum SimulatedLines {
    static func event(_ rng: inout SplitMix64, id: Int?) -> String {
        let tail = id.map { #","id":\#($0)"# } ?? ""
        let roll = rng.next() % 100
        switch roll {
        case ..<62:
            // Mostly whole and half degrees, now and then a reading just past a stop.
            let angle = Double(rng.next() % 3640) / 20 - 1
            return #"{"event":"hinge","angle":\#(angle)\#(tail)}"#
        case ..<70:
            let values = ["portrait", "landscapeLeft", "landscapeRight", "portraitUpsideDown"]
            return #"{"event":"orientation","value":"\#(values[Int(rng.next() % 4)])"\#(tail)}"#
        case ..<78: return #"{"event":"keyboard","visible":\#(rng.next() % 2 == 0)\#(tail)}"#
        case ..<83: return #"{"event":"pip","active":\#(rng.next() % 2 == 0)\#(tail)}"#
        case ..<87: return #"{"event":"liveActivities","count":\#(rng.next() % 4)\#(tail)}"#
        case ..<91:
            let sides = ["left", "right", "none"]
            return #"{"event":"splitView","side":"\#(sides[Int(rng.next() % 3)])"\#(tail)}"#
        case ..<94: return #"{"event":"reduceTransparency","enabled":\#(rng.next() % 2 == 0)\#(tail)}"#
        case ..<97:
            let tabs = ["browse", "library", "search", "nope"]
            return #"{"event":"select","tab":"\#(tabs[Int(rng.next() % 4)])"\#(tail)}"#
        default: return #"{"event":"layoutDirection","value":"\#(rng.next() % 2 == 0 ? "rtl" : "ltr")"\#(tail)}"#
        }
    }

    /// A command with id `id` (`kind` as `SimStep.command` names them).
    static func command(_ kind: Int, id: Int) -> String {
        switch kind % 10 {
        case 0: #"{"cmd":"sync","id":\#(id)}"#
        case 1: #"{"cmd":"stats","id":\#(id)}"#
        case 2: #"{"cmd":"mark","label":"sim \#(id)","id":\#(id)}"#
        case 3: #"{"cmd":"hello","id":\#(id)}"#
        case 4: #"{"cmd":"layout","id":\#(id)}"#
        case 5: #"{"cmd":"observe","observed":{"barAxis":"vertical"},"id":\#(id)}"#
        case 6: #"{"cmd":"subscribe","topics":["stats"],"id":\#(id)}"#
        case 7: #"{"cmd":"unsubscribe","topics":["layout"],"id":\#(id)}"#
        case 8: #"{"cmd":"stats","reset":true,"id":\#(id)}"#
        default: #"{"cmd":"trace","action":"rotate","id":\#(id)}"#
        }
    }

    static func subscribe(topics bits: Int, id: Int) -> String {
        var topics = ["layout"]
        for (bit, topic) in ["glitches", "stats", "diagnostics", "conformance"].enumerated() where bits & (1 << bit) != 0 {
            topics.append(topic)
        }
        return #"{"cmd":"subscribe","topics":[\#(topics.map { "\"\($0)\"" }.joined(separator: ","))],"id":\#(id)}"#
    }

    /// A line to refuse, and whether it carries an id (its error reply then names it).
    static func malformed(_ kind: Int, id: Int) -> (line: String, carriesID: Bool) {
        switch kind % 4 {
        case 0: (#"{"event":"hinge","#, false)
        case 1: (#"{"event":"nope","id":\#(id)}"#, true)
        case 2: (#"{"event":"hinge","angle":"wide","id":\#(id)}"#, true)
        default: ("[1,2]", false)
        }
    }
}
