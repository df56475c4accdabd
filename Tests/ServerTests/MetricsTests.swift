import Testing
@testable import Server

@Test func eachEndpointCountsOnItsOwnAndLoopsAddUp() {
    let one = Metrics()
    let other = Metrics()
    for (index, kind) in EndpointKind.allCases.enumerated() {
        one.messagesReceived[kind] += index + 1
        one.messagesSent[kind] += 10 * (index + 1)
        other.messagesReceived[kind] += 100
    }
    let sum = one.copy()
    sum.merge(other)
    for (index, kind) in EndpointKind.allCases.enumerated() {
        #expect(one.messagesReceived[kind] == index + 1)
        #expect(one.messagesSent[kind] == 10 * (index + 1))
        #expect(sum.messagesReceived[kind] == 100 + index + 1)
        #expect(sum.messagesSent[kind] == 10 * (index + 1))
    }
    // The stream endpoint carries no messages and has no sample.
    #expect(one.messagesReceived.samples.map(\.labels) == ["{endpoint=\"echo\"}", "{endpoint=\"room\"}", "{endpoint=\"chat\"}"])
    #expect(one.messagesReceived.samples.map(\.value) == [1, 2, 3])
}
