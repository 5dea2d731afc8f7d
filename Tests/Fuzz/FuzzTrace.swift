// libFuzzer harness: the trace reader (TraceFile, TraceCursor, TraceRecord) and
// replay with verification.
//
// Built by scripts/fuzz against CreaseCore compiled with the fuzzer and address
// sanitizer instrumentation.
//
// Input: a trace file. Checked on every input, besides "no crash, no sanitizer report":
// - every record read re-encodes (TraceEncoding.appendRecord) to a line that decodes
//   to the same record;
// - the file cut anywhere after its header (contract section 6: a crash or a full
//   disk) still opens, and reads as a prefix of the whole file's records, damaged
//   no earlier than the whole file is;
// - replay, verifying or not, ends in a result or a TraceError.

import CreaseCore

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("FuzzTrace: \(message())") }
}

/// The records of `file` up to the first damaged line, and that line's number.
private func read(_ file: TraceFile) -> (records: [TraceRecord], damagedAt: Int?) {
    var records: [TraceRecord] = []
    var cursor = file.cursor()
    do throws(TraceError) {
        while let r = try cursor.next() { records.append(r.record) }
        return (records, nil)
    } catch {
        return (records, error.line)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTrace(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let file: TraceFile
    do throws(TraceError) { file = try TraceFile(bytes: bytes) } catch { return 0 }
    let whole = read(file)

    // A load record leaves out what it kept: it decodes against what was in place before it.
    var inPlace = LoadContext(file.header)
    for record in whole.records {
        var line: [UInt8] = []
        TraceEncoding.appendRecord(record, to: &line)
        if line.last == 0x0A { line.removeLast() }
        let context = inPlace
        inPlace = inPlace.following(record)
        do throws(TraceError) {
            let again = try line.withUnsafeBufferPointer { (b: UnsafeBufferPointer<UInt8>) throws(TraceError) in try TraceRecord.decode(b, inPlace: context) }
            check(again == record, "a record does not survive re-encoding: \(String(decoding: line, as: UTF8.self))")
        } catch {
            fatalError("FuzzTrace: a re-encoded record does not decode (\(error)): \(String(decoding: line, as: UTF8.self))")
        }
    }

    // Cut at a point the input picks (its last byte spreads it over the records).
    let span = size - file.recordsStart
    let cutAt = file.recordsStart + (span == 0 ? 0 : (Int(bytes[size - 1]) &* 7919 &+ size) % (span + 1))
    let cutFile: TraceFile
    do throws(TraceError) { cutFile = try TraceFile(bytes: Array(bytes[..<cutAt])) } catch {
        fatalError("FuzzTrace: the file cut at byte \(cutAt) no longer opens: \(error)")
    }
    let cut = read(cutFile)
    check(cut.records.count <= whole.records.count && Array(whole.records.prefix(cut.records.count)) == cut.records,
          "the file cut at byte \(cutAt) reads records the whole file does not")
    if let line = cut.damagedAt {
        check(whole.damagedAt == line, "the file cut at byte \(cutAt) is damaged at line \(line), the whole file at \(whole.damagedAt.map(String.init) ?? "none")")
    }

    for verify in [true, false] {
        do throws(TraceError) { _ = try TraceReplay.run(file, verify: verify) } catch {}
    }
    return 0
}
