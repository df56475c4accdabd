import Testing
@testable import HTTP

@Test func HTTPModuleBuilds() {
    #expect(Bool(true))
}
