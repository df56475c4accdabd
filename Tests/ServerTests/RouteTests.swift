import Testing
@testable import Server

@Test func routesFollowTheProtocolTable() {
    #expect(Route(path: "/healthz") == .health)
    #expect(Route(path: "/readyz") == .ready)
    #expect(Route(path: "/metrics") == .metrics)
    #expect(Route(path: "/echo") == .echo)
    #expect(Route(path: "/ws") == .chat)
    #expect(Route(path: "/rooms/lobby") == .room("lobby"))
    #expect(Route(path: "/rooms/") == .room(""))
    #expect(Route(path: "/api/v1/presence") == .presence)
    #expect(Route(path: "/api/v1/presence/stream") == .presenceStream)
    #expect(Route(path: "/api/v1/tree/Groups/g1") == .tree("Groups/g1"))
    #expect(Route(path: "/api/v1/tree") == .tree(""))
    #expect(Route(path: "/") == .page("index.html"))
    #expect(Route(path: "/join/abc") == .page("index.html"))
    #expect(Route(path: "/api/v1/presence/token") == .presenceToken)
    #expect(Route(path: "/api/v1/rooms/lobby/messages") == .roomMessages("lobby"))
    #expect(Route(path: "/api/v1/groups/-Nabc/messages") == .groupMessages("-Nabc"))
    #expect(Route(path: "/api/v1/groups//messages") == .notFound)
    #expect(Route(path: "/api/v1/groups/a/b/messages") == .notFound)
    #expect(Route(path: "/monitor") == .page("monitor.html"))
    #expect(Route(path: "/monitor.js") == .page("monitor.js"))
    #expect(Route(path: "/nope") == .notFound)
}

@Test func routesThatCreateArePosts() {
    #expect(Route.roomMessages("x").method == "POST" && Route.groupMessages("x").method == "POST")
    #expect(Route.presenceToken.method == "POST")
    #expect(Route.presenceStream.method == "GET" && Route.chat.method == "GET")
}

@Test func onlyWebSocketPathsAreWebSocketRoutes() {
    #expect(Route.echo.isWebSocket && Route.chat.isWebSocket && Route.room("x").isWebSocket)
    #expect(!Route.health.isWebSocket && !Route.page("index.html").isWebSocket)
}
