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
    #expect(Route(path: "/api/v1/media") == .mediaUpload)
    #expect(Route(path: "/api/v1/media/abc") == .mediaItem("abc"))
    #expect(Route(path: "/api/v1/media/a/b") == .notFound)
    #expect(Route(path: "/media/abc") == .media("abc"))
    #expect(Route(path: "/media/") == .page("media/"))
    #expect(Route(path: "/media/a/b") == .page("media/a/b"))
}

@Test func routesMatchBytesSoACombiningMarkAfterASlashChangesNothing() {
    // U+20EC (`%E2%83%AC`) combines with the "/" before it into one character.
    #expect(Route(path: "/rooms/\u{20EC}x") == .room("\u{20EC}x"))
    #expect(Route(path: "/api/v1/groups/a/\u{20EC}b/messages") == .notFound)
    #expect(Route(path: "/api/v1/rooms/\u{20EC}/messages") == .roomMessages("\u{20EC}"))
    #expect(Route(path: "/api/v1/tree/\u{20EC}x") == .tree("\u{20EC}x"))
    #expect(Route(path: "/api/v1/tree\u{20EC}") == .notFound)
    #expect(Route(path: "/media/a/\u{20EC}b") == .page("media/a/\u{20EC}b"))
    #expect(Route(path: "/\u{20EC}index.html") == .page("\u{20EC}index.html"))
}

@Test func routesThatCreateArePosts() {
    #expect(Route.roomMessages("x").methods == ["POST"] && Route.groupMessages("x").methods == ["POST"])
    #expect(Route.presenceToken.methods == ["POST"] && Route.mediaUpload.methods == ["POST"])
    #expect(Route.mediaItem("x").methods == ["DELETE"] && Route.media("x").methods == ["GET", "HEAD"])
    #expect(Route.presenceStream.methods == ["GET"])
    #expect(Route.chat.methods == ["GET", "HEAD"] && Route.page("index.html").methods == ["GET", "HEAD"])
}

@Test func onlyWebSocketPathsAreWebSocketRoutes() {
    #expect(Route.echo.isWebSocket && Route.chat.isWebSocket && Route.room("x").isWebSocket)
    #expect(!Route.health.isWebSocket && !Route.page("index.html").isWebSocket)
}
