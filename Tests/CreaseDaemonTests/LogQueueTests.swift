@testable import CreaseDaemon
@testable import CreaseDaemonCore
import Testing

/// The bounded queue behind non-blocking logging, without a loop.
@Suite struct LogQueueTests {
    let format = LogFormat(journal: false)

    func line(_ s: String) -> ArraySlice<UInt8> { Array((s + "\n").utf8)[...] }

    /// Everything the queue holds, written in chunks of `chunk` bytes.
    func drainAll(_ q: inout LogQueue, chunk: Int = 7) -> String {
        var out: [UInt8] = []
        while !q.isEmpty {
            q.drain { b in
                let n = min(chunk, b.count)
                out += b.prefix(n)
                return n
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func keepsOrderAcrossPartialWrites() {
        var q = LogQueue(limit: 1024, format: format)
        q.appendRemainder(Array("st of a line\n".utf8)[...])
        for i in 0..<5 { q.append(line("line \(i)")) }
        #expect(drainAll(&q) == "st of a line\nline 0\nline 1\nline 2\nline 3\nline 4\n")
        #expect(q.droppedTotal == 0)
    }

    @Test func dropsWholeLinesPastTheBoundAndSaysHowManyWhereTheyWere() {
        let limit = 100
        var q = LogQueue(limit: limit, format: format)
        var accepted: [String] = []
        for i in 0..<40 {
            let l = "event \(i) rejected"
            if q.append(line(l)) { accepted.append(l) }
            #expect(q.count <= limit)
        }
        #expect(q.droppedTotal == UInt64(40 - accepted.count))
        #expect(q.droppedTotal > 0)
        // stderr takes some; the next line that fits comes after the notice.
        q.drain { $0.count }
        let fits = q.append(line("after the gap"))
        #expect(fits)
        let text = drainAll(&q)
        #expect(text == "creased: warning: \(q.droppedTotal) log lines dropped: stderr was not being read\nafter the gap\n", "\(text)")
    }

    @Test func theNoticeAlsoComesWhenTheQueueDrainsWithNoNewLine() {
        var q = LogQueue(limit: 30, format: LogFormat(journal: true))
        let first = q.append(line("0123456789012345678901234"))
        let second = q.append(line("too much"))
        #expect(first && !second)
        #expect(drainAll(&q, chunk: 100) == "0123456789012345678901234\n<4>1 log line dropped: stderr was not being read\n")
        #expect(q.dropped == 0 && q.droppedTotal == 1)
    }
}
