import Testing
@testable import Server

@Test func ServerModuleBuilds() {
    #expect(Bool(true))
}
