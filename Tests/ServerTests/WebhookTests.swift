import Testing
@testable import Server

@Test func webhookURLsAreTakenApart() {
    #expect(WebhookTarget("http://hooks.example.com/presence") == WebhookTarget("http://hooks.example.com:80/presence"))
    let target = WebhookTarget("http://127.0.0.1:9000/a/b?c=d")
    #expect(target?.host == "127.0.0.1" && target?.port == 9000 && target?.path == "/a/b?c=d")
    #expect(WebhookTarget("http://[::1]:8080")?.hostHeader == "[::1]:8080")
    #expect(WebhookTarget("http://[::1]:8080")?.path == "/")
    for bad in ["https://x/", "http://", "http://x:0/", "http://x:70000/", "http://user@x/", "ftp://x", "http://x/a b"] {
        #expect(WebhookTarget(bad) == nil, "\(bad)")
    }
}

@Test func theSignatureCoversTheTimestampAndTheBody() {
    // HMAC-SHA256("secret", "1700000000.{}"), as Python's hmac module computes it.
    #expect(Webhook.signature(body: Array("{}".utf8), timestamp: 1_700_000_000, secret: Array("secret".utf8))
            == "b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163")
}

@Test func aBatchIsOneJSONObject() {
    #expect(Webhook.body([Array("{\"a\":1}".utf8), Array("{\"b\":2}".utf8)]) == Array(#"{"events":[{"a":1},{"b":2}]}"#.utf8))
}
