import Foundation
import JSON
import Testing
@testable import Chat

/// Uploads one `bytes`-byte file for `uid` through the service as the server does.
private func store(_ h: Harness, _ uid: String, bytes: Int) throws -> String {
    try h.service.admitUpload(uid: uid, length: bytes)
    let id = try h.service.beginUpload(uid: uid, bytes: bytes)
    var stored: Result<MediaRecord, ChatError>?
    h.service.finishUpload(id: id, uid: uid, type: .png, bytes: bytes) { stored = $0 }
    h.settle()
    #expect(try stored?.get().bytes == bytes)
    return id
}

@Test func mediaIdsArePushIdsWithARandomTailAndNeverRepeat() throws {
    let h = try Harness()
    let uid = h.user("ada").id
    let first = try h.service.beginUpload(uid: uid, bytes: 1)
    let second = try h.service.beginUpload(uid: uid, bytes: 1)
    #expect(ChatService<FakeTransport>.isMediaID(first) && ChatService<FakeTransport>.isMediaID(second))
    #expect(first != second && first.prefix(20) < second.prefix(20))
    #expect(PushIDGenerator.timestamp(of: String(first.prefix(20))) == h.now.milliseconds)
    #expect(!ChatService<FakeTransport>.isMediaID("../" + String(first.dropFirst(3))))
    #expect(!ChatService<FakeTransport>.isMediaID(String(first.dropLast())))
}

@Test func aRecordIsStoredDurablyAndSurvivesARestartAndACheckpoint() throws {
    let h = try Harness()
    let uid = h.user("ada").id
    let id = try store(h, uid, bytes: 1234)
    try h.restart()
    #expect(h.service.mediaRecord(id) == MediaRecord(owner: uid, type: .png, bytes: 1234, createdAt: h.now.milliseconds))
    // The start applied the journal; a second record gives the checkpoint one to apply.
    let second = try store(h, uid, bytes: 10)
    h.checkpoint()
    let document = try String(contentsOfFile: h.folder + "/data/documents/Media.json", encoding: .utf8)
    #expect(document.contains(id) && document.contains(second))
    try h.restart()
    #expect(h.service.mediaRecord(id)?.bytes == 1234)
    #expect(h.service.state.mediaUsage[uid] == 1244)
    #expect(h.service.subtree(["Media", id, "owner"]) == .string(uid))
}

@Test func theQuotaCountsStoredUploadsAndThoseStillOnTheirWay() throws {
    let h = try Harness { $0.mediaQuotaBytes = 1000 }
    let uid = h.user("ada").id
    let other = h.user("bob").id
    _ = try store(h, uid, bytes: 600)
    #expect(throws: ChatError.self) { try h.service.admitUpload(uid: uid, length: 401) }
    try h.service.admitUpload(uid: uid, length: 400)
    _ = try h.service.beginUpload(uid: uid, bytes: 300)
    #expect(throws: ChatError.self) { try h.service.beginUpload(uid: uid, bytes: 101) }
    h.service.abandonUpload(uid: uid, bytes: 300)
    _ = try h.service.beginUpload(uid: uid, bytes: 400)
    try h.service.admitUpload(uid: other, length: 1000)
}

@Test func uploadsPerMinuteRefillOverTime() throws {
    let h = try Harness { $0.uploadsPerMinute = 2 }
    let uid = h.user("ada").id
    try h.service.admitUpload(uid: uid, length: 1)
    try h.service.admitUpload(uid: uid, length: 1)
    do {
        try h.service.admitUpload(uid: uid, length: 1)
        Issue.record("a third upload within the minute was admitted")
    } catch {
        #expect(error.code == .rateLimited)
    }
    h.advance(30_000)
    try h.service.admitUpload(uid: uid, length: 1)
}

@Test func onlyTheOwnerDeletesAndTheQuotaIsGivenBack() throws {
    let h = try Harness { $0.mediaQuotaBytes = 1000 }
    let ada = h.user("ada").id
    let bob = h.user("bob").id
    let id = try store(h, ada, bytes: 1000)
    #expect(throws: ChatError(.forbidden, "only the user who uploaded it may delete it")) {
        try h.service.deleteMedia(id: id, uid: bob) { _ in }
    }
    var deleted: Result<MediaRecord, ChatError>?
    try h.service.deleteMedia(id: id, uid: ada) { deleted = $0 }
    h.settle()
    #expect(try deleted?.get().owner == ada)
    #expect(h.service.mediaRecord(id) == nil && h.service.state.mediaUsage[ada] == nil)
    #expect(throws: ChatError(.notFound, "no such media")) { try h.service.deleteMedia(id: id, uid: ada) { _ in } }
    try h.restart()
    #expect(h.service.mediaRecord(id) == nil)
}

@Test func messagesAndAvatarsTakeTheRelativeUrlOfStoredMediaOnly() throws {
    let h = try Harness()
    let ada = h.user("ada")
    let gid = h.group("g", owner: ada.client)
    let id = try store(h, ada.id, bytes: 10)
    let sent = h.call(ada.client, ["op": "send", "group": .string(gid), "imageUrl": .string("/media/" + id)])
    #expect(sent["message"]?["imageUrl"] == .string("/media/" + id))
    let profile = h.call(ada.client, ["op": "profile", "avatar": .string("/media/" + id)])
    #expect(profile["user"]?["avatar"] == .string("/media/" + id))
    let unknown = "/media/" + String(repeating: "a", count: 42)
    #expect(h.call(ada.client, ["op": "send", "group": .string(gid), "imageUrl": .string(unknown)]).code == "bad_request")
    #expect(h.call(ada.client, ["op": "profile", "avatar": "/elsewhere/x.png"]).code == "bad_request")
    #expect(h.call(ada.client, ["op": "profile", "avatar": "https://example.com/a.png"]).isOK)
}
