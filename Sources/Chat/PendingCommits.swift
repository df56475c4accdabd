/// What waits for the store: completions, in the order they were registered, and the messages
/// that join the history once their ticket is durable.
///
/// One value in one stored property of the service, so that a send and a flush pay one
/// run-time exclusivity check for the queues instead of one per queue and per element read
/// (docs/architecture.md, "Exclusivity checks on the message path"). The completions leave
/// the queue before they run: they may register new ones.
struct PendingCommits {
    private var completions: [PendingCompletion] = []
    private var completionHead = 0
    private var messages: [PendingMessage] = []
    private var messageHead = 0
    /// The pending messages that came with a `clientId`, by sender and `clientId`, so that a
    /// resend while the first is still on its way to the disk waits for it instead of storing
    /// it twice.
    private(set) var byClient: [ClientMessageKey: (ticket: UInt64, group: String, message: ChatMessage)] = [:]

    /// Whether some completions still wait for the disk.
    var hasCompletions: Bool { completionHead < completions.count }

    mutating func add(_ ticket: UInt64, completion: @escaping (Bool) -> Void) {
        completions.append(PendingCompletion(ticket: ticket, run: completion))
    }

    /// Adds `completion` and `message`, which joins the history of `group` once `ticket` is
    /// durable. The message is moved in: a copy would retain each of its strings.
    mutating func add(_ ticket: UInt64, message: consuming ChatMessage, in group: String, completion: @escaping (Bool) -> Void) {
        add(ticket, completion: completion)
        if let clientId = message.clientId {
            byClient[ClientMessageKey(user: message.user, clientId: clientId)] = (ticket, group, message)
        }
        messages.append(PendingMessage(ticket: ticket, group: group, message: consume message))
    }

    /// Takes out the messages whose ticket is at most `ticket`, in ticket order, and hands each
    /// to `body` with its group and ticket. `body` must not reach this queue.
    mutating func removeMessages(through ticket: UInt64, _ body: (consuming ChatMessage, consuming String, UInt64) -> Void) {
        while messageHead < messages.count, messages[messageHead].ticket <= ticket {
            let index = messageHead
            messageHead += 1
            // Moved out, leaving an empty string and nil: nothing for the queue to retain
            // until it is emptied.
            var group = ""
            swap(&group, &messages[index].group)
            guard let message = messages[index].message.take() else { continue }
            if let clientId = message.clientId {
                byClient[ClientMessageKey(user: message.user, clientId: clientId)] = nil
            }
            body(message, group, messages[index].ticket)
        }
        if messageHead == messages.count {
            messages.removeAll(keepingCapacity: true)
            messageHead = 0
        }
    }

    /// Moves the completions at the head whose ticket is at most `ticket` into `ready`, in the
    /// order they were registered.
    mutating func removeCompletions(through ticket: UInt64, into ready: inout [PendingCompletion]) {
        let start = completionHead
        while completionHead < completions.count, completions[completionHead].ticket <= ticket {
            completionHead += 1
        }
        ready.append(contentsOf: completions[start..<completionHead])
        // Reset the FIFO when drained; compact it when a long backlog has been consumed, so
        // the array neither grows forever nor is shifted on every completion.
        if completionHead == completions.count {
            completions.removeAll(keepingCapacity: true)
            completionHead = 0
        } else if completionHead > 1024 {
            completions.removeFirst(completionHead)
            completionHead = 0
        }
    }
}

/// A message waiting for the store's ticket before it joins the history.
struct PendingMessage {
    let ticket: UInt64
    var group: String
    var message: ChatMessage?
}

/// A completion waiting for the store's ticket. A struct rather than a tuple: a closure kept
/// in an array of tuples is stored behind a reabstraction thunk, one allocation per change.
struct PendingCompletion {
    let ticket: UInt64
    let run: (Bool) -> Void
}
