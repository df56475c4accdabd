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
    /// Uploads (`POST /api/v1/media`), one upload by id (`DELETE /api/v1/media/{id}`), and
    /// the file of one (`GET /media/{id}`).
    case mediaUpload
    case mediaItem(String)
    case media(String)
    case notFound

    /// Prefixes, suffixes and separators are matched on the path's bytes: a URL path is bytes,
    /// and a `String` compares characters, in which a combining mark after a `/` (`/%E2%83%AC`)
    /// makes one character with it, so that `/rooms/` would not be a prefix of `/rooms/\u{20EC}x`
    /// nor `/` a part of `a/\u{20EC}b`. (The whole paths below are ASCII, which no other string
    /// equals.)
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
        case "/api/v1/media": self = .mediaUpload
        case "/": self = .page("index.html")
        case "/monitor": self = .page("monitor.html")
        default:
            if let room = Route.segment(of: path, between: "/api/v1/rooms/", and: "/messages") {
                self = .roomMessages(room)
            } else if let group = Route.segment(of: path, between: "/api/v1/groups/", and: "/messages") {
                self = .groupMessages(group)
            } else if let id = Route.segment(of: path, between: "/api/v1/media/", and: "") {
                self = .mediaItem(id)
            } else if let id = Route.segment(of: path, between: "/media/", and: "") {
                self = .media(id)
            } else if let room = Route.rest(of: path, after: "/rooms/") {
                self = .room(room)
            } else if let tree = Route.rest(of: path, after: "/api/v1/tree"), tree.isEmpty || tree.utf8.first == UInt8(ascii: "/") {
                self = .tree(String(decoding: tree.utf8.drop { $0 == UInt8(ascii: "/") }, as: UTF8.self))
            } else if Route.starts(path, with: "/join/") {
                self = .page("index.html")
            } else if Route.starts(path, with: "/api/") {
                self = .notFound
            } else {
                self = .page(Route.rest(of: path, after: "/") ?? path)
            }
        }
    }

    /// Whether `path` starts with the bytes of `prefix`.
    private static func starts(_ path: String, with prefix: String) -> Bool {
        path.utf8.starts(with: prefix.utf8)
    }

    /// What follows `prefix` in `path`, or nil when `path` does not start with it.
    private static func rest(of path: String, after prefix: String) -> String? {
        guard starts(path, with: prefix) else { return nil }
        return String(decoding: path.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// The one path segment between `prefix` and `suffix`, e.g. the room of
    /// `/api/v1/rooms/lobby/messages`.
    private static func segment(of path: String, between prefix: String, and suffix: String) -> String? {
        let bytes = path.utf8
        guard bytes.count > prefix.utf8.count + suffix.utf8.count, starts(path, with: prefix),
              bytes.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
        else { return nil }
        let segment = bytes.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
        return segment.contains(UInt8(ascii: "/")) ? nil : String(decoding: segment, as: UTF8.self)
    }

    /// The methods the route answers: `POST` for what creates something, `GET` alone for the
    /// presence stream, `GET` and `HEAD` for the rest.
    var methods: [String] {
        switch self {
        case .presenceToken, .roomMessages, .groupMessages, .mediaUpload: ["POST"]
        case .mediaItem: ["DELETE"]
        case .presenceStream: ["GET"]
        default: ["GET", "HEAD"]
        }
    }

    /// Whether the answer needs what only the chat loop holds (the chat state, the room
    /// directory, every loop's counters): other loops pass such requests to it.
    var isAnsweredOnChatLoop: Bool {
        switch self {
        case .metrics, .presence, .tree, .roomMessages, .groupMessages, .mediaUpload, .mediaItem, .media: true
        default: false
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
