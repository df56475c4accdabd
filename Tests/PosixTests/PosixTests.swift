import Testing
@testable import Posix

@Test func PosixModuleBuilds() {
    #expect(Bool(true))
}
