import Glibc
import HTTP
import Logging
import Testing

@testable import Server

/// A public folder with an HTML page big enough to gzip and a tiny script; removed by `done`.
private final class Folder {
    let path: String

    init() {
        var template = Array("/tmp/static-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: made!)
        write("index.html", String(repeating: "<p>switchboard</p>\n", count: 100))
        write("app.js", "export {};\n")
    }

    func write(_ name: String, _ text: String) {
        let fd = open(path + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        close(fd)
    }

    deinit { _ = system("rm -rf '\(path)'") }
}

private func get(_ files: StaticFiles, _ path: String, _ headers: HTTPHeaders = [:]) -> HTTPResponse? {
    files.response(for: path, head: HTTPRequestHead(method: "GET", target: "/" + path, path: "/" + path, headers: headers))
}

@Test func servesFilesWithTypeTagAndSecurityHeaders() throws {
    let folder = Folder()
    let files = StaticFiles(directory: folder.path, logger: Logger(label: "test"))
    let page = try #require(get(files, "index.html", ["Host": "127.0.0.1:8080"]))
    #expect(page.status == .ok)
    #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
    #expect(page.headers["Cache-Control"] == "no-cache")
    #expect(page.headers["X-Content-Type-Options"] == "nosniff")
    let policy = try #require(page.headers["Content-Security-Policy"])
    #expect(policy.contains("frame-ancestors 'none'"))
    #expect(policy.contains("connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080;"))
    #expect(get(files, "app.js")?.headers["Content-Type"] == "text/javascript; charset=utf-8")
    #expect(get(files, "missing.js") == nil)
    #expect(get(files, "../index.html") == nil)
}

@Test func aHostThatIsNotAHostIsLeftOutOfThePolicy() {
    #expect(!StaticFiles.contentSecurityPolicy(host: "x; script-src *").contains("script-src *"))
}

@Test func aMatchingETagGetsNotModified() throws {
    let folder = Folder()
    let files = StaticFiles(directory: folder.path, logger: Logger(label: "test"))
    let etag = try #require(get(files, "app.js")?.headers["ETag"])
    let again = try #require(get(files, "app.js", ["If-None-Match": "\"other\", \(etag)"]))
    #expect(again.status == .notModified)
    #expect(again.body.isEmpty)
    #expect(again.headers["ETag"] == etag)
    #expect(get(files, "app.js", ["If-None-Match": "W/\(etag)"])?.status == .notModified)
    #expect(get(files, "app.js", ["If-None-Match": "\"stale\""])?.status == .ok)
}

@Test func gzipGoesOnlyToClientsThatAcceptIt() throws {
    let folder = Folder()
    let files = StaticFiles(directory: folder.path, logger: Logger(label: "test"))
    let plain = try #require(get(files, "index.html"))
    let zipped = try #require(get(files, "index.html", ["Accept-Encoding": "gzip, deflate, br"]))
    #expect(plain.headers["Content-Encoding"] == nil)
    #expect(zipped.headers["Content-Encoding"] == "gzip")
    #expect(zipped.body.count < plain.body.count)
    #expect(zipped.headers["ETag"] != plain.headers["ETag"])
    #expect(zipped.headers["Vary"] == "Accept-Encoding")
    #expect(get(files, "app.js", ["Accept-Encoding": "gzip"])?.headers["Content-Encoding"] == nil)
}

@Test func acceptEncodingFollowsQualityValues() {
    #expect(StaticFiles.acceptsGzip(["gzip"]))
    #expect(StaticFiles.acceptsGzip(["br;q=1.0, GZIP;q=0.5"]))
    #expect(!StaticFiles.acceptsGzip(["gzip;q=0"]))
    #expect(!StaticFiles.acceptsGzip(["identity"]))
    #expect(StaticFiles.acceptsGzip(["*"]))
    #expect(!StaticFiles.acceptsGzip(["*, gzip; q=0.0"]))
    #expect(!StaticFiles.acceptsGzip([]))
}

@Test func contentTypesFollowTheExtension() {
    #expect(StaticFiles.contentType(of: "a/b/style.css") == "text/css; charset=utf-8")
    #expect(StaticFiles.contentType(of: "icon.SVG") == "image/svg+xml")
    #expect(StaticFiles.contentType(of: "README") == "application/octet-stream")
}

@Test func aMissingFolderServesNothing() {
    #expect(StaticFiles(directory: "/nonexistent/public", logger: Logger(label: "test")).files.isEmpty)
}
