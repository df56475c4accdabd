import Testing
@testable import Chat

@Test func ChatModuleBuilds() {
    #expect(Bool(true))
}
