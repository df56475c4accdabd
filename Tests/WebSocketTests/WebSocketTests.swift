import Testing
@testable import WebSocket

@Test func WebSocketModuleBuilds() {
    #expect(Bool(true))
}
