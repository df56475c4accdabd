import Chat
import HTTP
import JSON
import Store

/// Media stored by the server (docs/protocol.md, "Media"): `POST /api/v1/media` uploads one
/// image with a session token, `GET /media/{id}` serves it to anyone with the URL, `DELETE
/// /api/v1/media/{id}` lets its owner remove it. Files are written and read on `MediaFiles`'
/// worker threads; the answers come back through the chat loop's inbox, like fsync completions,
/// and from there to the connection's loop.
extension Server {
    /// Decides an upload from its head alone, before a byte of the body is kept: token, type,
    /// size, the user's upload rate and quota. Other requests get the API's body limit.
    ///
    /// The accounts and quotas live on the chat loop. On another loop the size is checked here
    /// and the rest there, while the connection reads no further than what came with the head
    /// (`BodyAdmission.hold`): admitted, it reads the body (`Connection.releaseBody`), and the
    /// complete body goes to the chat loop with the request; refused, it is answered and closed
    /// (`Connection.refuseBody`). A body that came whole with its head goes to the chat loop
    /// behind the check and is checked again there (`upload`).
    func admitBody(of head: HTTPRequestHead, on connection: Connection) -> BodyAdmission {
        guard head.method == "POST", Route(path: head.path) == .mediaUpload else {
            return .read(maxBytes: limits.maxBodyBytes, deadline: nil)
        }
        guard case .length(let length) = head.body, length <= configuration.maxUploadBytes else {
            return .refuse(.error(.contentTooLarge, code: "too_large",
                                  message: "an upload may be at most \(configuration.maxUploadBytes) bytes"))
        }
        let deadline = now + Server.nanoseconds(configuration.uploadTimeout)
        guard index != 0 else {
            return uploadRefusal(head, length: length).map(BodyAdmission.refuse)
                ?? .read(maxBytes: configuration.maxUploadBytes, deadline: deadline)
        }
        let handle = ConnectionHandle(connection, home: index)
        onChatLoop { chatLoop in
            guard let refusal = chatLoop.uploadRefusal(head, length: length) else {
                chatLoop.admittedUploads[ObjectIdentifier(handle.connection)] = handle
                chatLoop.onHome(handle) { $0.releaseBody() }
                return
            }
            chatLoop.onHome(handle) { $0.refuseBody(refusal) }
        }
        return .hold(maxBytes: configuration.maxUploadBytes, deadline: deadline)
    }

    /// On the chat loop: the answer that refuses an upload of `length` bytes announced by
    /// `head`, or nil when it may come.
    private func uploadRefusal(_ head: HTTPRequestHead, length: Int) -> HTTPResponse? {
        do throws(Refusal) {
            let (service, uid, _) = try uploader(head)
            do throws(ChatError) {
                try service.admitUpload(uid: uid, length: length)
            } catch {
                return Server.response(for: error)
            }
        } catch {
            return error.response
        }
        return nil
    }

    /// `POST /api/v1/media`: checks the body against its type, writes the file durably off the
    /// loop, records it, and answers `201 {"id","url","type","bytes"}` once both are on disk.
    /// An upload from another loop whose head the chat loop did not admit (`admitBody`; the
    /// refusal may not have reached it before the body was complete) is checked again here.
    func upload(_ head: HTTPRequestHead, body: [UInt8], from connection: ObjectIdentifier?, reply: @escaping (HTTPResponse) -> Void) {
        if let connection, admittedUploads.removeValue(forKey: connection) == nil,
           let refusal = uploadRefusal(head, length: body.count) {
            return reply(refusal)
        }
        let (service, uid, type): (ChatService<ChatDelivery>, String, MediaType)
        do throws(Refusal) {
            (service, uid, type) = try uploader(head)
        } catch {
            return reply(error.response)
        }
        guard !body.isEmpty else {
            return reply(.error(.badRequest, code: "bad_request", message: "the body is the image: send its bytes"))
        }
        guard type.matches(body) else {
            return reply(.error(.unsupportedMediaType, code: "unsupported_media_type",
                                          message: "the bytes are not a \(type.rawValue) image"))
        }
        guard let mediaFiles else {
            return reply(.error(.serviceUnavailable, code: "unavailable", message: "media storage is not open"))
        }
        let id: String
        do throws(ChatError) {
            id = try service.beginUpload(uid: uid, bytes: body.count)
        } catch {
            return reply(Server.response(for: error))
        }
        let waiting = LoopBound((reply, service))
        let loop = self.loop
        let bytes = body.count
        mediaFiles.write(id, body) { error in
            loop.execute {
                let (reply, service) = waiting.value
                if error != nil {
                    service.abandonUpload(uid: uid, bytes: bytes)
                    return reply(.error(.internalServerError, code: "internal",
                                                  message: "the file could not be stored; try again later"))
                }
                service.finishUpload(id: id, uid: uid, type: type, bytes: bytes) { result in
                    switch result {
                    case .success(let record):
                        let json = JSONValue.object([
                            "id": .string(id), "url": .string("/media/" + id), "type": .string(record.type.rawValue),
                            "bytes": .integer(Int64(record.bytes)),
                        ])
                        reply(HTTPResponse(status: .created, headers: ["Content-Type": "application/json"],
                                                     body: json.serialized))
                    case .failure(let error):
                        reply(Server.response(for: error))
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
    func serveMedia(_ id: String, _ head: HTTPRequestHead, reply: @escaping (HTTPResponse) -> Void) {
        guard let service = chat?.service, let mediaFiles, ChatService<ChatDelivery>.isMediaID(id),
              let record = service.mediaRecord(id)
        else {
            return reply(.error(.notFound, code: "not_found", message: "no such media"))
        }
        var headers = HTTPHeaders()
        let etag = "\"\(id)\""
        headers.add("ETag", etag)
        headers.add("Cache-Control", "public, max-age=31536000, immutable")
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Content-Security-Policy", "sandbox; default-src 'none'")
        if StaticFiles.matches(etag, head.headers.values("If-None-Match")) {
            return reply(HTTPResponse(status: .notModified, headers: headers))
        }
        headers.add("Content-Type", record.type.rawValue)
        if head.method == "HEAD" {
            headers.add("Content-Length", String(record.bytes))
            return reply(HTTPResponse(status: .ok, headers: headers))
        }
        let waiting = LoopBound(reply)
        let loop = self.loop
        let found = headers
        mediaFiles.read(id) { bytes in
            loop.execute {
                guard let bytes else {
                    return waiting.value(.error(.notFound, code: "not_found", message: "no such media"))
                }
                waiting.value(HTTPResponse(status: .ok, headers: found, body: bytes))
            }
        }
    }

    /// `DELETE /api/v1/media/{id}` by the uploader: the record goes (durably), then the file;
    /// answers `204`.
    func deleteMedia(_ id: String, _ head: HTTPRequestHead, reply: @escaping (HTTPResponse) -> Void) {
        let (service, uid): (ChatService<ChatDelivery>, String)
        do throws(Refusal) {
            (service, uid) = try signedIn(head)
        } catch {
            return reply(error.response)
        }
        guard ChatService<ChatDelivery>.isMediaID(id) else {
            return reply(.error(.notFound, code: "not_found", message: "no such media"))
        }
        let mediaFiles = self.mediaFiles
        do throws(ChatError) {
            try service.deleteMedia(id: id, uid: uid) { result in
                switch result {
                case .success:
                    mediaFiles?.remove(id)
                    reply(HTTPResponse(status: .noContent))
                case .failure(let error):
                    reply(Server.response(for: error))
                }
            }
            } catch {
            reply(Server.response(for: error))
        }
    }

    /// The answer that refuses a request, thrown by the checks below.
    struct Refusal: Error {
        var response: HTTPResponse
    }

    /// The service and the user an `Authorization: Bearer <session token>` signs in; `503`
    /// before the store is loaded, `401` without a valid token.
    private func signedIn(_ head: HTTPRequestHead) throws(Refusal) -> (ChatService<ChatDelivery>, String) {
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
    private func uploader(_ head: HTTPRequestHead) throws(Refusal) -> (ChatService<ChatDelivery>, String, MediaType) {
        let (service, uid) = try signedIn(head)
        guard let type = head.headers["Content-Type"].flatMap(MediaType.init(contentType:)) else {
            throw Refusal(response: .error(.unsupportedMediaType, code: "unsupported_media_type",
                                           message: "send one image with Content-Type \(MediaType.accepted)"))
        }
        return (service, uid, type)
    }
}
