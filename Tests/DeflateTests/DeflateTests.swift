import Testing
@testable import Deflate

@Test func DeflateModuleBuilds() {
    #expect(Bool(true))
}
