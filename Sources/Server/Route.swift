/// Where a request path leads (docs/protocol.md, "Endpoints").
enum Route: Equatable {
    case health
    case ready
    case metrics
    /// A file of the browser app, by its path inside the `public` folder; app routes
    /// (`/`, `/join/<code>`) are the app's `index.html`.
    case page(String)
    case echo
    case room(String)
    case chat
    case presence
    case presenceStream
    case tree(String)
    case notFound

    init(path: String) {
        switch path {
        case "/healthz": self = .health
        case "/readyz": self = .ready
        case "/metrics": self = .metrics
        case "/echo": self = .echo
        case "/ws": self = .chat
        case "/api/v1/presence": self = .presence
        case "/api/v1/presence/stream": self = .presenceStream
        case "/": self = .page("index.html")
        default:
            if path.hasPrefix("/rooms/") {
                self = .room(String(path.dropFirst("/rooms/".count)))
            } else if path.hasPrefix("/api/v1/tree/") || path == "/api/v1/tree" {
                self = .tree(String(path.dropFirst("/api/v1/tree".count).drop { $0 == "/" }))
            } else if path.hasPrefix("/join/") {
                self = .page("index.html")
            } else if path.hasPrefix("/api/") {
                self = .notFound
            } else {
                self = .page(String(path.dropFirst()))
            }
        }
    }

    /// Whether the route is a WebSocket endpoint (a plain GET to it gets 426).
    var isWebSocket: Bool {
        switch self {
        case .echo, .room, .chat: true
        default: false
        }
    }
}
