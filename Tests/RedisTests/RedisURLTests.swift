import Redis
import Testing

@Test func parsesHostPortAndDatabase() {
    #expect(RedisURL("redis://127.0.0.1:6380/2") == RedisURL(host: "127.0.0.1", port: 6380, database: 2))
}

@Test func defaultsPortAndDatabase() {
    #expect(RedisURL("redis://cache") == RedisURL(host: "cache"))
    #expect(RedisURL("redis://cache/") == RedisURL(host: "cache"))
}

@Test func parsesUserAndPassword() {
    let url = RedisURL("redis://app:s3cr@t@redis.internal:6379/0")
    #expect(url == RedisURL(host: "redis.internal", user: "app", password: "s3cr@t"))
}

@Test func parsesPasswordWithoutUser() {
    #expect(RedisURL("redis://:hunter2@localhost") == RedisURL(host: "localhost", password: "hunter2"))
}

@Test func parsesBracketedIPv6Host() {
    #expect(RedisURL("redis://[::1]:7000") == RedisURL(host: "::1", port: 7000))
}

@Test func refusesOtherShapes() {
    for text in ["", "redis://", "http://localhost", "rediss://localhost", "redis://host:0", "redis://host:70000",
                 "redis://host:port", "redis://host/db", "redis://user@host", "redis://user:@host", "redis://[::1"] {
        #expect(RedisURL(text) == nil, "\(text)")
    }
}

@Test func descriptionHidesThePassword() {
    #expect(RedisURL("redis://app:secret@h:1/3")!.description == "redis://app:***@h:1/3")
    #expect(!RedisURL("redis://:secret@h")!.description.contains("secret"))
}
