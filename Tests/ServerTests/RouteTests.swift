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
    #expect(Route(path: "/switchboard.js") == .page("switchboard.js"))
    #expect(Route(path: "/nope") == .page("nope"))
    #expect(Route(path: "/api/v1/nope") == .notFound)
    #expect(Route(path: "/api/v1/presence/token") == .presenceToken)
    #expect(Route(path: "/api/v1/rooms/lobby/messages") == .roomMessages("lobby"))
    #expect(Route(path: "/api/v1/groups/-Nabc/messages") == .groupMessages("-Nabc"))
    #expect(Route(path: "/api/v1/groups//messages") == .notFound)
    #expect(Route(path: "/api/v1/groups/a/b/messages") == .notFound)
    #expect(Route(path: "/monitor") == .page("monitor.html"))
    #expect(Route(path: "/monitor.js") == .page("monitor.js"))
}

@Test func routesThatCreateArePosts() {
    #expect(Route.roomMessages("x").methods == ["POST"] && Route.groupMessages("x").methods == ["POST"])
    #expect(Route.presenceToken.methods == ["POST"])
    #expect(Route.presenceStream.methods == ["GET"])
    #expect(Route.chat.methods == ["GET", "HEAD"] && Route.page("index.html").methods == ["GET", "HEAD"])
}

@Test func onlyWebSocketPathsAreWebSocketRoutes() {
    #expect(Route.echo.isWebSocket && Route.chat.isWebSocket && Route.room("x").isWebSocket)
    #expect(!Route.health.isWebSocket && !Route.page("index.html").isWebSocket)
}
