import Logging
import Posix
import Redis
import Testing

/// Runs `loop` until `body`'s work calls `finish`, or until the patience runs out (then the
/// test fails: a bound for a broken client, not a measure of a working one).
private func run(_ loop: EventLoop, _ body: (_ finish: @escaping () -> Void) -> Void) throws -> Bool {
    var finished = false
    body {
        finished = true
        loop.stop()
    }
    loop.schedule(afterMilliseconds: 60_000) { loop.stop() }
    try loop.run()
    return finished
}

private let logger = Logger(label: "redis-test")

@Test func sendsCommandsAndSurfacesErrorReplies() throws {
    let redis = try RedisProcess(port: try RedisProcess.freePort())
    defer { redis.stop() }
    let loop = try EventLoop()
    let client = RedisClient(url: RedisURL(host: "127.0.0.1", port: redis.port), loop: loop, logger: logger)
    var answers: [Result<RESPValue, RedisError>] = []
    let finished = try run(loop) { finish in
        client.ready = {
            client.send(["SET", "greeting", "hello"]) { answers.append($0) }
            client.send(["GET", "greeting"]) { answers.append($0) }
            client.send(["NO-SUCH-COMMAND"]) { answers.append($0) }
            client.send(["INCRBY", "counter", "5"]) {
                answers.append($0)
                finish()
            }
        }
        client.start()
    }
    client.close()
    #expect(finished)
    #expect(answers.count == 4)
    #expect(try answers[0].get() == .simple("OK"))
    #expect(try answers[1].get() == .bulk(Array("hello".utf8)))
    guard case .failure(.reply(let message)) = answers[2] else {
        Issue.record("an unknown command should fail with Redis's error, not \(answers[2])")
        return
    }
    #expect(message.hasPrefix("ERR"))
    #expect(try answers[3].get() == .integer(5))
}

@Test func failsAtOnceWithoutAConnectionAndConnectsOnceRedisIsUp() throws {
    let port = try RedisProcess.freePort()
    let loop = try EventLoop()
    let client = RedisClient(url: RedisURL(host: "127.0.0.1", port: port), loop: loop, logger: logger)
    var early: Result<RESPValue, RedisError>?
    var redis: RedisProcess?
    var pong: RESPValue?
    let finished = try run(loop) { finish in
        client.send(["PING"]) { early = $0 }
        client.ready = {
            client.send(["PING"]) { result in
                pong = try? result.get()
                finish()
            }
        }
        // Refused first, then retried with backoff until the server below is up.
        client.down = { _ in
            if redis == nil { redis = try? RedisProcess(port: port) }
        }
        client.start()
    }
    client.close()
    redis?.stop()
    #expect(finished)
    guard case .failure(.unavailable) = early else {
        Issue.record("a command before the connection should fail as unavailable, not \(String(describing: early))")
        return
    }
    #expect(pong == .simple("PONG"))
}

@Test func reconnectsAfterRedisRestartsAndSubscribesAgain() throws {
    let port = try RedisProcess.freePort()
    var redis = try RedisProcess(port: port)
    let loop = try EventLoop()
    let url = RedisURL(host: "127.0.0.1", port: port)
    let client = RedisClient(url: url, loop: loop, logger: logger)
    let subscriber = RedisSubscriber(url: url, loop: loop, logger: logger)
    var received: [String] = []
    var readies = 0
    var restarted = false
    let finished = try run(loop) { finish in
        subscriber.message = { channel, payload in
            received.append(channel + ":" + String(decoding: payload, as: UTF8.self))
            if received.count == 1 {
                // Redis goes away under both connections and comes back on the same port.
                redis.stop()
                redis = try! RedisProcess(port: port)
                restarted = true
            } else {
                finish()
            }
        }
        var subscribed = false
        subscriber.ready = {
            guard !subscribed else { return }
            subscribed = true
            subscriber.subscribe("news") { client.send(["PUBLISH", "news", "first"]) }
        }
        client.ready = {
            readies += 1
            if restarted { publishUntilHeard(client, loop, { received.count > 1 }) }
        }
        client.start()
        subscriber.start()
    }
    client.close()
    subscriber.close()
    redis.stop()
    #expect(finished)
    #expect(readies >= 2)
    #expect(received.first == "news:first")
    #expect(received.last == "news:again")
}

/// Publishes "again" on `news` every 100 ms until `heard` says the subscriber got it: after a
/// restart the subscriber's new subscription may come after the client's first publish.
private func publishUntilHeard(_ client: RedisClient, _ loop: EventLoop, _ heard: @escaping () -> Bool) {
    guard !heard() else { return }
    client.send(["PUBLISH", "news", "again"])
    loop.schedule(afterMilliseconds: 100) { publishUntilHeard(client, loop, heard) }
}

@Test func authenticatesAndSelectsTheDatabaseOfTheURL() throws {
    let redis = try RedisProcess(port: try RedisProcess.freePort(), arguments: ["--requirepass", "open-sesame"])
    defer { redis.stop() }
    let loop = try EventLoop()
    let url = RedisURL("redis://:open-sesame@127.0.0.1:\(redis.port)/2")!
    let client = RedisClient(url: url, loop: loop, logger: logger)
    var info: String?
    let finished = try run(loop) { finish in
        client.ready = {
            client.send(["CLIENT", "INFO"]) { result in
                info = (try? result.get())?.text
                finish()
            }
        }
        client.start()
    }
    client.close()
    #expect(finished)
    #expect(info?.contains(" db=2 ") == true, "\(String(describing: info))")
}

@Test func surfacesARefusedPasswordAndKeepsTrying() throws {
    let redis = try RedisProcess(port: try RedisProcess.freePort(), arguments: ["--requirepass", "open-sesame"])
    defer { redis.stop() }
    let loop = try EventLoop()
    let client = RedisClient(url: RedisURL("redis://:guess@127.0.0.1:\(redis.port)")!, loop: loop, logger: logger)
    var refusals: [RedisError] = []
    let finished = try run(loop) { finish in
        client.down = { error in
            if case .reply = error { refusals.append(error) }
            // Two refusals: the first, and the one after the backoff's reconnect.
            if refusals.count == 2 { finish() }
        }
        client.start()
    }
    client.close()
    #expect(finished)
    guard case .reply(let message) = refusals.first else {
        Issue.record("the refused AUTH should surface Redis's error, not \(refusals)")
        return
    }
    #expect(message.hasPrefix("WRONGPASS") || message.contains("invalid"))
}
