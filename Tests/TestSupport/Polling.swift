#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Polls `condition` until it holds or `timeout` seconds pass, and says which: the one place
/// the tests wait by sleeping, between looks at something another process or thread changes
/// (a file the writer thread prunes, a counter the daemon keeps). The deadline is far beyond a
/// loaded machine's worst pause, not a measure of speed.
@discardableResult
public func pollUntil(timeout: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { return false }
        usleep(2000)
    }
    return true
}

/// As `pollUntil`, throwing `CheckTimeout` when the deadline passes.
public func waitUntil(_ what: String, timeout: Double = 60, _ condition: () throws -> Bool) throws {
    guard try pollUntil(timeout: timeout, condition) else { throw CheckTimeout(what: what) }
}

public struct CheckTimeout: Error { public let what: String }
