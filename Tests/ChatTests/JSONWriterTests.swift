import JSON
import Testing
@testable import Chat

@Test func anAnswerEchoesTheRequestsIdOnlyWhenItHadOne() {
    var withNumber = JSONWriter(op: "ok", answering: .integer(7))
    #expect(String(decoding: withNumber.finished(), as: UTF8.self) == #"{"op":"ok","id":7}"#)
    var withString = JSONWriter(op: "error", answering: .string("a\"b"))
    withString.string("code", "bad_request")
    #expect(String(decoding: withString.finished(), as: UTF8.self) == #"{"op":"error","id":"a\"b","code":"bad_request"}"#)
    var without = JSONWriter(op: "pong", answering: nil)
    #expect(String(decoding: without.finished(), as: UTF8.self) == #"{"op":"pong"}"#)
}
