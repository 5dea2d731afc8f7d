/// Ids and JSON member names are compared by their UTF-8 bytes, as every JSON consumer a
/// rig uses compares them, not by Swift's `String` equality (Unicode canonical
/// equivalence, under which "café" composed and decomposed are one string).
extension String {
    @inline(__always)
    public func sameBytes(_ other: String) -> Bool {
        utf8.count == other.utf8.count && utf8.elementsEqual(other.utf8)
    }
}
