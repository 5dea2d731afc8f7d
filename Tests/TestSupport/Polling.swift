#if canImport(Glibc)
import Glibc
#endif
import Foundation

// Test targets share no sources: Tests/CreaseToolsTests/Polling.swift is a link to this file.

/// Polls `condition` until it holds; the deadline is far beyond a loaded machine's worst
/// pause (a writer thread waiting on fdatasync behind builds), not a measure of speed.
func waitUntil(_ what: String, timeout: Double = 60, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition() {
        guard Date() < deadline else { throw CheckTimeout(what: what) }
        usleep(2000)
    }
}

struct CheckTimeout: Error { let what: String }
