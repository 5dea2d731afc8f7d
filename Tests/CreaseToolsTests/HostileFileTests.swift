#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import Foundation
import Testing

/// Runs a program that must finish by itself; one still running after `seconds` is killed
/// and reported as hung (status nil), so a regression fails the test instead of stalling it.
func runBounded(_ path: String, _ args: [String], in scratch: Scratch, seconds: Double = 20) throws -> (finished: Finished, hung: Bool) {
    let p = try launch(path, args, in: scratch)
    let deadline = Date().addingTimeInterval(seconds)
    while p.process.isRunning, Date() < deadline { usleep(10_000) }
    let hung = p.process.isRunning
    if hung { kill(p.process.processIdentifier, SIGKILL) }
    p.process.waitUntilExit()
    return (p.finish(), hung)
}

/// Files Crease reads are regular files with a size bound: a FIFO named like a trace once
/// hung `crease trace index` for ever, a link to /dev/zero grew it to 7.5 GB, and `--app`
/// on a FIFO blocked. None of these tests points at /dev: the hostile files are made here.
@Suite struct HostileFileTests {
    @Test func aFifoOrDirectoryNamedLikeATraceIsSkippedWithItsKind() throws {
        let scratch = Scratch()
        let dir = "\(scratch.path)/traces"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        #expect(mkfifo("\(dir)/stuck.jsonl", 0o600) == 0)
        #expect(symlink("\(dir)/stuck.jsonl", "\(dir)/link.jsonl") == 0)
        let r = try runBounded(Built.crease, ["trace", "index", dir], in: scratch)
        #expect(!r.hung, "crease trace index hung on a FIFO")
        #expect(r.finished.stderr.contains("skipped \(dir)/stuck.jsonl: \(dir)/stuck.jsonl is a FIFO, not a regular file"), "\(r.finished.stderr)")
        #expect(r.finished.stderr.contains("skipped \(dir)/link.jsonl"))
        // The same file given to a command that reads one trace is an input error (exit 2).
        for command in [["trace", "info"], ["trace", "check"], ["replay", "--verify"], ["trace", "glitches"]] {
            let one = try runBounded(Built.crease, command + ["\(dir)/stuck.jsonl"], in: scratch)
            #expect(!one.hung, "\(command) hung on a FIFO")
            #expect(one.finished.status == 2 && one.finished.stderr.contains("is a FIFO, not a regular file"), "\(command): \(one.finished.stderr)")
        }
    }

    @Test func anAppOrProfileThatIsNoRegularFileOrTooLargeIsRefused() throws {
        let scratch = Scratch()
        let fifo = "\(scratch.path)/app.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let huge = "\(scratch.path)/huge.json"
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, off_t(InputFileLimits.manifest + 1)) == 0)  // sparse: nothing is written
        let cases: [([String], String)] = [
            (["layout", "--app", fifo], "is a FIFO, not a regular file"),
            (["layout", "--app", scratch.path], "is a directory, not a regular file"),
            (["layout", "--app", huge], "is over the limit of 16777216 bytes for app manifests"),
            (["layout", "--profile", huge], "is over the limit of 1048576 bytes for profiles"),
        ]
        for (args, message) in cases {
            let r = try runBounded(Built.crease, args, in: scratch)
            #expect(!r.hung, "\(args) hung")
            #expect(r.finished.status == 2 && r.finished.stderr.contains(message), "\(args): \(r.finished.stderr)")
        }
        // The daemon refuses at start, with the same words, and exits 1.
        for (app, message) in [(fifo, "is a FIFO, not a regular file"), (huge, "is over the limit of 16777216 bytes for app manifests")] {
            let r = try runBounded(Built.creased, ["--socket", "\(scratch.path)/d.sock", "--no-trace", "--app", app], in: scratch)
            #expect(!r.hung, "creased --app hung")
            #expect(r.finished.status == 1 && r.finished.stderr.contains(message), "\(r.finished.stderr)")
        }
    }
}

/// The limits as the tests know them (the product's `InputFile`), kept apart so a change shows.
enum InputFileLimits {
    static let manifest = 16 << 20
}
