/// Sorting a loaded group's messages by id, which start-up does for a million of them.
extension MessageLog {
    /// `messages` in ascending `id` order (String order, the order every search here uses).
    ///
    /// Already sorted input is returned as is. Otherwise, when every id is ASCII (push ids
    /// always are), the sort runs over small keys, the first eight bytes of the id packed big
    /// endian plus the position, and only equal prefixes compare the ids themselves: swapping
    /// whole messages and chasing each id's heap storage at every comparison made this sort a
    /// tenth of start-up. For ASCII, byte order is String order; any other id falls back to
    /// sorting by String, whose Unicode ordering bytes do not always follow.
    static func sortedByID(_ messages: consuming [ChatMessage]) -> [ChatMessage] {
        if isSortedByID(messages) { return messages }
        guard let keys = prefixKeys(messages) else { return messages.sorted { $0.id < $1.id } }
        let order = keys.sorted { a, b in
            a.prefix != b.prefix ? a.prefix < b.prefix : messages[Int(a.position)].id < messages[Int(b.position)].id
        }
        // Consumed, so the array is uniquely owned and the swaps below happen in place.
        var sorted = consume messages
        applyPermutation(order.map { Int($0.position) }, to: &sorted)
        return sorted
    }

    /// Rearranges `messages` so that position `i` holds what was at `source[i]`, by swapping
    /// along each cycle of the permutation: swaps move values, where building a new array
    /// would copy (retain) the five strings of every message.
    static func applyPermutation(_ source: [Int], to messages: inout [ChatMessage]) {
        var placed = [Bool](repeating: false, count: source.count)
        for start in source.indices where !placed[start] {
            var current = start
            while true {
                placed[current] = true
                let next = source[current]
                if next == start { break }
                // `next` still holds its original message: a cycle visits each position once.
                messages.swapAt(current, next)
                current = next
            }
        }
    }

    /// Whether ids never decrease (equal ids keep their order, as a stable sort would).
    static func isSortedByID(_ messages: [ChatMessage]) -> Bool {
        var position = 1
        while position < messages.count {
            if messages[position].id < messages[position - 1].id { return false }
            position += 1
        }
        return true
    }

    /// Per message its id's first eight bytes as a big-endian integer (shorter ids padded with
    /// zeros, which sort first like the end of a string) and its position; nil when an id is
    /// not all ASCII or its bytes are not contiguous.
    static func prefixKeys(_ messages: [ChatMessage]) -> [(prefix: UInt64, position: UInt32)]? {
        guard messages.count <= Int(UInt32.max) else { return nil }
        var keys: [(prefix: UInt64, position: UInt32)] = []
        keys.reserveCapacity(messages.count)
        for (position, message) in messages.enumerated() {
            let prefix: UInt64?? = message.id.utf8.withContiguousStorageIfAvailable { bytes in
                var prefix: UInt64 = 0
                var isASCII = true
                for (offset, byte) in bytes.enumerated() {
                    // Bit 7 marks the bytes of non-ASCII characters.
                    isASCII = isASCII && byte & 0x80 == 0
                    if offset < 8 { prefix |= UInt64(byte) << (56 - 8 * offset) }
                }
                return isASCII ? prefix : nil
            }
            guard let found = prefix, let prefix = found else { return nil }
            keys.append((prefix, UInt32(position)))
        }
        return keys
    }
}
