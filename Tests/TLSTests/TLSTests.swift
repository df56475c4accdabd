import Testing
@testable import TLS

@Test func TLSModuleBuilds() {
    #expect(Bool(true))
}
