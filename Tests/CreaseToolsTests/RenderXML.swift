import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A parsed XML document for the render tests: libxml2's parser (through Foundation's
/// XMLParser) builds a small tree, and any well-formedness error fails the parse.
final class XMLTree {
    let name: String
    let attributes: [String: String]
    private(set) var children: [XMLTree] = []
    fileprivate(set) var text = ""

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    subscript(_ attribute: String) -> String? { attributes[attribute] }

    /// Every element below this one (depth first, document order) that matches.
    func all(where match: (XMLTree) -> Bool) -> [XMLTree] {
        var out: [XMLTree] = []
        for c in children {
            if match(c) { out.append(c) }
            out += c.all(where: match)
        }
        return out
    }

    func all(_ name: String, class cls: String? = nil) -> [XMLTree] {
        all { $0.name == name && (cls == nil || $0["class"] == cls) }
    }

    func first(id: String) -> XMLTree? { all { $0["id"] == id }.first }

    /// The text of this element and everything in it, without the indentation between elements.
    var allText: String { text.trimmingCharacters(in: .whitespacesAndNewlines) + children.map(\.allText).joined() }

    struct ParseError: Error, CustomStringConvertible {
        let description: String
    }

    static func parse(_ text: String) throws -> XMLTree {
        let parser = XMLParser(data: Data(text.utf8))
        let builder = Builder()
        parser.delegate = builder
        parser.shouldProcessNamespaces = false
        let ok = parser.parse()
        // On Linux, parse() can return true with an error recorded (an unclosed element):
        // every signal counts.
        if !ok || parser.parserError != nil || builder.error != nil {
            let reason = builder.error.map { "\($0)" } ?? parser.parserError.map { "\($0)" } ?? "unknown"
            throw ParseError(description: "not well-formed XML at line \(parser.lineNumber): \(reason)")
        }
        guard let root = builder.root, builder.stack.isEmpty else { throw ParseError(description: "no complete root element") }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: XMLTree?
        var stack: [XMLTree] = []
        var error: Error?

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let node = XMLTree(name: elementName, attributes: attributes)
            if let parent = stack.last { parent.children.append(node) } else if root == nil { root = node } else {
                error = ParseError(description: "a second root element <\(elementName)>")
            }
            stack.append(node)
        }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            _ = stack.popLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }

        func parser(_ parser: XMLParser, foundCDATA CDATABlock: Data) {
            stack.last?.text += String(decoding: CDATABlock, as: UTF8.self)
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            error = parseError
        }
    }
}
