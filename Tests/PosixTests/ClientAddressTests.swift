import Testing

@testable import Posix

@Test func anIPv6ClientCountsAsItsSlash64Network() {
    #expect(ClientAddress.limitKey("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64")
    #expect(ClientAddress.limitKey("2001:db8:1:2::1") == "2001:db8:1:2::/64")
    #expect(ClientAddress.limitKey("2001:db8:1:3::1") == "2001:db8:1:3::/64")
    #expect(ClientAddress.limitKey("::1") == "::/64")
    #expect(ClientAddress.limitKey("fe80::1") == "fe80::/64")
}

@Test func anIPv4ClientCountsAsItsAddressAlsoWhenMappedIntoIPv6() {
    #expect(ClientAddress.limitKey("192.0.2.1") == "192.0.2.1")
    #expect(ClientAddress.limitKey("::ffff:192.0.2.1") == "192.0.2.1")
    #expect(ClientAddress.limitKey("::ffff:203.0.113.255") == "203.0.113.255")
}

@Test func somethingThatIsNotAnAddressIsItsOwnKey() {
    #expect(ClientAddress.limitKey("unknown") == "unknown")
    #expect(ClientAddress.limitKey("1:2:3") == "1:2:3")
    #expect(ClientAddress.limitKey("") == "")
}
