/// Percent-decoding of a request target's path and query (RFC 3986 §2.1, and the
/// `application/x-www-form-urlencoded` rule that `+` in a query means a space).
///
/// Targets reaching here are visible ASCII, checked by the head parser, so a part without `%` or
/// `+` is converted directly; only escaped parts are copied and checked for valid UTF-8.
enum PercentDecoding {
    /// Splits `target` at the first `?` into the decoded path and the decoded query parameters.
    static func splitTarget(
        _ target: UnsafeRawBufferPointer
    ) throws(HTTPParseError) -> (path: String, query: [String: String]) {
        guard let questionMark = target.firstIndex(of: UInt8(ascii: "?")) else {
            return (try decode(target, plusIsSpace: false), [:])
        }
        let path = try decode(UnsafeRawBufferPointer(rebasing: target[..<questionMark]), plusIsSpace: false)
        let query = try decodeQuery(UnsafeRawBufferPointer(rebasing: target[(questionMark + 1)...]))
        return (path, query)
    }

    /// Decodes `name=value` pairs separated by `&`; empty pairs are skipped, a name without `=`
    /// gets the empty string, and a repeated name keeps its last value.
    static func decodeQuery(_ query: UnsafeRawBufferPointer) throws(HTTPParseError) -> [String: String] {
        var parameters: [String: String] = [:]
        var pairStart = query.startIndex
        while pairStart <= query.endIndex {
            let pairEnd = query[pairStart...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
            if pairEnd > pairStart {
                let pair = query[pairStart..<pairEnd]
                let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pairEnd
                let name = try decode(UnsafeRawBufferPointer(rebasing: query[pairStart..<equals]), plusIsSpace: true)
                let valueStart = min(equals + 1, pairEnd)
                let value = try decode(UnsafeRawBufferPointer(rebasing: query[valueStart..<pairEnd]), plusIsSpace: true)
                parameters[name] = value
            }
            pairStart = pairEnd + 1
        }
        return parameters
    }

    /// Decodes `%XX` escapes (and `+` when `plusIsSpace`); a `%` without two hex digits, or
    /// escapes that do not form UTF-8, are malformed.
    static func decode(_ part: UnsafeRawBufferPointer, plusIsSpace: Bool) throws(HTTPParseError) -> String {
        let plus = UInt8(ascii: "+")
        let percent = UInt8(ascii: "%")
        guard part.contains(where: { $0 == percent || (plusIsSpace && $0 == plus) }) else {
            return String(decoding: part, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(part.count)
        var index = 0
        while index < part.count {
            let byte = part[index]
            if byte == percent {
                guard index + 2 < part.count,
                    let high = HTTPGrammar.hexValue(part[index + 1]),
                    let low = HTTPGrammar.hexValue(part[index + 2])
                else {
                    throw .malformed("the request target has a % not followed by two hex digits")
                }
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(plusIsSpace && byte == plus ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        guard let string = String(validating: decoded, as: UTF8.self) else {
            throw .malformed("the request target's escapes do not decode to UTF-8")
        }
        return string
    }
}
