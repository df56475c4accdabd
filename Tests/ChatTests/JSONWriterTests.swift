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

@Test func keysOfEveryLengthAreWrittenWithTheirCommasAndQuotes() {
    var writer = JSONWriter()
    writer.integer("a", 1)
    writer.string("id", "x")
    writer.integer("aKeyLongerThanSixteenBytes", 2)
    #expect(String(decoding: writer.finished(), as: UTF8.self) == #"{"a":1,"id":"x","aKeyLongerThanSixteenBytes":2}"#)
    var before = Array(#"{"m":"#.utf8)
    var nested = JSONWriter(continuing: &before)
    nested.integer("b", 3)
    nested.string("k", "v")
    #expect(String(decoding: nested.finished(), as: UTF8.self) == #"{"m":{"b":3,"k":"v"}"#)
}
