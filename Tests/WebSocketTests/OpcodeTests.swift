import Testing
import WebSocket

@Test func opcodeControlFramesAreMarked() {
    #expect(Opcode.ping.isControl)
    #expect(!Opcode.text.isControl)
}
