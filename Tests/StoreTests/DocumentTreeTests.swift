import Testing
import JSON
@testable import Store

@Test func setCreatesIntermediateObjects() {
    var tree = DocumentTree.empty
    DocumentTree.apply(.set(path: ["Messages", "g1", "m1"], value: ["message": "hi"]), to: &tree)
    #expect(tree["Messages"]?["g1"]?["m1"]?["message"] == "hi")
    #expect(tree["Users"] == [:])
}
