import Store

/// A page of history as `history` and `subscribe` ask for it (docs/protocol.md, "Operations").
struct PageRequest {
    /// Messages after this id, oldest first.
    var after: String?
    /// Else messages before this id (the latest when nil), newest `limit` of them.
    var before: String?
    var limit: Int
}

/// Paging over memory and disk: a page that memory holds is answered at once; one that reaches
/// into older messages is read from the store's segments off the event loop and then joined
/// with what memory holds at that moment, so messages that arrived meanwhile are not missed.
extension MessageLog {
    /// What answering a request takes.
    enum PagePlan {
        /// The page, from memory alone.
        case ready([ChatMessage], more: Bool)
        /// Read `query` from the store, then `combine`; memory answers for ids from `boundary`
        /// on. If `evictions` has changed by then, memory moved: plan again.
        case read(MessageQuery, boundary: String?, evictions: Int)
    }

    func plan(_ request: PageRequest, group: String) -> PagePlan {
        if let after = request.after {
            if olderOnDisk == 0 || (messages.first.map { after >= $0.id } ?? false) {
                let start = firstIndex(after: after)
                let end = min(messages.count, start + request.limit)
                return .ready(Array(messages[start..<end]), more: end < messages.count)
            }
            let boundary = messages.first?.id
            return .read(.newer(group: group, after: after, before: boundary, limit: request.limit), boundary: boundary, evictions: evictions)
        }
        let end = request.before.map { firstIndex(notBefore: $0) } ?? messages.count
        let start = end - request.limit
        if start >= 0 {
            return .ready(Array(messages[start..<end]), more: start > 0 || olderOnDisk > 0)
        }
        if olderOnDisk == 0 {
            return .ready(Array(messages[0..<end]), more: false)
        }
        let boundary = end > 0 ? messages[0].id : request.before
        return .read(.older(group: group, before: boundary, limit: request.limit - end), boundary: boundary, evictions: evictions)
    }

    /// The page: `disk` (read for a `.read` plan with `boundary`) joined with memory now.
    func combine(_ request: PageRequest, boundary: String?, disk: [ChatMessage], diskMore: Bool) -> ([ChatMessage], more: Bool) {
        if let after = request.after {
            let start = boundary.map { firstIndex(notBefore: $0) } ?? firstIndex(after: disk.last?.id ?? after)
            let combined = disk + messages[start...].prefix(request.limit + 1)
            return (Array(combined.prefix(request.limit)), diskMore || combined.count > request.limit)
        }
        let start = boundary.map { firstIndex(notBefore: $0) } ?? disk.last.map { firstIndex(after: $0.id) } ?? 0
        let end = max(start, request.before.map { firstIndex(notBefore: $0) } ?? messages.count)
        let combined = disk + messages[start..<end]
        return (Array(combined.suffix(request.limit)), diskMore || combined.count > request.limit)
    }
}
