#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
import Foundation
import CreaseTestSupport
import Testing

/// Runs a program that must finish by itself; one still running after `seconds` is killed
/// and reported as hung (status nil), so a regression fails the test instead of stalling it.
func runBounded(_ path: String, _ args: [String], in scratch: Scratch, seconds: Double = 20) throws -> (finished: Finished, hung: Bool) {
    let p = try launch(path, args, in: scratch)
    pollUntil(timeout: seconds) { !p.process.isRunning }
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

/// What `-o` does to what a path names: as root, `-o /dev/null` once turned /dev/null
/// into a regular file and a symbolic link was replaced instead of followed. The device here
/// is made in the test's own directory (the numbers of the null device), never /dev's.
@Suite struct SafeOutputTests {
    func render(_ output: String, in scratch: Scratch) throws -> Finished {
        try runBounded(Built.crease, ["render", "-o", output], in: scratch).finished
    }

    func kind(_ path: String) -> mode_t {
        var st = stat()
        return lstat(path, &st) == 0 ? st.st_mode & S_IFMT : 0
    }

    @Test func aDeviceOrFifoIsWrittenInPlaceALinkIsFollowed() throws {
        let scratch = Scratch()
        let device = "\(scratch.path)/null"
        // makedev(1, 3) in the kernel's encoding (major << 8 | minor for numbers this small).
        #expect(mknod(device, S_IFCHR | 0o666, dev_t(1 << 8 | 3)) == 0)
        let r = try render(device, in: scratch)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(kind(device) == S_IFCHR, "the device was replaced")

        let fifo = "\(scratch.path)/pipe"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = FifoReader(path: fifo)
        let f = try render(fifo, in: scratch)
        #expect(f.status == 0, "\(f.stderr)")
        #expect(reader.wait().contains("<svg"))
        #expect(kind(fifo) == S_IFIFO)

        let target = "\(scratch.path)/frame.svg", link = "\(scratch.path)/latest.svg"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("old".utf8)))
        #expect(symlink(target, link) == 0)
        #expect(try render(link, in: scratch).status == 0)
        #expect(kind(link) == S_IFLNK, "the link was replaced")
        #expect(try String(contentsOfFile: target, encoding: .utf8).contains("<svg"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }

    @Test func aDirectoryOrALinkToNothingIsRefused() throws {
        let scratch = Scratch()
        let dangling = "\(scratch.path)/gone.svg"
        #expect(symlink("\(scratch.path)/missing/nothing.svg", dangling) == 0)
        for (path, message) in [(scratch.path, "it is a directory"), (dangling, "symbolic link to nothing")] {
            let r = try render(path, in: scratch)
            #expect(r.status == 2 && r.stderr.contains(message), "\(r.stderr)")
        }
        #expect(kind(dangling) == S_IFLNK)
    }
}

/// Reads a FIFO to its end on a thread of its own.
final class FifoReader: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var text = ""
    init(path: String) {
        Thread { [self] in
            let fd = open(path, O_RDONLY)
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while fd >= 0 {
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 { break }
                bytes += chunk[0..<n]
            }
            if fd >= 0 { close(fd) }
            text = String(decoding: bytes, as: UTF8.self)
            done.signal()
        }.start()
    }
    func wait() -> String {
        _ = done.wait(timeout: .now() + 20)
        return text
    }
}

/// The limits as the tests know them (the product's `InputFile`), kept apart so a change shows.
enum InputFileLimits {
    static let manifest = 16 << 20
}
