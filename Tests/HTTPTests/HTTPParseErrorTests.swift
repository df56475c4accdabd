import Testing

@testable import HTTP

@Test func parseErrorsMapToTheirStatuses() {
    #expect(HTTPParseError.headersTooLarge.status.code == 431)
    #expect(HTTPParseError.malformed("x").status.code == 400)
    #expect(HTTPParseError.unsupportedVersion.status.code == 505)
}

@Test func parseErrorsPrintASentence() {
    #expect(String(describing: HTTPParseError.malformed("a header line has no colon"))
        == "The request is malformed: a header line has no colon.")
    #expect(String(describing: HTTPParseError.headersTooLarge).hasSuffix("."))
}

@Test func statusPrintsCodeAndReason() {
    #expect(HTTPStatus.requestHeaderFieldsTooLarge.description == "431 Request Header Fields Too Large")
    #expect(HTTPStatus.serviceUnavailable.code == 503)
    #expect(HTTPStatus.switchingProtocols.forbidsBody)
    #expect(!HTTPStatus.notFound.forbidsBody)
}
