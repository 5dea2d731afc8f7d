/// Delta debugging (Zeller and Hildebrandt's ddmin): the smallest subsequence of a list for
/// which a test still holds, found by removing chunks. Split the list in `n` chunks; keep a
/// chunk alone if the test holds for it, else keep everything but one chunk if the test
/// holds for that; else split finer (`n` doubles) until chunks are single items. The result
/// is 1-minimal: removing any one more item makes the test fail. Order is kept.
public enum DeltaDebugging {
    /// What the search has done so far: tests run and the size of the smallest list that held.
    public struct Progress: Sendable, Equatable {
        public var tests: Int
        public var size: Int
        public var granularity: Int
    }

    /// `test(items)` should hold; if it does not, `items` comes back unchanged. The empty
    /// list is tried first. `test` is called with lists in `items`' order.
    public static func minimize<T, E: Error>(_ items: [T], progress: (Progress) -> Void = { _ in },
                                             test: ([T]) throws(E) -> Bool) throws(E) -> [T] {
        var tests = 0
        func holds(_ candidate: [T]) throws(E) -> Bool {
            tests += 1
            return try test(candidate)
        }
        if try holds([]) { return [] }
        var current = items
        var n = 2
        while current.count >= 2 {
            let chunks = split(current.count, into: n)
            var reduced = false
            for r in chunks where r.count < current.count {
                let subset = Array(current[r])
                if try holds(subset) {
                    current = subset
                    n = 2
                    reduced = true
                    break
                }
            }
            if !reduced, n > 2 {
                for r in chunks {
                    let complement = Array(current[..<r.lowerBound] + current[r.upperBound...])
                    if try holds(complement) {
                        current = complement
                        n = max(n - 1, 2)
                        reduced = true
                        break
                    }
                }
            }
            progress(Progress(tests: tests, size: current.count, granularity: n))
            if !reduced {
                if n >= current.count { break }
                n = min(n * 2, current.count)
            }
        }
        return current
    }

    /// `count` indices in `n` contiguous ranges whose sizes differ by at most one.
    static func split(_ count: Int, into n: Int) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 0
        for i in 0..<n {
            let end = start + (count - start) / (n - i)
            if end > start { out.append(start..<end) }
            start = end
        }
        return out
    }
}
