import Crypto
import JSON

/// Uploaded media (`POST /api/v1/media`, `GET /media/{id}`, `DELETE /api/v1/media/{id}`): the
/// records under `Media/<id>`, the per-user quota and upload rate. The server writes and reads
/// the files themselves off the event loop and calls in here around that (docs/protocol.md,
/// "Media").
///
/// An upload goes: `admitUpload` from the request head (token, rate, quota against the
/// announced length, before a byte of the body is read); `beginUpload` with the whole body
/// (quota again, counting the caller's other uploads still on their way to the disk); the file
/// is written and made durable; `finishUpload` records it and answers once the record is
/// durable too, or `abandonUpload` if the file could not be written.
extension ChatService {
    /// The user a session token signs in, or nil when it is invalid, expired or revoked.
    public func userID(forToken token: String) -> String? {
        validSession(token)?.userID
    }

    /// Checks an upload of `length` bytes by `uid` from its head alone and takes one of the
    /// user's uploads for this minute.
    public func admitUpload(uid: String, length: Int) throws(ChatError) {
        guard acceptsChanges else { throw ChatError.clusterUnavailable }
        try checkQuota(uid, adding: length)
        guard uploadRate.admit(uid, now: clock.monotonicNanoseconds()) else {
            let wait = uploadRate.secondsUntilToken(uid, now: clock.monotonicNanoseconds())
            throw ChatError(.rateLimited,
                            "too many uploads: at most \(configuration.uploadsPerMinute) a minute; try again in \(wait) s")
        }
    }

    /// Reserves `bytes` of `uid`'s quota for an upload whose body has arrived and returns the
    /// new media id: a push id (creation order) followed by 22 random characters (132 bits),
    /// so a URL cannot be guessed from another one, like a Firebase download URL.
    public func beginUpload(uid: String, bytes: Int) throws(ChatError) -> String {
        try checkQuota(uid, adding: bytes)
        uploadsInFlight[uid, default: 0] += bytes
        let random = Crypto.randomBytes(22)
        return ids.next(milliseconds: clock.milliseconds())
            + String(decoding: random.map { PushIDGenerator.alphabet[Int($0 & 63)] }, as: UTF8.self)
    }

    /// The file of an upload `beginUpload` accepted is durable: stores its record and calls
    /// `completion` with it once that is durable too.
    public func finishUpload(
        id: String, uid: String, type: MediaType, bytes: Int, completion: @escaping (Result<MediaRecord, ChatError>) -> Void
    ) {
        releaseInFlight(uid, bytes)
        let record = MediaRecord(owner: uid, type: type, bytes: bytes, createdAt: clock.milliseconds())
        state.media[id] = record
        state.mediaUsage[uid, default: 0] += bytes
        commit([.set(path: ["Media", id], value: record.treeValue)]) { succeeded in
            completion(succeeded ? .success(record) : .failure(.storeFailed))
        }
    }

    /// The file of an upload `beginUpload` accepted could not be written: its bytes no longer
    /// count against the quota.
    public func abandonUpload(uid: String, bytes: Int) {
        releaseInFlight(uid, bytes)
    }

    /// The record of media `id`, or nil when there is none.
    public func mediaRecord(_ id: String) -> MediaRecord? {
        state.media[id]
    }

    /// Deletes the record of media `id` on behalf of `uid`, its owner, and calls `completion`
    /// once that is durable; the caller then removes the file. `not_found` for an unknown id,
    /// `forbidden` for someone else's.
    public func deleteMedia(
        id: String, uid: String, completion: @escaping (Result<MediaRecord, ChatError>) -> Void
    ) throws(ChatError) {
        guard acceptsChanges else { throw ChatError.clusterUnavailable }
        guard let record = state.media[id] else { throw ChatError(.notFound, "no such media") }
        guard record.owner == uid else { throw ChatError(.forbidden, "only the user who uploaded it may delete it") }
        state.media[id] = nil
        let left = (state.mediaUsage[uid] ?? 0) - record.bytes
        state.mediaUsage[uid] = left > 0 ? left : nil
        commit([.delete(path: ["Media", id])]) { succeeded in
            completion(succeeded ? .success(record) : .failure(.storeFailed))
        }
    }

    /// Whether a stored upload may take `adding` more bytes of `uid`'s quota.
    private func checkQuota(_ uid: String, adding: Int) throws(ChatError) {
        let used = (state.mediaUsage[uid] ?? 0) + (uploadsInFlight[uid] ?? 0)
        guard used + adding <= configuration.mediaQuotaBytes else {
            throw ChatError(.tooLarge,
                            "this upload would pass your media quota of \(configuration.mediaQuotaBytes) bytes "
                                + "(\(used) used); delete some first")
        }
    }

    private func releaseInFlight(_ uid: String, _ bytes: Int) {
        let left = (uploadsInFlight[uid] ?? 0) - bytes
        uploadsInFlight[uid] = left > 0 ? left : nil
    }

    /// Whether `id` has the shape of a media id: a push id and 22 more characters of its
    /// alphabet. Checked before any lookup, so a path can never name anything else.
    public static func isMediaID(_ id: String) -> Bool {
        id.utf8.count == 42 && id.utf8.allSatisfy { PushIDGenerator.alphabet.contains($0) }
    }
}
