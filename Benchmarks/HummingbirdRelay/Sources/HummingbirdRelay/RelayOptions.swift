/// Command-line options of the Hummingbird room relay.
///
/// Usage: `HummingbirdRelay PORT [--host ADDR] [--tls-cert PEM --tls-key PEM]
/// [--deflate] [--deflate-min-size BYTES] [--max-message BYTES]`.
/// Parsing is by hand so the benchmark peer pulls in nothing beyond Hummingbird itself.
struct RelayOptions: Sendable {
    /// TCP port to listen on (0 lets the kernel choose; the chosen one is printed).
    var port = 9101
    /// Address to bind; loopback by default because the peer only serves local benchmarks.
    var host = "127.0.0.1"
    /// PEM certificate chain; TLS is on when both this and `tlsKey` are given.
    var tlsCert: String?
    /// PEM private key for `tlsCert`.
    var tlsKey: String?
    /// Negotiate permessage-deflate (RFC 7692) when the client offers it.
    var deflate = false
    /// Smallest frame the server compresses; smaller ones go out uncompressed.
    /// Hummingbird's default is 256, which would leave 64-byte benchmark messages uncompressed.
    var deflateMinSize = 256
    /// Largest message (and frame) accepted from a client.
    var maxMessage = 1 << 20

    /// The usage line printed on a bad argument.
    static let usage = """
        usage: HummingbirdRelay PORT [--host ADDR] [--tls-cert PEM --tls-key PEM] \
        [--deflate] [--deflate-min-size BYTES] [--max-message BYTES]
        """

    /// Parses `arguments` (without the program name), or returns a message naming what was wrong.
    static func parse(_ arguments: [String]) -> Result<RelayOptions, OptionError> {
        var options = RelayOptions()
        var sawPort = false
        var index = 0
        func value(_ flag: String) -> Result<String, OptionError> {
            index += 1
            guard index < arguments.count else { return .failure(OptionError("\(flag) needs a value")) }
            return .success(arguments[index])
        }
        func integer(_ flag: String) -> Result<Int, OptionError> {
            value(flag).flatMap { text in
                guard let number = Int(text), number >= 0 else {
                    return .failure(OptionError("\(flag) needs a non-negative integer, not '\(text)'"))
                }
                return .success(number)
            }
        }
        do {
            while index < arguments.count {
                let argument = arguments[index]
                switch argument {
                case "--host": options.host = try value(argument).get()
                case "--tls-cert": options.tlsCert = try value(argument).get()
                case "--tls-key": options.tlsKey = try value(argument).get()
                case "--deflate": options.deflate = true
                case "--deflate-min-size": options.deflateMinSize = try integer(argument).get()
                case "--max-message": options.maxMessage = try integer(argument).get()
                case "-h", "--help": return .failure(OptionError(usage))
                default:
                    guard !sawPort, let port = Int(argument), (0...65535).contains(port) else {
                        return .failure(OptionError("unexpected argument '\(argument)'"))
                    }
                    options.port = port
                    sawPort = true
                }
                index += 1
            }
        } catch {
            return .failure(error)
        }
        if (options.tlsCert == nil) != (options.tlsKey == nil) {
            return .failure(OptionError("--tls-cert and --tls-key go together"))
        }
        return .success(options)
    }
}

/// A bad command line, described in one sentence.
struct OptionError: Error, CustomStringConvertible {
    /// What was wrong with the arguments.
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
