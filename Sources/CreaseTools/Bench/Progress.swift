#if canImport(Glibc)
import Glibc
#endif

/// Progress of a long run, on stderr: one line per phase, and on a terminal a live
/// fraction that rewrites itself at most a few times a second. `--quiet` silences it.
final class Progress: @unchecked Sendable {
    let enabled: Bool
    private let tty: Bool
    private var lastUpdateNs: UInt64 = 0
    private var live = false

    init(enabled: Bool) {
        self.enabled = enabled
        tty = isatty(2) == 1
    }

    func phase(_ text: String) {
        guard enabled else { return }
        write((live ? "\r\u{1B}[K" : "") + "bench: \(text)\n")
        live = false
    }

    /// `done` of `total`, shown on a terminal only.
    func update(_ text: String, done: Int, total: Int) {
        guard enabled, tty else { return }
        let now = Clock.now()
        guard now &- lastUpdateNs > 250_000_000 || done == total else { return }
        lastUpdateNs = now
        let percent = total > 0 ? done * 100 / total : 100
        write("\r\u{1B}[K       \(text): \(percent)%")
        live = true
    }

    private func write(_ s: String) {
        var bytes = Array(s.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
