import Chat
import HTTP
import JSON
import Store

/// Media stored by the server (docs/protocol.md, "Media"): `POST /api/v1/media` uploads one
/// image with a session token, `GET /media/{id}` serves it to anyone with the URL, `DELETE
/// /api/v1/media/{id}` lets its owner remove it. Files are written and read on `MediaFiles`'
/// worker threads; the answers come back through the loop's inbox, like fsync completions.
extension Server {
    /// Decides an upload from its head alone, before a byte of the body is kept: token, type,
    /// size, the user's upload rate and quota. Other requests get the API's body limit.
    func admitBody(of head: HTTPRequestHead, on connection: Connection) -> BodyAdmission {
        guard head.method == "POST", Route(path: head.path) == .mediaUpload else {
            return .read(maxBytes: limits.maxBodyBytes, deadline: nil)
        }
        guard case .length(let length) = head.body, length <= configuration.maxUploadBytes else {
            return .refuse(.error(.contentTooLarge, code: "too_large",
                                  message: "an upload may be at most \(configuration.maxUploadBytes) bytes"))
        }
        do throws(Refusal) {
            let (service, uid, _) = try uploader(head)
            do throws(ChatError) {
                try service.admitUpload(uid: uid, length: length)
            } catch {
                return .refuse(Server.response(for: error))
            }
        } catch {
            return .refuse(error.response)
        }
        return .read(maxBytes: configuration.maxUploadBytes, deadline: now + Server.nanoseconds(configuration.uploadTimeout))
    }

    /// `POST /api/v1/media`: checks the body against its type, writes the file durably off the
    /// loop, records it, and answers `201 {"id","url","type","bytes"}` once both are on disk.
    func upload(_ head: HTTPRequestHead, body: [UInt8], on connection: Connection) {
        let (service, uid, type): (ChatService<ChatEndpoint>, String, MediaType)
        do throws(Refusal) {
            (service, uid, type) = try uploader(head)
        } catch {
            return connection.send(error.response, keepAlive: head.keepAlive)
        }
        guard !body.isEmpty else {
            return connection.send(.error(.badRequest, code: "bad_request", message: "the body is the image: send its bytes"),
                                   keepAlive: head.keepAlive)
        }
        guard type.matches(body) else {
            return connection.send(.error(.unsupportedMediaType, code: "unsupported_media_type",
                                          message: "the bytes are not a \(type.rawValue) image"),
                                   keepAlive: head.keepAlive)
        }
        guard let mediaFiles else {
            return connection.send(.error(.serviceUnavailable, code: "unavailable", message: "media storage is not open"),
                                   keepAlive: head.keepAlive)
        }
        let id: String
        do throws(ChatError) {
            id = try service.beginUpload(uid: uid, bytes: body.count)
        } catch {
            return connection.send(Server.response(for: error), keepAlive: head.keepAlive)
        }
        connection.deferResponse()
        let waiting = LoopBound((connection, service))
        let loop = self.loop
        let bytes = body.count
        mediaFiles.write(id, body) { error in
            loop.execute {
                let (connection, service) = waiting.value
                if error != nil {
                    service.abandonUpload(uid: uid, bytes: bytes)
                    return connection.send(.error(.internalServerError, code: "internal",
                                                  message: "the file could not be stored; try again later"),
                                           keepAlive: head.keepAlive)
                }
                service.finishUpload(id: id, uid: uid, type: type, bytes: bytes) { result in
                    switch result {
                    case .success(let record):
                        let json = JSONValue.object([
                            "id": .string(id), "url": .string("/media/" + id), "type": .string(record.type.rawValue),
                            "bytes": .integer(Int64(record.bytes)),
                        ])
                        connection.send(HTTPResponse(status: .created, headers: ["Content-Type": "application/json"],
                                                     body: json.serialized), keepAlive: head.keepAlive)
                    case .failure(let error):
                        connection.send(Server.response(for: error), keepAlive: head.keepAlive)
                    }
                }
            }
        }
    }

    /// `GET /media/{id}` (and `HEAD`): the bytes with their type, to anyone with the URL.
    ///
    /// An id's bytes never change, so the `ETag` is the id and the answer may be cached for a
    /// year (`immutable`); `nosniff` and a sandboxing policy make sure a file is only ever an
    /// image, never a page that runs. `HEAD` and a matching `If-None-Match` are answered from
    /// the record without reading the file; a `GET` reads it on the worker thread.
    func serveMedia(_ id: String, _ head: HTTPRequestHead, on connection: Connection) {
        guard let service = chat?.service, let mediaFiles, ChatService<ChatEndpoint>.isMediaID(id),
              let record = service.mediaRecord(id)
        else {
            return connection.send(.error(.notFound, code: "not_found", message: "no such media"), keepAlive: head.keepAlive)
        }
        var headers = HTTPHeaders()
        let etag = "\"\(id)\""
        headers.add("ETag", etag)
        headers.add("Cache-Control", "public, max-age=31536000, immutable")
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Content-Security-Policy", "sandbox; default-src 'none'")
        if StaticFiles.matches(etag, head.headers.values("If-None-Match")) {
            return connection.send(HTTPResponse(status: .notModified, headers: headers), keepAlive: head.keepAlive)
        }
        headers.add("Content-Type", record.type.rawValue)
        if head.method == "HEAD" {
            headers.add("Content-Length", String(record.bytes))
            return connection.send(HTTPResponse(status: .ok, headers: headers), keepAlive: head.keepAlive)
        }
        connection.deferResponse()
        let waiting = LoopBound(connection)
        let loop = self.loop
        let found = headers
        mediaFiles.read(id) { bytes in
            loop.execute {
                guard let bytes else {
                    return waiting.value.send(.error(.notFound, code: "not_found", message: "no such media"),
                                              keepAlive: head.keepAlive)
                }
                waiting.value.send(HTTPResponse(status: .ok, headers: found, body: bytes), keepAlive: head.keepAlive)
            }
        }
    }

    /// `DELETE /api/v1/media/{id}` by the uploader: the record goes (durably), then the file;
    /// answers `204`.
    func deleteMedia(_ id: String, _ head: HTTPRequestHead, on connection: Connection) {
        let (service, uid): (ChatService<ChatEndpoint>, String)
        do throws(Refusal) {
            (service, uid) = try signedIn(head)
        } catch {
            return connection.send(error.response, keepAlive: head.keepAlive)
        }
        guard ChatService<ChatEndpoint>.isMediaID(id) else {
            return connection.send(.error(.notFound, code: "not_found", message: "no such media"), keepAlive: head.keepAlive)
        }
        let mediaFiles = self.mediaFiles
        do throws(ChatError) {
            try service.deleteMedia(id: id, uid: uid) { result in
                switch result {
                case .success:
                    mediaFiles?.remove(id)
                    connection.send(HTTPResponse(status: .noContent), keepAlive: head.keepAlive)
                case .failure(let error):
                    connection.send(Server.response(for: error), keepAlive: head.keepAlive)
                }
            }
            connection.deferResponse()
        } catch {
            connection.send(Server.response(for: error), keepAlive: head.keepAlive)
        }
    }

    /// The answer that refuses a request, thrown by the checks below.
    struct Refusal: Error {
        var response: HTTPResponse
    }

    /// The service and the user an `Authorization: Bearer <session token>` signs in; `503`
    /// before the store is loaded, `401` without a valid token.
    private func signedIn(_ head: HTTPRequestHead) throws(Refusal) -> (ChatService<ChatEndpoint>, String) {
        guard let service = chat?.service, mediaFiles != nil else {
            throw Refusal(response: .error(.serviceUnavailable, code: "unavailable", message: "the chat store is not loaded"))
        }
        let prefix = "Bearer "
        guard let header = head.headers["Authorization"], header.hasPrefix(prefix),
              let uid = service.userID(forToken: String(header.dropFirst(prefix.count)))
        else {
            var refusal = HTTPResponse.error(
                .unauthorized, code: "unauthorized",
                message: "send Authorization: Bearer <session token> (from signup, login or auth)")
            refusal.headers.add("WWW-Authenticate", "Bearer")
            throw Refusal(response: refusal)
        }
        return (service, uid)
    }

    /// `signedIn`, plus the image type the request's `Content-Type` names (`415` for any other).
    private func uploader(_ head: HTTPRequestHead) throws(Refusal) -> (ChatService<ChatEndpoint>, String, MediaType) {
        let (service, uid) = try signedIn(head)
        guard let type = head.headers["Content-Type"].flatMap(MediaType.init(contentType:)) else {
            throw Refusal(response: .error(.unsupportedMediaType, code: "unsupported_media_type",
                                           message: "send one image with Content-Type \(MediaType.accepted)"))
        }
        return (service, uid, type)
    }
}
