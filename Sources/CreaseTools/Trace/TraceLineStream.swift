#if canImport(Glibc)
import Glibc
#endif
import CreaseCore
import CreaseSystem
import CreaseDaemonCore

/// A trace file read a chunk at a time, one complete line at a time, for `trace check`:
/// memory is bounded by the chunk and the longest line, not the file (a 3 GB file of NUL
/// padding once took 3.1 GB). A line longer than `lineLimit`, or the bytes after the last
/// newline, are the file's cut tail: reported with their offset, never decoded.
struct TraceLineStream {
    /// The longest line taken as a record: a load's manifest (16 MiB) with its state and profile.
    static let lineLimit = 64 << 20
    static let chunk = 4 << 20
    /// A chunk of zeros, for telling NUL padding apart at memcmp's speed.
    nonisolated(unsafe) static let zeros: UnsafeMutableRawPointer = calloc(chunk, 1)!

    struct Line {
        var bytes: ArraySlice<UInt8>
        /// 1-based line number and byte offset of its start.
        var number: Int
        var offset: Int
    }

    /// Where the complete lines end, and what follows them.
    struct Cut {
        var offset: Int
        var line: Int
        var length: Int
        /// Every byte of it is NUL: a file extended past its data by a crash.
        var allNUL: Bool
    }

    private let fd: Int32
    let size: Int
    private var buffer: [UInt8] = []
    /// File offset of `buffer[0]`.
    private var bufferOffset = 0
    private var start = 0
    /// `buffer` is searched for a newline up to here.
    private var searched = 0
    private var fileOffset = 0
    private var number = 0
    private(set) var cut: Cut?

    init(path: String) throws {
        do { (fd, size) = try InputFile.openRegular(path, what: "trace", limit: InputFile.traceLimit) } catch { throw UsageError(error.message) }
    }

    func close() { Glibc.close(fd) }

    /// The next complete line (a CR before its newline dropped), or nil at the end, where
    /// `cut` says what was left.
    mutating func next() -> Line? {
        while true {
            if let nl = newline() {
                number += 1
                var end = nl
                if end > start, buffer[end - 1] == 0x0D { end -= 1 }
                let line = Line(bytes: buffer[start..<end], number: number, offset: bufferOffset + start)
                start = nl + 1
                return line
            }
            // No newline in what is held: past the limit, the rest of the file is the cut tail.
            if buffer.count - start > TraceLineStream.lineLimit || !fill() {
                finish()
                return nil
            }
        }
    }

    /// The first newline at or after `start`, looked for with memchr in what was not yet
    /// searched (a long line is not searched again from its start after every chunk).
    private mutating func newline() -> Int? {
        let from = max(start, searched)
        guard from < buffer.count else { return nil }
        let found = buffer.withUnsafeBytes { raw -> Int? in
            guard let p = memchr(raw.baseAddress! + from, 0x0A, raw.count - from) else { return nil }
            return raw.baseAddress!.distance(to: UnsafeRawPointer(p))
        }
        searched = found.map { $0 + 1 } ?? buffer.count
        return found
    }

    /// Reads the next chunk after what is held (dropping the lines already returned).
    private mutating func fill() -> Bool {
        if start > 0 {
            buffer.removeFirst(start)
            bufferOffset += start
            searched = max(0, searched - start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: TraceLineStream.chunk)
        let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(fileOffset)) }
        guard n > 0 else { return false }
        fileOffset += n
        buffer += chunk[..<n]
        return true
    }

    /// What follows the last complete line: scanned a chunk at a time, never held whole.
    private mutating func finish() {
        let offset = bufferOffset + start
        guard offset < size else { return }
        var allNUL = true
        var at = offset
        var chunk = [UInt8](repeating: 0, count: TraceLineStream.chunk)
        while allNUL, at < size {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, min($0.count, size - at), off_t(at)) }
            guard n > 0 else { break }
            if chunk.withUnsafeBytes({ memcmp($0.baseAddress!, TraceLineStream.zeros, n) }) != 0 { allNUL = false }
            at += n
        }
        cut = Cut(offset: offset, line: number + 1, length: size - offset, allNUL: allNUL)
        buffer = []
    }
}
