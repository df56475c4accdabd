import Testing
import JSON
@testable import Store

@Test func setCreatesIntermediateObjects() {
    var tree = DocumentTree.empty
    DocumentTree.apply(.set(path: ["Messages", "g1", "m1"], value: ["message": "hi"]), to: &tree)
    #expect(tree["Messages"]?["g1"]?["m1"]?["message"] == "hi")
    #expect(tree["Users"] == [:])
}

@Test func setReplacesScalarInTheWay() {
    var tree: JSONValue = ["a": 5]
    DocumentTree.apply(.set(path: ["a", "b"], value: 1), to: &tree)
    #expect(tree == ["a": ["b": 1]])
}

@Test func setNullDeletes() {
    var tree: JSONValue = ["Users": ["u1": ["name": "Ada"], "u2": ["name": "Bob"]]]
    DocumentTree.apply(.set(path: ["Users", "u1"], value: nil), to: &tree)
    #expect(tree == ["Users": ["u2": ["name": "Bob"]]])
}

@Test func mergeSetsAndDeletesChildren() {
    var tree: JSONValue = ["Groups": ["g1": ["name": "old", "invite": "abc", "userList": ["u1": true]]]]
    DocumentTree.apply(.merge(path: ["Groups", "g1"], value: ["name": "new", "invite": nil, "createdAt": 7]), to: &tree)
    #expect(tree == ["Groups": ["g1": ["name": "new", "createdAt": 7, "userList": ["u1": true]]]])
}

@Test func mergeCreatesMissingObject() {
    var tree = DocumentTree.empty
    DocumentTree.apply(.merge(path: ["Messages", "g1", "m1", "receivedBy"], value: ["u2": 17]), to: &tree)
    #expect(tree["Messages"]?["g1"]?["m1"]?["receivedBy"] == ["u2": 17])
}

@Test func deletingLastChildLeavesEmptyObject() {
    var tree: JSONValue = ["Messages": ["g1": ["m1": ["message": "x"]]]]
    DocumentTree.apply(.delete(path: ["Messages", "g1", "m1"]), to: &tree)
    #expect(tree == ["Messages": ["g1": [:]]])
}

@Test func deletingMissingPathCreatesNothing() {
    var tree = DocumentTree.empty
    DocumentTree.apply(.delete(path: ["Messages", "nope", "m1"]), to: &tree)
    DocumentTree.apply(.delete(path: ["Users", "u9"]), to: &tree)
    #expect(tree == DocumentTree.empty)
}

@Test func emptyPathAddressesTheRoot() {
    var tree = DocumentTree.empty
    DocumentTree.apply(.merge(path: [], value: ["Extra": [:]]), to: &tree)
    #expect(tree["Extra"] == [:])
    DocumentTree.apply(.delete(path: []), to: &tree)
    #expect(tree == [:])
    DocumentTree.apply(.set(path: [], value: DocumentTree.empty), to: &tree)
    #expect(tree == DocumentTree.empty)
}

/// A history that exercises overwrites, deletes, re-creation and merges on shared paths.
private let history: [Mutation] = [
    .set(path: ["Users", "u1"], value: ["name": "Ada", "createdAt": 1]),
    .set(path: ["Groups", "g1"], value: ["name": "room", "userList": ["u1": true]]),
    .merge(path: ["Groups", "g1", "userList"], value: ["u2": true]),
    .set(path: ["Messages", "g1", "m1"], value: ["message": "one"]),
    .delete(path: ["Groups", "g1", "userList", "u1"]),
    .set(path: ["Users", "u1", "name"], value: "Ada L."),
    .delete(path: ["Messages", "g1"]),
    .set(path: ["Messages", "g1", "m2"], value: ["message": "two"]),
    .merge(path: ["Messages", "g1", "m2", "receivedBy"], value: ["u2": 5]),
    .set(path: ["Users", "u2"], value: 3),
    .set(path: ["Users", "u2", "name"], value: "Bob"),
]

@Test func everyMutationIsIdempotent() {
    var tree = DocumentTree.empty
    for mutation in history {
        DocumentTree.apply(mutation, to: &tree)
        var twice = tree
        DocumentTree.apply(mutation, to: &twice)
        #expect(twice == tree, "\(mutation)")
    }
}

@Test func replayingHistoryOverItsResultChangesNothing() {
    var tree = DocumentTree.empty
    DocumentTree.apply(history, to: &tree)
    for start in history.indices {
        var replayed = tree
        DocumentTree.apply(Array(history[start...]), to: &replayed)
        #expect(replayed == tree, "replay from \(start)")
    }
}
