/// Where a request path leads (docs/protocol.md, "Endpoints").
enum Route: Equatable {
    case health
    case ready
    case metrics
    /// A file of the browser app, by its path inside the `public` folder; app routes
    /// (`/`, `/join/<code>`) are the app's `index.html`, and `/monitor` the operators' page.
    case page(String)
    case echo
    case room(String)
    case chat
    case presence
    case presenceStream
    /// A short-lived token for the stream, for `EventSource`, which cannot send headers.
    case presenceToken
    /// The publish API: a message into a plain room, or a group.
    case roomMessages(String)
    case groupMessages(String)
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
        case "/api/v1/presence/token": self = .presenceToken
        case "/": self = .page("index.html")
        case "/monitor": self = .page("monitor.html")
        default:
            if let room = Route.segment(of: path, between: "/api/v1/rooms/", and: "/messages") {
                self = .roomMessages(room)
            } else if let group = Route.segment(of: path, between: "/api/v1/groups/", and: "/messages") {
                self = .groupMessages(group)
            } else if path.hasPrefix("/rooms/") {
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

    /// The one path segment between `prefix` and `suffix`, e.g. the room of
    /// `/api/v1/rooms/lobby/messages`.
    private static func segment(of path: String, between prefix: String, and suffix: String) -> String? {
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.utf8.count > prefix.utf8.count + suffix.utf8.count else {
            return nil
        }
        let segment = path.dropFirst(prefix.count).dropLast(suffix.count)
        return segment.contains("/") ? nil : String(segment)
    }

    /// The methods the route answers: `POST` for what creates something, `GET` alone for the
    /// presence stream, `GET` and `HEAD` for the rest.
    var methods: [String] {
        switch self {
        case .presenceToken, .roomMessages, .groupMessages: ["POST"]
        case .presenceStream: ["GET"]
        default: ["GET", "HEAD"]
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
