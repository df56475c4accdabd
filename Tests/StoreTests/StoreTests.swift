import Testing
@testable import Store

@Test func StoreModuleBuilds() {
    #expect(Bool(true))
}
