/// A small writer for SVG and XHTML text: one element per line, indented by depth,
/// attributes in the order given, every text and attribute value escaped. The same
/// calls always produce the same bytes.
struct XMLWriter {
    private(set) var text = ""
    private var open: [String] = []

    typealias Attributes = [(String, String)]

    init(declaration: Bool = true) {
        if declaration { text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" }
    }

    /// Raw markup written as is (a doctype, say). The caller vouches for it.
    mutating func raw(_ s: String) { text += s + "\n" }

    /// A fragment written separately (its extent had to be known first), indented to fit here.
    mutating func append(_ fragment: XMLWriter) {
        let indent = String(repeating: " ", count: open.count)
        for line in fragment.text.split(separator: "\n") { text += indent + line + "\n" }
    }

    mutating func begin(_ name: String, _ attributes: Attributes = []) {
        line("<" + name + XMLWriter.attributes(attributes) + ">")
        open.append(name)
    }

    mutating func end() {
        let name = open.removeLast()
        line("</" + name + ">")
    }

    /// An element with no children.
    mutating func leaf(_ name: String, _ attributes: Attributes = []) {
        line("<" + name + XMLWriter.attributes(attributes) + "/>")
    }

    /// An element holding only text.
    mutating func element(_ name: String, _ attributes: Attributes = [], text content: String) {
        line("<" + name + XMLWriter.attributes(attributes) + ">" + XMLWriter.escape(content) + "</" + name + ">")
    }

    /// Closes what is still open and returns the document.
    mutating func finish() -> String {
        while !open.isEmpty { end() }
        return text
    }

    private mutating func line(_ s: String) {
        text += String(repeating: " ", count: open.count) + s + "\n"
    }

    static func attributes(_ attributes: Attributes) -> String {
        var s = ""
        for (k, v) in attributes { s += " " + k + "=\"" + escape(v) + "\"" }
        return s
    }

    /// Escapes the five XML specials, and replaces what XML 1.0 cannot carry at all
    /// (control characters other than tab, newline and return; unpaired surrogates cannot
    /// occur in a Swift String) with U+FFFD, so a hostile title still yields a valid file.
    static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            switch u {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t": out += "&#9;"
            case "\n": out += "&#10;"
            case "\r": out += "&#13;"
            default:
                if u.value < 0x20 || u.value == 0xFFFE || u.value == 0xFFFF { out += "\u{FFFD}" } else { out.unicodeScalars.append(u) }
            }
        }
        return out
    }
}

/// Numbers in drawings: rounded to 1/100 and printed without a trailing ".0", so
/// coordinates are short and the same value always prints the same way.
func num(_ v: Double) -> String {
    guard v.isFinite else { return "0" }
    let r = (v * 100).rounded() / 100
    if r == r.rounded(), abs(r) < 1e15 { return String(Int(r)) }
    return String(r)
}

/// Text measurement without a font engine: an estimate per character that errs wide, so
/// fitted text never spills out of its box in the fonts the drawings name.
enum TextFit {
    /// Average advance of DejaVu Sans and DejaVu Sans Mono (~0.6 em), rounded up.
    static let emPerChar = 0.62

    static func width(_ s: String, size: Double) -> Double { Double(s.count) * size * emPerChar }

    /// `s`, cut with an ellipsis so that it fits `width` at `size`; empty if not even one
    /// character and the ellipsis fit.
    static func fit(_ s: String, width: Double, size: Double) -> String {
        let room = Int((width / (size * emPerChar)).rounded(.down))
        if s.count <= room { return s }
        if room < 2 { return "" }
        return String(s.prefix(room - 1)) + "…"
    }

    /// Splits `s` into lines of at most `width` at `size`, breaking at spaces (and
    /// cutting words that are longer than a line).
    static func wrap(_ s: String, width: Double, size: Double) -> [String] {
        let room = max(1, Int((width / (size * emPerChar)).rounded(.down)))
        var lines: [String] = []
        var current = ""
        for word in s.split(separator: " ", omittingEmptySubsequences: true) {
            var w = String(word)
            while w.count > room {
                if !current.isEmpty { lines.append(current); current = "" }
                lines.append(String(w.prefix(room)))
                w = String(w.dropFirst(room))
            }
            if current.isEmpty { current = w } else if current.count + 1 + w.count <= room { current += " " + w } else {
                lines.append(current)
                current = w
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// A symbol name (`arrow.up.arrow.down`) broken after its dots into at most `lines`
    /// lines of `width`; what does not fit ends in an ellipsis.
    static func wrapSymbol(_ s: String, width: Double, size: Double, lines maxLines: Int) -> [String] {
        let room = Int((width / (size * emPerChar)).rounded(.down))
        var parts: [String] = []
        var part = ""
        for c in s {
            part.append(c)
            if c == "." { parts.append(part); part = "" }
        }
        if !part.isEmpty { parts.append(part) }
        // A part longer than a line (`magnifyingglass`) is cut into lines of its own.
        parts = parts.flatMap { p in
            stride(from: 0, to: p.count, by: max(1, room)).map { String(p.dropFirst($0).prefix(max(1, room))) }
        }
        var lines: [String] = []
        for p in parts {
            if let last = lines.last, last.count + p.count <= room { lines[lines.count - 1] = last + p } else { lines.append(p) }
        }
        let limit = max(1, maxLines)
        if lines.count > limit {
            lines = Array(lines.prefix(limit))
            let last = lines[limit - 1]
            lines[limit - 1] = last.count < room ? last + "…" : String(last.prefix(max(0, room - 1))) + "…"
        }
        return lines.map { fit($0, width: width, size: size) }
    }
}
