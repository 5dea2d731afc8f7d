#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Polls `condition` until it holds; the deadline is far beyond a loaded machine's worst
/// pause (a writer thread waiting on fdatasync behind builds), not a measure of speed.
public func waitUntil(_ what: String, timeout: Double = 60, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw CheckTimeout(what: what) }
        usleep(2000)
    }
}

public struct CheckTimeout: Error { public let what: String }
