import Glibc

/// What the per-address limits count a client as (connections per address, signups and failed
/// logins per address): an IPv4 address as it is, an IPv6 client by its /64 network. One IPv6
/// subscriber is given a /64 or more, so counting each of its 2^64 addresses on its own would
/// let one client open as many connections, or make as many signups, as it likes. An
/// IPv4-mapped address (a dual-stack listener's IPv4 client, `::ffff:192.0.2.1`) counts as its
/// IPv4 address, so that IPv4 clients do not all share one /64.
public enum ClientAddress {
    /// The limits' key for `address` as `Socket.peerAddress` gives it: `2001:db8:1:2::/64` for
    /// any address of that network; the address itself when it is IPv4 or not an address.
    public static func limitKey(_ address: String) -> String {
        var bytes = in6_addr()
        guard address.contains(":"), inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        return withUnsafeMutableBytes(of: &bytes) { raw in
            let isMapped = raw[0..<10].allSatisfy { $0 == 0 } && raw[10] == 0xFF && raw[11] == 0xFF
            if isMapped { return raw[12..<16].map { String($0) }.joined(separator: ".") }
            for index in 8..<16 { raw[index] = 0 }
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard inet_ntop(AF_INET6, raw.baseAddress, &text, socklen_t(text.count)) != nil else { return address }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
        }
    }
}
