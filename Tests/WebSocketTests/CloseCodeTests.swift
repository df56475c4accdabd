import Testing
@testable import WebSocket

@Test(arguments: [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] as [UInt16])
func acceptsCodesPeersMaySend(code: UInt16) {
    #expect(CloseCode(rawValue: code).isValidOnTheWire)
}

@Test(arguments: [0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] as [UInt16])
func rejectsReservedAndReportOnlyCodes(code: UInt16) {
    #expect(!CloseCode(rawValue: code).isValidOnTheWire)
}

@Test func namedCodesHaveTheirRFCValues() {
    #expect(CloseCode.normalClosure.rawValue == 1000)
    #expect(CloseCode.goingAway.rawValue == 1001)
    #expect(CloseCode.protocolError.rawValue == 1002)
    #expect(CloseCode.unsupportedData.rawValue == 1003)
    #expect(CloseCode.invalidPayload.rawValue == 1007)
    #expect(CloseCode.policyViolation.rawValue == 1008)
    #expect(CloseCode.messageTooBig.rawValue == 1009)
    #expect(CloseCode.internalError.rawValue == 1011)
    #expect(CloseCode.tryAgainLater.rawValue == 1013)
}

@Test func describesCodesForLogs() {
    #expect(CloseCode.messageTooBig.description == "1009 (message too big)")
    #expect(CloseCode(rawValue: 4321).description == "4321")
}
