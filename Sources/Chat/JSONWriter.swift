import JSON

/// Builds one JSON object straight into bytes: `{"op":"ok","id":7,"message":{...}}`.
///
/// Replies and events are written field by field without a `JSONValue` in between, because a
/// message event is built for every send. Keys are static ASCII names of the protocol, so they
/// are copied without escaping; values go through `JSONEncoding`'s escaping.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init() {
        // An acknowledged `send` (the message echoed in full) or a message event fits without
        // growing: 256 bytes, where 128 cost a reallocation and a copy for each of them.
        bytes.reserveCapacity(256)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Continues `bytes` (taken, left empty) with an object, for one written after what a
    /// buffer already holds (a nested object, a message's value in its journal line) without
    /// a buffer of its own.
    init(continuing bytes: inout [UInt8]) {
        swap(&self.bytes, &bytes)
        self.bytes.append(UInt8(ascii: "{"))
    }

    /// Starts a reply or event: `{"op":"<op>"`.
    init(op: StaticString) {
        self.init()
        string("op", op)
    }

    /// Starts the answer to a request: `{"op":"<op>"`, then the request's `id` when it had one.
    init(op: StaticString, answering id: JSONValue?) {
        self.init(op: op)
        if let id { value("id", id) }
    }

    /// Appends `,"key":` (or `"key":` first).
    mutating func key(_ key: StaticString) {
        // Put together on the stack and appended once: an acknowledged send writes 30 keys,
        // and an append per piece checked the buffer's uniqueness and capacity four times.
        let comma = needsComma ? 1 : 0
        needsComma = true
        let count = key.utf8CodeUnitCount
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: comma + count + 3) { piece in
            if comma == 1 { piece[0] = UInt8(ascii: ",") }
            piece[comma] = UInt8(ascii: "\"")
            (piece.baseAddress! + comma + 1).initialize(from: key.utf8Start, count: count)
            piece[comma + count + 1] = UInt8(ascii: "\"")
            piece[comma + count + 2] = UInt8(ascii: ":")
            bytes.append(contentsOf: piece)
        }
    }

    /// Appends a key whose name is runtime data (a user id in `receivedBy`), escaped.
    mutating func dynamicKey(_ key: String) {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
        JSONEncoding.appendEscapedString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func string(_ key: StaticString, _ value: StaticString) {
        self.key(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: value.utf8Start, count: value.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
    }

    /// A string field; nil is written as `null`. Returns where the value (quoted) lies in `bytes`.
    @discardableResult
    mutating func string(_ key: StaticString, _ value: String?) -> Range<Int> {
        self.key(key)
        let start = bytes.count
        if let value { JSONEncoding.appendEscapedString(value, to: &bytes) } else { null() }
        return start..<bytes.count
    }

    /// An integer field. Returns where the digits lie in `bytes`.
    @discardableResult
    mutating func integer(_ key: StaticString, _ value: Int64) -> Range<Int> {
        self.key(key)
        let start = bytes.count
        JSONEncoding.appendInteger(value, to: &bytes)
        return start..<bytes.count
    }

    mutating func integer(_ key: StaticString, _ value: Int) {
        integer(key, Int64(value))
    }

    mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    /// A field whose value is already JSON.
    mutating func raw(_ key: StaticString, _ json: [UInt8]) {
        self.key(key)
        bytes.append(contentsOf: json)
    }

    /// A field holding a JSON value (the request's `id`, echoed as it came).
    mutating func value(_ key: StaticString, _ value: JSONValue) {
        self.key(key)
        value.serialize(into: &bytes)
    }

    /// A field holding an array of strings.
    mutating func strings<S: Sequence<String>>(_ key: StaticString, _ values: S) {
        self.key(key)
        bytes.append(UInt8(ascii: "["))
        var first = true
        for value in values {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            JSONEncoding.appendEscapedString(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A field holding an array of objects, each written by `body` into a fresh writer.
    mutating func objects<S: Sequence>(_ key: StaticString, _ values: S, _ body: (inout JSONWriter, S.Element) -> Void) {
        self.key(key)
        bytes.append(UInt8(ascii: "["))
        var first = true
        for value in values {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            nest { body(&$0, value) }
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A field holding one object written by `body`; returns where the object lies in `bytes`.
    @discardableResult
    mutating func object(_ key: StaticString, _ body: (inout JSONWriter) -> Void) -> Range<Int> {
        self.key(key)
        let start = bytes.count
        nest(body)
        return start..<bytes.count
    }

    /// An object written by `body` into this writer's own buffer: no buffer per object.
    private mutating func nest(_ body: (inout JSONWriter) -> Void) {
        var nested = JSONWriter(continuing: &bytes)
        body(&nested)
        bytes = nested.finished()
    }

    /// Appends bytes that are already JSON, after a `dynamicKey`.
    mutating func appendRaw(_ json: [UInt8]) {
        bytes.append(contentsOf: json)
    }

    mutating func null() {
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
    }

    /// The object, closed. The buffer is handed over, the writer left empty: as a consuming
    /// method the closing brace was appended to a copy still sharing the caller's buffer,
    /// which copied every reply and event once more (perf counted the allocations).
    mutating func finished() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        var result: [UInt8] = []
        swap(&result, &bytes)
        return result
    }
}
