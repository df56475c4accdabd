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
}

@Test func onlyWebSocketPathsAreWebSocketRoutes() {
    #expect(Route.echo.isWebSocket && Route.chat.isWebSocket && Route.room("x").isWebSocket)
    #expect(!Route.health.isWebSocket && !Route.page("index.html").isWebSocket)
}
