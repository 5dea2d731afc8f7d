/// Writes bytes into raw storage, growing it by doubling: no per-token uniqueness or
/// capacity checks of an Array. Its storage is allocated by `init(capacity:)` and freed
/// by `free()`, or lent by an `EncoderStorage`, which takes it back with `keep`. A writer
/// lent marks storage also marks where each layout number it writes begins and ends (two
/// offsets per number, in `marks`), for `Patch`.
struct RawWriter {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private(set) var capacity: Int
    private(set) var marks: UnsafeMutablePointer<Int>?
    private(set) var markCount = 0
    private(set) var markCapacity = 0

    init(capacity: Int) {
        base = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    /// A writer over `capacity` bytes of storage it does not own (never to grow or be freed),
    /// marking nothing: to write over bytes already written.
    init(over storage: UnsafeMutablePointer<UInt8>, capacity: Int) {
        base = storage
        self.capacity = capacity
    }

    init(storage: UnsafeMutablePointer<UInt8>, capacity: Int, marks: UnsafeMutablePointer<Int>, markCapacity: Int) {
        base = storage
        self.capacity = capacity
        self.marks = marks
        self.markCapacity = markCapacity
    }

    func free() { base.deallocate() }

    func array() -> [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    @inline(__always) mutating func reserve(_ n: Int) {
        if count &+ n > capacity { grow(to: count &+ n) }
    }

    @inline(never) private mutating func grow(to needed: Int) {
        let bigger = max(needed, capacity * 2)
        let fresh = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
        fresh.update(from: base, count: count)
        base.deallocate()
        base = fresh
        capacity = bigger
    }

    /// Room for `n` bytes and `k` marks (a marking writer's), with one check for both.
    @inline(__always) mutating func reserve(_ n: Int, marks k: Int) {
        if count &+ n > capacity || markCount &+ k > markCapacity { grow(bytes: n, marks: k) }
    }

    @inline(never) private mutating func grow(bytes n: Int, marks k: Int) {
        reserve(n)
        reserveMarks(k)
    }

    /// Room for `n` marks (two per number), when this writer marks.
    @inline(__always) mutating func reserveMarks(_ n: Int) {
        if marks != nil, markCount &+ n > markCapacity { growMarks(to: markCount &+ n) }
    }

    @inline(never) private mutating func growMarks(to needed: Int) {
        let bigger = max(needed, markCapacity * 2)
        let fresh = UnsafeMutablePointer<Int>.allocate(capacity: bigger)
        fresh.update(from: marks!, count: markCount)
        marks!.deallocate()
        marks = fresh
        markCapacity = bigger
    }

    /// Marks of numbers copied from an earlier body, `shift` bytes further on here.
    @inline(__always) mutating func carryMarks(_ from: UnsafePointer<Int>, count n: Int, shift: Int) {
        guard n > 0 else { return }
        reserveMarks(n)
        RawWriter.shiftMarks(from, n, by: shift, to: marks! + markCount)
        markCount &+= n
    }

    /// Copies `n` marks (an even count: two per number) adding `shift`, a number's pair at a
    /// time in one vector add: most runs between changed numbers are a few numbers long, too
    /// short for the loop the compiler vectorizes by itself.
    @inline(__always) static func shiftMarks(_ from: UnsafePointer<Int>, _ n: Int, by shift: Int, to: UnsafeMutablePointer<Int>) {
        let source = UnsafeRawPointer(from), target = UnsafeMutableRawPointer(to)
        let add = SIMD2<Int>(repeating: shift)
        var i = 0
        while i < n {
            target.storeBytes(of: source.loadUnaligned(fromByteOffset: i &* 8, as: SIMD2<Int>.self) &+ add, toByteOffset: i &* 8, as: SIMD2<Int>.self)
            i &+= 2
        }
    }

    /// A patch's step, within room `Patch.begin` made: `n` bytes of an earlier body and the
    /// marks of the numbers among them (`shift` bytes further on here), then a number.
    @inline(__always) mutating func splice(_ bytes: UnsafePointer<UInt8>, count n: Int, marks from: UnsafePointer<Int>, markCount k: Int,
                                           shift: Int, then v: Double) {
        assert(count + n + RawWriter.centiRoom <= capacity && markCount + k + 2 <= markCapacity, "a patch past the room made for it")
        RawWriter.shiftMarks(from, k, by: shift, to: marks.unsafelyUnwrapped + markCount)
        markCount &+= k
        BoundedLine.copy(bytes, n, to: base + count)
        count = number(v, at: base + (count &+ n)) - base
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        reserve(1)
        base[count] = b
        count += 1
    }

    @inline(__always) mutating func raw(_ p: UnsafePointer<UInt8>, _ n: Int) {
        reserve(n)
        BoundedLine.copy(p, n, to: base + count)
        count += n
    }

    @inline(__always) mutating func literal(_ s: StaticString) { raw(s.utf8Start, s.utf8CodeUnitCount) }

    /// A JSON string whose text needs no escape (an enum's name), or null.
    @inline(__always) mutating func name(_ s: StaticString?) {
        guard let s else { literal("null"); return }
        reserve(s.utf8CodeUnitCount + 2)
        base[count] = UInt8(ascii: "\"")
        count += 1
        raw(s.utf8Start, s.utf8CodeUnitCount)
        base[count] = UInt8(ascii: "\"")
        count += 1
    }

    /// A quoted JSON string, escaped as `JSONWriter` escapes; most (ids) need no escape.
    mutating func quoted(_ s: String) {
        if s.utf8.withContiguousStorageIfAvailable({ quoted($0) }) == nil {
            var contiguous = s
            contiguous.withUTF8 { quoted($0) }
        }
    }

    /// Copies each run that needs no escape in one go (found a word at a time) and escapes
    /// the byte after it, with one capacity check for the worst case.
    mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        let n = utf8.count
        var plain = JSONWriter.firstEscape(utf8)
        reserve(n + 2 + 5 * (n - plain))
        var p = base + count
        p.pointee = UInt8(ascii: "\"")
        p += 1
        if let from = utf8.baseAddress {
            var i = 0
            while true {
                BoundedLine.copy(from + i, plain, to: p)
                p += plain
                i += plain
                guard i < n else { break }
                p = JSONWriter.putEscaped(from[i], at: p)
                i += 1
                plain = JSONWriter.firstEscape(UnsafeBufferPointer(start: from + i, count: n - i))
            }
        }
        p.pointee = UInt8(ascii: "\"")
        count = p + 1 - base
    }

    mutating func int(_ v: Int) {
        reserve(20)
        advance { p in
            var p = p
            BoundedLine.putDecimal(v, &p)
            return p
        }
    }

    /// A layout number, byte for byte as `JSONWriter.appendCenti`, with one capacity check.
    mutating func centi(_ v: Double) {
        reserve(RawWriter.centiRoom)
        reserveMarks(2)
        count = number(v, at: base + count) - base
    }

    /// Writes a layout number at `p` (room for it and its marks is the caller's), marks it
    /// when this writer marks, and returns the byte after it.
    @inline(__always) mutating func number(_ v: Double, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let end = RawWriter.putCenti(v, at: p)
        if let m = marks {
            m[markCount] = p - base
            m[markCount &+ 1] = end - base
            markCount &+= 2
        }
        return end
    }

    /// Room `putCenti` may need: "-", 11 digits, ".", 2 digits on the fast path; the slow
    /// path's longest text is a Double's shortest form, 24 bytes ("-2.2250738585072014e-308").
    static let centiRoom = 32

    /// A frame, with one capacity check for all of it.
    mutating func rect(_ r: Rect) {
        fourNumbers(#"{"x":"#, r.x, #","y":"#, r.y, #","w":"#, r.w, #","h":"#, r.h)
    }

    /// Insets, with one capacity check for all of them.
    mutating func insets(_ i: Insets) {
        fourNumbers(#"{"top":"#, i.top, #","leading":"#, i.leading, #","bottom":"#, i.bottom, #","trailing":"#, i.trailing)
    }

    /// An object of four numbers, each after its key's literal (the first with the brace).
    @inline(__always)
    private mutating func fourNumbers(_ k0: StaticString, _ v0: Double, _ k1: StaticString, _ v1: Double,
                                      _ k2: StaticString, _ v2: Double, _ k3: StaticString, _ v3: Double) {
        reserve(4 * RawWriter.centiRoom + k0.utf8CodeUnitCount + k1.utf8CodeUnitCount + k2.utf8CodeUnitCount + k3.utf8CodeUnitCount + 1)
        reserveMarks(8)
        var p = RawWriter.putLiteral(k0, at: base + count); p = number(v0, at: p)
        p = RawWriter.putLiteral(k1, at: p); p = number(v1, at: p)
        p = RawWriter.putLiteral(k2, at: p); p = number(v2, at: p)
        p = RawWriter.putLiteral(k3, at: p); p = number(v3, at: p)
        p.pointee = UInt8(ascii: "}")
        count = p + 1 - base
    }

    /// Writes at the end with `body` (which returns the byte after what it wrote), within
    /// room the caller reserved.
    @inline(__always) mutating func advance(_ body: (UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8>) {
        let end = body(base + count)
        count = end - base
        assert(count <= capacity, "wrote past the room reserved")
    }

    @inline(__always) static func putLiteral(_ s: StaticString, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        BoundedLine.copy(s.utf8Start, s.utf8CodeUnitCount, to: p)
        return p + s.utf8CodeUnitCount
    }

    /// Writes a layout number at `p` (room for `centiRoom` bytes is the caller's) and
    /// returns the byte after it.
    @inline(__always) static func putCenti(_ v: Double, at start: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        // NaN and the infinities fail the comparison too.
        guard abs(v) < 1e13 else { return putCentiSlowly(v, at: start) }
        var p = start
        let hundredths = JSONWriter.hundredths(v)
        if hundredths < 0 { p.pointee = UInt8(ascii: "-"); p += 1 }
        let magnitude = UInt(hundredths.magnitude)
        BoundedLine.putDecimal(UInt64(magnitude / 100), &p)
        let fraction = magnitude % 100
        if fraction != 0 {
            p[0] = UInt8(ascii: ".")
            p[1] = UInt8(truncatingIfNeeded: 48 &+ fraction / 10)
            p += 2
            if fraction % 10 != 0 { p.pointee = UInt8(truncatingIfNeeded: 48 &+ fraction % 10); p += 1 }
        }
        return p
    }

    /// Numbers a layout never holds (infinite, or 1e13 and beyond) as `JSONWriter` prints them.
    @inline(never) static func putCentiSlowly(_ v: Double, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var text: [UInt8] = []
        JSONWriter.appendCenti(v, to: &text)
        precondition(text.count <= centiRoom, "a number longer than the room reserved for it")
        text.withUnsafeBufferPointer { BoundedLine.copy($0.baseAddress!, $0.count, to: p) }
        return p + text.count
    }
}
