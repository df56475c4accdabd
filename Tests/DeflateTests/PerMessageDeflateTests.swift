import Testing

@testable import Deflate

/// One negotiation case: the request's header values, and the expected answer (nil: declined).
struct NegotiationCase: Sendable, CustomTestStringConvertible {
    var offers: [String]
    var response: String?
    var parameters: DeflateParameters?

    var testDescription: String { offers.debugDescription }
}

private let snct = "permessage-deflate; server_no_context_takeover"

/// Offers and the answers of the default configuration (server context takeover off).
private let negotiationTable: [NegotiationCase] = [
    // Firefox's plain offer.
    NegotiationCase(offers: ["permessage-deflate"], response: snct,
                    parameters: DeflateParameters(serverNoContextTakeover: true)),
    // Chromium, Python websockets and Node ws all offer this by default.
    NegotiationCase(offers: ["permessage-deflate; client_max_window_bits"], response: snct,
                    parameters: DeflateParameters(serverNoContextTakeover: true)),
    NegotiationCase(offers: ["permessage-deflate; server_no_context_takeover"], response: snct,
                    parameters: DeflateParameters(serverNoContextTakeover: true)),
    NegotiationCase(offers: ["permessage-deflate; client_max_window_bits=10"], response: snct,
                    parameters: DeflateParameters(serverNoContextTakeover: true, clientMaxWindowBits: 10)),
    NegotiationCase(offers: ["permessage-deflate; client_no_context_takeover"],
                    response: snct + "; client_no_context_takeover",
                    parameters: DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true)),
    NegotiationCase(offers: ["permessage-deflate;server_no_context_takeover;client_no_context_takeover;server_max_window_bits=9;client_max_window_bits=9"],
                    response: snct + "; client_no_context_takeover; server_max_window_bits=9",
                    parameters: DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true,
                                                  serverMaxWindowBits: 9, clientMaxWindowBits: 9)),
    // Several offers in one header value: the first acceptable one wins.
    NegotiationCase(offers: ["permessage-deflate; server_max_window_bits=10, permessage-deflate"],
                    response: snct + "; server_max_window_bits=10",
                    parameters: DeflateParameters(serverNoContextTakeover: true, serverMaxWindowBits: 10)),
    // Offers spread over two header values, the first naming another extension.
    NegotiationCase(offers: ["x-webkit-deflate-frame", "permessage-deflate; client_max_window_bits"],
                    response: snct, parameters: DeflateParameters(serverNoContextTakeover: true)),
    // An unknown parameter declines that offer only; the next one is accepted.
    NegotiationCase(offers: ["permessage-deflate; mystery=1, permessage-deflate; client_max_window_bits=12"],
                    response: snct,
                    parameters: DeflateParameters(serverNoContextTakeover: true, clientMaxWindowBits: 12)),
    NegotiationCase(offers: ["permessage-deflate; mystery", "permessage-deflate; client_no_context_takeover"],
                    response: snct + "; client_no_context_takeover",
                    parameters: DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true)),
    // Duplicates, bad values and values on flags are declined.
    NegotiationCase(offers: ["permessage-deflate; server_no_context_takeover; server_no_context_takeover"]),
    NegotiationCase(offers: ["permessage-deflate; client_max_window_bits=10; client_max_window_bits=11"]),
    NegotiationCase(offers: ["permessage-deflate; server_max_window_bits=16"]),
    NegotiationCase(offers: ["permessage-deflate; server_max_window_bits=7"]),
    NegotiationCase(offers: ["permessage-deflate; server_max_window_bits=08"]),
    NegotiationCase(offers: ["permessage-deflate; server_max_window_bits"]),
    NegotiationCase(offers: ["permessage-deflate; client_max_window_bits=big"]),
    NegotiationCase(offers: ["permessage-deflate; client_no_context_takeover=true"]),
    NegotiationCase(offers: ["permessage-deflate; server_no_context_takeover=\"\""]),
    // Nothing usable at all.
    NegotiationCase(offers: []),
    NegotiationCase(offers: [""]),
    NegotiationCase(offers: [" , ,"]),
    NegotiationCase(offers: [";;=,\"permessage-deflate"]),
    NegotiationCase(offers: ["permessage-deflate; =15"]),
    NegotiationCase(offers: ["x-webkit-deflate-frame"]),
    // A quoted value is the same value (RFC 6455 §9.1); names compare case-insensitively.
    NegotiationCase(offers: ["permessage-deflate; server_max_window_bits=\"11\""],
                    response: snct + "; server_max_window_bits=11",
                    parameters: DeflateParameters(serverNoContextTakeover: true, serverMaxWindowBits: 11)),
    NegotiationCase(offers: ["PerMessage-Deflate ;\tClient_Max_Window_Bits"], response: snct,
                    parameters: DeflateParameters(serverNoContextTakeover: true)),
]

@Test(arguments: negotiationTable)
func answersOfferAsTabulated(_ row: NegotiationCase) {
    let answer = PerMessageDeflate.negotiate(offers: row.offers, configuration: DeflateConfiguration())
    #expect(answer?.response == row.response)
    #expect(answer?.parameters == row.parameters)
}

@Test(arguments: 8...15)
func answersServerMaxWindowBitsWithTheOfferedValue(_ bits: Int) {
    let answer = PerMessageDeflate.negotiate(
        offers: ["permessage-deflate; server_max_window_bits=\(bits)"],
        configuration: DeflateConfiguration()
    )
    #expect(answer?.response == snct + "; server_max_window_bits=\(bits)")
    #expect(answer?.parameters.serverMaxWindowBits == bits)
}

@Test func lowersOfferedServerWindowToTheConfiguredMaximum() {
    var configuration = DeflateConfiguration()
    configuration.maxWindowBits = 10
    let limited = PerMessageDeflate.negotiate(offers: ["permessage-deflate; server_max_window_bits=12"], configuration: configuration)
    #expect(limited?.response == snct + "; server_max_window_bits=10")
    let unasked = PerMessageDeflate.negotiate(offers: ["permessage-deflate"], configuration: configuration)
    #expect(unasked?.response == snct)
    #expect(unasked?.parameters.serverMaxWindowBits == 10)
}

@Test func limitsClientWindowOnlyWhenTheOfferAllowsIt() {
    var configuration = DeflateConfiguration()
    configuration.clientMaxWindowBits = 10
    let valueless = PerMessageDeflate.negotiate(offers: ["permessage-deflate; client_max_window_bits"], configuration: configuration)
    #expect(valueless?.response == snct + "; client_max_window_bits=10")
    #expect(valueless?.parameters.clientMaxWindowBits == 10)
    let smaller = PerMessageDeflate.negotiate(offers: ["permessage-deflate; client_max_window_bits=9"], configuration: configuration)
    #expect(smaller?.response == snct)
    #expect(smaller?.parameters.clientMaxWindowBits == 9)
    let absent = PerMessageDeflate.negotiate(offers: ["permessage-deflate"], configuration: configuration)
    #expect(absent?.response == snct)
    #expect(absent?.parameters.clientMaxWindowBits == 15)
}

@Test func omitsServerNoContextTakeoverWhenConfiguredToKeepContext() {
    var configuration = DeflateConfiguration()
    configuration.serverContextTakeover = true
    let plain = PerMessageDeflate.negotiate(offers: ["permessage-deflate"], configuration: configuration)
    #expect(plain?.response == "permessage-deflate")
    #expect(plain?.parameters == DeflateParameters())
    let asked = PerMessageDeflate.negotiate(offers: ["permessage-deflate; server_no_context_takeover"], configuration: configuration)
    #expect(asked?.response == snct)
}

@Test func asksForClientNoContextTakeoverWhenConfiguredToRefuseClientContext() {
    var configuration = DeflateConfiguration()
    configuration.clientContextTakeover = false
    // The default offer of Chromium, Python websockets and Node ws.
    let browser = PerMessageDeflate.negotiate(offers: ["permessage-deflate; client_max_window_bits"], configuration: configuration)
    #expect(browser?.response == snct + "; client_no_context_takeover")
    #expect(browser?.parameters == DeflateParameters(serverNoContextTakeover: true, clientNoContextTakeover: true))
    // Said once even when the client offered it too.
    let offered = PerMessageDeflate.negotiate(offers: ["permessage-deflate; client_no_context_takeover"], configuration: configuration)
    #expect(offered?.response == snct + "; client_no_context_takeover")
}

@Test func declinesEverythingWhenDisabled() {
    var configuration = DeflateConfiguration()
    configuration.isEnabled = false
    #expect(PerMessageDeflate.negotiate(offers: ["permessage-deflate"], configuration: configuration) == nil)
}

@Test func parsesQuotedValuesContainingSeparators() {
    let offers = ExtensionOffer.parseList("a; p=\"x,y;z\\\"\", b")
    #expect(offers == [
        ExtensionOffer(name: "a", parameters: [.init(name: "p", value: "x,y;z\"")]),
        ExtensionOffer(name: "b", parameters: []),
    ])
}

@Test func marksMalformedElementsWithoutLosingTheOthers() {
    let offers = ExtensionOffer.parseList("a; p=\"open, b; q=1, c d")
    #expect(offers == [nil])
    let mixed = ExtensionOffer.parseList("a;=1, b; q=1 , c d")
    #expect(mixed == [nil, ExtensionOffer(name: "b", parameters: [.init(name: "q", value: "1")]), nil])
}

@Test func negotiatedParametersMakeMatchingCodecs() throws {
    let answer = try #require(PerMessageDeflate.negotiate(
        offers: ["permessage-deflate; client_max_window_bits; server_max_window_bits=10"],
        configuration: DeflateConfiguration()
    ))
    let message = Array(String(repeating: "the same words again and again ", count: 40).utf8)
    let payload = answer.parameters.makeDeflater(configuration: DeflateConfiguration()).compress(message)
    let receiver = MessageInflater(windowBits: answer.parameters.serverMaxWindowBits, noContextTakeover: true)
    #expect(try receiver.decompress(payload, limit: message.count).payload == message)
    let clientSide = MessageDeflater(windowBits: 15, noContextTakeover: false, memoryLevel: 8, level: 6)
    #expect(try answer.parameters.makeInflater().decompress(clientSide.compress(message), limit: message.count).payload == message)
}
