/// A trace file read into memory: its header, where its complete lines end, and
/// what follows them. A record is complete once its newline is written, so bytes
/// after the last newline are a cut tail (a crash, kill -9, a full disk): they are
/// reported, never read. A complete line that does not decode is damage, reported
/// by the cursor with its line number and byte offset.
public struct TraceFile: Sendable {
    public let bytes: [UInt8]
    public let header: TraceHeader
    /// Offset of the first record (just past the header's newline).
    public let recordsStart: Int
    /// Offset just past the last complete line.
    public let completeEnd: Int
    /// Readers that only read (info, glitches, report, replay) skip a complete line that is
    /// no record (`badRecords()` names them) rather than refuse the whole file; writers
    /// (rebase, slice) leave it false and refuse, so nothing is dropped from what they write.
    public var skipsBadRecords = false

    /// The unterminated bytes at the end, if any.
    public struct Cut: Sendable, Equatable {
        /// Byte offset where the incomplete line starts.
        public var offset: Int
        /// Its line number.
        public var line: Int
        public var length: Int
    }
    public var cut: Cut? {
        guard completeEnd < bytes.count else { return nil }
        // Counted only when there is a cut: a whole-file scan the replay itself does not need.
        let lines = bytes[..<completeEnd].reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
        return Cut(offset: completeEnd, line: lines + 1, length: bytes.count - completeEnd)
    }

    public init(bytes: [UInt8]) throws(TraceError) {
        self.bytes = bytes
        guard let headerEnd = bytes.firstIndex(of: 0x0A) else {
            throw TraceError(bytes.isEmpty ? "the file is empty" : "the header is incomplete: the file ends at byte \(bytes.count) before its first newline",
                             line: 1, offset: 0)
        }
        var headerLine = bytes[0..<headerEnd]
        if headerLine.last == 0x0D { headerLine = headerLine.dropLast() }
        header = try TraceHeader.decode(headerLine)
        recordsStart = headerEnd + 1
        completeEnd = (bytes.lastIndex(of: 0x0A) ?? headerEnd) + 1
    }

    public func cursor() -> TraceCursor { TraceCursor(file: self) }

    /// The complete lines that decode as no record, each with why, in order: what a reader
    /// that skips them names. One decoding pass, following the loads' context.
    public func badRecords() -> [TraceError] {
        var strict = self
        strict.skipsBadRecords = true
        var cursor = strict.cursor()
        while (try? cursor.next()) != nil {}
        return cursor.skipped
    }

    /// A warning for a cut tail, naming its byte offset; nil when the file ends cleanly.
    public var cutWarning: String? {
        guard let c = cut else { return nil }
        return "the trace is cut at byte \(c.offset) (line \(c.line), \(c.length) byte\(c.length == 1 ? "" : "s") of an incomplete record ignored)"
    }
}

/// One record with where it is in the file.
public struct TracedRecord: Sendable {
    public var record: TraceRecord
    /// 1-based line number.
    public var line: Int
    /// Byte offset of the line's start, and its length without the newline.
    public var offset: Int
    public var length: Int

    public init(record: TraceRecord, line: Int, offset: Int, length: Int) {
        self.record = record
        self.line = line
        self.offset = offset
        self.length = length
    }
}

/// Walks the complete records of a file in order. Blank lines are skipped.
public struct TraceCursor: Sendable {
    public let file: TraceFile
    public private(set) var offset: Int
    public private(set) var line: Int
    /// The profile and app in place, for a load record that keeps them.
    public private(set) var inPlace: LoadContext
    /// Lines skipped as no record (only when the file `skipsBadRecords`).
    public private(set) var skipped: [TraceError] = []

    init(file: TraceFile) {
        self.file = file
        offset = file.recordsStart
        line = 1
        inPlace = LoadContext(file.header)
    }

    public mutating func next() throws(TraceError) -> TracedRecord? {
        while true {
            do throws(TraceError) {
                return try nextLine()
            } catch {
                // A line that is no record: named and passed over, or the end of the reading.
                guard file.skipsBadRecords else { throw error }
                skipped.append(error)
            }
        }
    }

    /// The next complete line's record (the cursor past it either way).
    private mutating func nextLine() throws(TraceError) -> TracedRecord? {
        let end = file.completeEnd
        var position = offset
        var number = line
        defer { offset = position; line = number }
        let inPlace = self.inPlace
        let traced = try file.bytes.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(TraceError) -> TracedRecord? in
            while position < end {
                let lineStart = position
                var nl = lineStart
                while b[nl] != 0x0A { nl += 1 }
                number += 1
                position = nl + 1
                var lineEnd = nl
                if lineEnd > lineStart, b[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                if lineEnd == lineStart { continue }
                let text = UnsafeBufferPointer(rebasing: b[lineStart..<lineEnd])
                do throws(TraceError) {
                    let record = try TraceRecord.decode(text, inPlace: inPlace)
                    return TracedRecord(record: record, line: number, offset: lineStart, length: lineEnd - lineStart)
                } catch {
                    throw TraceError(error.message, line: number, offset: lineStart)
                }
            }
            return nil
        }
        if let traced, case .load = traced.record { self.inPlace = inPlace.following(traced.record) }
        return traced
    }
}
