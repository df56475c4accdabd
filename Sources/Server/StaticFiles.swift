import Deflate
import HTTP
import Logging
import Posix

/// The browser app's files (the `public` folder), read once at start and served from memory.
///
/// The app is a few small files, so holding them costs less than reading them per request, and
/// the event loop never waits on a disk. It also closes the usual holes of a file server: a
/// request is a lookup in a table of the files found at start, so `..`, `%2e%2e`, `%2f` or a
/// symbolic link leading out of the folder cannot name anything else (links out are left out
/// at start, with a warning). Changes to the folder need a restart.
///
/// Each file gets a strong `ETag` (a hash of its bytes) and, when it is text and gzip saves
/// something, a gzip copy compressed once here. Every file, and the `304`s, carry the
/// security headers (`securityHeaders`). Confined to the event loop thread after `init`.
final class StaticFiles {
    struct File {
        let contentType: String
        let body: [UInt8]
        let etag: String
        let gzipped: [UInt8]?
    }

    private(set) var files: [String: File] = [:]

    /// Files smaller than this are sent as they are: gzip's 18-byte wrapper eats the gain.
    static let gzipThreshold = 256

    init(directory: String, logger: Logger) {
        guard let found = FileSystem.files(under: directory) else {
            logger.warning("the public folder \(directory) does not exist: the browser app is not served (set `public`)")
            return
        }
        for path in found.outside {
            logger.warning("\(directory)/\(path) links outside the public folder: not served")
        }
        var bytes = 0
        for path in found.files {
            guard let body = FileSystem.readFile(directory + "/" + path) else {
                logger.warning("\(directory)/\(path) could not be read: not served")
                continue
            }
            let contentType = Self.contentType(of: path)
            var gzipped: [UInt8]?
            if body.count >= Self.gzipThreshold && Self.isCompressible(contentType) {
                let compressed = Gzip.compress(body)
                if compressed.count < body.count { gzipped = compressed }
            }
            files[path] = File(contentType: contentType, body: body, etag: Self.etag(of: body), gzipped: gzipped)
            bytes += body.count
        }
        logger.info("serving \(files.count) files (\(bytes) bytes) from \(directory)")
    }

    /// The answer to a GET for `path` (relative to the folder, e.g. `index.html`), or nil when
    /// no such file was found at start.
    func response(for path: String, head: HTTPRequestHead) -> HTTPResponse? {
        guard let file = files[path] else { return nil }
        let gzip = file.gzipped != nil && Self.acceptsGzip(head.headers.values("Accept-Encoding"))
        // The gzip copy is another representation, so it has its own tag (RFC 9110 §8.8.3).
        let etag = gzip ? "\"\(file.etag)-gz\"" : "\"\(file.etag)\""
        var headers = HTTPHeaders()
        headers.add("ETag", etag)
        // No fingerprint in the names, so browsers revalidate every time; the ETag makes that a 304.
        headers.add("Cache-Control", "no-cache")
        if file.gzipped != nil { headers.add("Vary", "Accept-Encoding") }
        Self.addSecurityHeaders(to: &headers, host: head.headers["Host"])
        if Self.matches(etag, head.headers.values("If-None-Match")) {
            return HTTPResponse(status: .notModified, headers: headers)
        }
        headers.add("Content-Type", file.contentType)
        if gzip { headers.add("Content-Encoding", "gzip") }
        return HTTPResponse(status: .ok, headers: headers, body: gzip ? file.gzipped! : file.body)
    }

    // MARK: Headers

    /// What every page gets: a Content-Security-Policy that lets the app load and connect to
    /// this server only (plus images over http(s), since messages and avatars are image URLs),
    /// never be framed, never sniff types, and not leak its URL (an invite link carries the
    /// invite code) to the hosts of those images.
    static func addSecurityHeaders(to headers: inout HTTPHeaders, host: String?) {
        headers.add("Content-Security-Policy", contentSecurityPolicy(host: host))
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Referrer-Policy", "no-referrer")
        headers.add("X-Frame-Options", "DENY")
    }

    /// The policy; `host` (the request's `Host`) names the WebSocket origin, since `'self'`
    /// covers `ws:` only in newer browsers. A `Host` that is not a plain host and port is left
    /// out rather than copied into the policy.
    static func contentSecurityPolicy(host: String?) -> String {
        var connect = "'self'"
        if let host, isPlainHost(host) { connect += " ws://\(host) wss://\(host)" }
        return "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' http: https:; "
            + "connect-src \(connect); object-src 'none'; base-uri 'none'; form-action 'self'; "
            + "frame-ancestors 'none'"
    }

    /// Letters, digits, `.`, `-`, `:`, `[` and `]`: a host name or address with a port.
    private static func isPlainHost(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 255 && host.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"),
                UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                true
            default:
                false
            }
        }
    }

    /// Whether an `If-None-Match` lists `etag` or `*`; weak tags compare by their opaque part,
    /// as the weak comparison RFC 9110 §13.1.2 prescribes for this field.
    static func matches(_ etag: String, _ fields: [String]) -> Bool {
        for field in fields {
            for candidate in field.split(separator: ",") {
                var tag = candidate.drop { $0 == " " || $0 == "\t" }
                while tag.last == " " || tag.last == "\t" { tag = tag.dropLast() }
                if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
                if tag == "*" || tag == etag { return true }
            }
        }
        return false
    }

    /// Whether `Accept-Encoding` lists `gzip` (or `*`) without `q=0`.
    static func acceptsGzip(_ fields: [String]) -> Bool {
        var gzip: Bool?
        var any: Bool?
        for field in fields {
            for element in field.split(separator: ",") {
                let parts = element.split(separator: ";").map { String($0.filter { $0 != " " && $0 != "\t" }).lowercased() }
                guard let coding = parts.first else { continue }
                let refused = parts.dropFirst().contains { $0.hasPrefix("q=") && Double($0.dropFirst(2)) == 0 }
                if coding == "gzip" || coding == "x-gzip" { gzip = !refused }
                if coding == "*" { any = !refused }
            }
        }
        return gzip ?? any ?? false
    }

    // MARK: Files

    /// Content types by extension; anything else is `application/octet-stream`, which with
    /// `nosniff` a browser will not run.
    static func contentType(of path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        let dot = name.lastIndex(of: ".")
        let ext = dot.map { name[name.index(after: $0)...].lowercased() } ?? ""
        switch ext {
        case "html", "htm": return "text/html; charset=utf-8"
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "json", "map": return "application/json"
        case "webmanifest": return "application/manifest+json"
        case "txt", "md": return "text/plain; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "woff2": return "font/woff2"
        case "wasm": return "application/wasm"
        default: return "application/octet-stream"
        }
    }

    private static func isCompressible(_ contentType: String) -> Bool {
        contentType.hasPrefix("text/") || contentType.hasPrefix("application/json")
            || contentType.hasPrefix("application/manifest") || contentType == "image/svg+xml"
    }

    /// FNV-1a over the bytes, 64 bits in hex: the files are ours, so the tag needs to change
    /// when a file does, not to resist anyone.
    static func etag(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex + "-" + String(bytes.count, radix: 16)
    }
}
