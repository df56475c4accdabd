import Testing
@testable import JSON

@Test func JSONModuleBuilds() {
    #expect(Bool(true))
}
