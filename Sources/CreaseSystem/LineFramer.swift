import CreaseCore
#if canImport(Glibc)
import Glibc
#endif

/// Splits a byte stream into NDJSON lines, with a length limit.
///
/// Complete lines inside a chunk are handed out in place, without copying. Only a
/// trailing partial line is copied into `partial`; it was already scanned, so when
/// the next chunk arrives only the new bytes are searched for a newline: no byte is
/// ever scanned twice, however the line is split.
public struct LineFramer {
    public static let defaultLimit = LineLimit.standard

    public enum Outcome: Equatable {
        /// Every complete line was handed out; a partial line may be held back.
        case ok
        /// The handler asked to stop; the rest of the chunk is held (`held`), not looked at
        /// yet: `resume` hands out its lines later.
        case stopped
        /// A line (with or without its newline yet) exceeded the limit. The stream
        /// cannot be resynchronised: the connection must be closed.
        case lineTooLong(length: Int)
    }

    /// The longest accepted line, in bytes, not counting its newline.
    public let limit: Int
    /// Bytes of the current line received so far, all scanned already.
    // Public and settable: `feed` is inlined into the daemon's read callback across the module.
    public var partial: [UInt8] = []
    /// Bytes looked at by the newline search, in total (one per byte received).
    public var scannedBytes = 0
    /// Bytes received after a line whose handler asked to stop, not looked at yet.
    public var held: [UInt8] = []

    public init(limit: Int = LineFramer.defaultLimit) {
        self.limit = limit
    }

    /// Feeds one chunk. `onLine` gets each complete line without its newline (and
    /// without a trailing `\r`); the bytes are valid only during the call. Return
    /// false from `onLine` to stop.
    @inlinable
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, onLine: (UnsafeRawBufferPointer) -> Bool) -> Outcome {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return .ok }
        var start = 0
        while start < chunk.count {
            let remaining = chunk.count - start
            guard let nl = memchr(base + start, 0x0A, remaining) else {
                scannedBytes += remaining
                let total = partial.count + remaining
                if total > limit { partial.removeAll(); return .lineTooLong(length: total) }
                partial.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: remaining))
                return .ok
            }
            let end = base.distance(to: UnsafeRawPointer(nl))
            scannedBytes += end - start + 1
            let keepGoing: Bool
            if partial.isEmpty {
                if end - start > limit { return .lineTooLong(length: end - start) }
                keepGoing = onLine(Self.trimmed(UnsafeRawBufferPointer(start: base + start, count: end - start)))
            } else {
                let total = partial.count + end - start
                if total > limit { partial.removeAll(); return .lineTooLong(length: total) }
                partial.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: end - start))
                keepGoing = partial.withUnsafeBytes { onLine(Self.trimmed($0)) }
                partial.removeAll(keepingCapacity: partial.capacity <= 4096)
            }
            start = end + 1
            if !keepGoing {
                if start < chunk.count { held.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: chunk.count - start)) }
                return .stopped
            }
        }
        return .ok
    }

    /// Feeds what a stop held back, as if it had just arrived (and may hold some again).
    @inlinable
    public mutating func resume(onLine: (UnsafeRawBufferPointer) -> Bool) -> Outcome {
        guard !held.isEmpty else { return .ok }
        let pending = held
        held = []
        return pending.withUnsafeBytes { feed($0, onLine: onLine) }
    }

    @inlinable @inline(__always)
    public static func trimmed(_ line: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        if line.count > 0, line[line.count - 1] == 0x0D {
            return UnsafeRawBufferPointer(rebasing: line[0..<(line.count - 1)])
        }
        return line
    }
}
