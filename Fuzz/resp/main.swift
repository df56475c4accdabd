import FuzzSupport
import Redis

// The RESP reader (Sources/Redis/RESPParser.swift) on arbitrary bytes, as Redis's answers come:
// in pieces of any size.
//
// Invariants: the input read whole, and read in pieces (cut at two places the input's first byte
// chooses, and one byte at a time), gives the same values and leaves the same bytes waiting, or
// is refused whichever way it comes. Read whole, values are taken from the bytes where they lie;
// in pieces, an unfinished value's bytes wait in the parser and are read from there, so the two
// ways check each other.

/// The values `data` gives read in pieces ending at `cuts` (ascending) and at its end, the bytes
/// left waiting, and whether it was refused.
func read(_ data: UnsafeRawBufferPointer, cuts: [Int]) -> (values: [RESPValue], waiting: Int, refused: Bool) {
    var limits = RESPParser.Limits()
    limits.maxDepth = 8
    var parser = RESPParser(limits: limits)
    var values: [RESPValue] = []
    var from = 0
    for cut in cuts + [data.count] where cut >= from {
        do throws(RESPParser.Malformed) {
            try parser.receive(UnsafeRawBufferPointer(rebasing: data[from..<cut]), into: &values)
        } catch {
            return (values, parser.bufferedBytes, true)
        }
        from = cut
    }
    return (values, parser.bufferedBytes, false)
}

Fuzzer.run { data in
    let whole = read(data, cuts: [])
    let first = data.first.map(Int.init) ?? 0
    let cuts = data.isEmpty ? [] : [first % data.count, (first * 7) % data.count].sorted()
    for split in [read(data, cuts: cuts), read(data, cuts: Array(0..<data.count))] {
        precondition(split.refused == whole.refused, "refused read whole: \(whole.refused), in pieces: \(split.refused)")
        guard !whole.refused else { continue }
        precondition(split.values == whole.values, "the values differ: \(whole.values) whole, \(split.values) in pieces")
        precondition(split.waiting == whole.waiting, "\(whole.waiting) bytes wait whole, \(split.waiting) in pieces")
    }
}
