import Testing
@testable import Relay

@Test func RelayModuleBuilds() {
    #expect(Bool(true))
}
