/// Entry points for parsing a whole document from the usual byte containers.
extension JSONValue {
    /// Parses `bytes` as one JSON text under `limits`.
    public static func parse(
        _ bytes: UnsafeRawBufferPointer,
        limits: JSONLimits = JSONLimits()
    ) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, limits: limits)
        return try parser.parseDocument()
    }

    /// Parses `bytes` as one JSON text under `limits`: an object's members in document order,
    /// nil for any other value (`JSONParser.parseDocumentMembers()`).
    public static func parseMembers(
        _ bytes: UnsafeRawBufferPointer, limits: JSONLimits = JSONLimits()
    ) throws(JSONError) -> [JSONParser.Member]? {
        var parser = JSONParser(bytes: bytes, limits: limits)
        return try parser.parseDocumentMembers()
    }

    /// `parseMembers` over an array of bytes.
    public static func parseMembers(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(JSONError) -> [JSONParser.Member]? {
        let result: Result<[JSONParser.Member]?, JSONError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> [JSONParser.Member]? in try parseMembers(raw, limits: limits) }
        }
        return try result.get()
    }

    /// The top-level object's members of `bytes` as ranges, nil when they cannot be given so
    /// (`JSONParser.parseDocumentSpans()`: `parseMembers` then says what the document is).
    public static func parseMemberSpans(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(JSONError) -> [JSONParser.MemberSpan]? {
        let result: Result<[JSONParser.MemberSpan]?, JSONError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> [JSONParser.MemberSpan]? in
                var parser = JSONParser(bytes: raw, limits: limits)
                return try parser.parseDocumentSpans()
            }
        }
        return try result.get()
    }

    /// Parses an array of bytes as one JSON text under `limits`.
    public static func parse(_ bytes: [UInt8], limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONValue {
        let result: Result<JSONValue, JSONError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONError) -> JSONValue in try parse(raw, limits: limits) }
        }
        return try result.get()
    }

    /// Parses the UTF-8 of `text` as one JSON text under `limits`.
    public static func parse(_ text: String, limits: JSONLimits = JSONLimits()) throws(JSONError) -> JSONValue {
        var text = text
        // withUTF8 makes the storage contiguous (a no-op for native strings) and lends it
        // without copying.
        let result: Result<JSONValue, JSONError> = text.withUTF8 { utf8 in
            Result { () throws(JSONError) -> JSONValue in try parse(UnsafeRawBufferPointer(utf8), limits: limits) }
        }
        return try result.get()
    }
}
