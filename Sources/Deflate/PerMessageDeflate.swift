/// RFC 7692 permessage-deflate negotiation on the server side.
///
/// Pure: header values in, agreed parameters and the response header value out. A client's
/// malformed or unacceptable offer never fails the handshake; the server just answers without
/// the extension (RFC 7692 §5: the server declines by not including it).
public enum PerMessageDeflate {
    /// The registered extension name (RFC 7692 §7).
    public static let extensionName = "permessage-deflate"

    /// Chooses the first acceptable permessage-deflate offer.
    ///
    /// Given every Sec-WebSocket-Extensions header value of the request (each may hold several
    /// comma-separated offers, in preference order), returns the accepted parameters and the exact
    /// response header value, or nil to decline (answer without the extension). Unknown
    /// parameters, duplicate parameters and bad values (window bits outside 8...15, a value on
    /// `*_no_context_takeover`) make that offer unacceptable, and the next offer is tried.
    ///
    /// The answer follows RFC 7692 §7.1:
    /// - `server_no_context_takeover` is echoed when offered, and added when the configuration
    ///   refuses server context takeover (§7.1.1.1 allows it unasked).
    /// - `client_no_context_takeover` is echoed when offered (optional, but it states plainly that
    ///   the inflater resets per message), and added when the configuration refuses client
    ///   context takeover (§7.1.1.2 allows it unasked).
    /// - `server_max_window_bits=N` offered is answered with min(N, configured maximum), as
    ///   §7.1.2.1 requires to accept it. When it is not offered, none is sent: the server may still
    ///   compress with a smaller window, which any decoder with a larger window reads.
    /// - `client_max_window_bits` is answered with a value only when the configuration wants a
    ///   smaller client window than the offer's (15 when offered without a value); an offer
    ///   without the parameter never gets one (§7.1.2.2).
    ///
    /// `server_max_window_bits=8` is accepted and answered with 8, although zlib cannot open a
    /// raw deflate stream with an 8-bit window: the deflater uses zlib's 9-bit window instead,
    /// and zlib never emits a match farther back than the window size minus 262 bytes (its
    /// `MAX_DIST`), that is 250 bytes, so every stream it makes is valid for a 256-byte window.
    public static func negotiate(
        offers: [String],
        configuration: DeflateConfiguration
    ) -> (parameters: DeflateParameters, response: String)? {
        guard configuration.isEnabled else { return nil }
        for header in offers {
            for case let offer? in ExtensionOffer.parseList(header) where offer.name == extensionName {
                if let accepted = accept(offer, configuration: configuration) { return accepted }
            }
        }
        return nil
    }

    /// The parameters one offer asks for, before the configuration is applied.
    private struct Request {
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        /// nil when the offer does not carry `server_max_window_bits`.
        var serverMaxWindowBits: Int?
        /// `.none`: parameter absent; `.some(nil)`: present without a value; `.some(n)`: n.
        var clientMaxWindowBits: Int??
    }

    /// Answers one offer, or returns nil if the offer breaks RFC 7692 §7.1.
    private static func accept(
        _ offer: ExtensionOffer,
        configuration: DeflateConfiguration
    ) -> (parameters: DeflateParameters, response: String)? {
        guard let request = request(from: offer) else { return nil }
        var response = extensionName
        var parameters = DeflateParameters()

        parameters.serverNoContextTakeover = request.serverNoContextTakeover || !configuration.serverContextTakeover
        if parameters.serverNoContextTakeover { response += "; server_no_context_takeover" }

        parameters.clientNoContextTakeover = request.clientNoContextTakeover || !configuration.clientContextTakeover
        if parameters.clientNoContextTakeover { response += "; client_no_context_takeover" }

        let serverLimit = clamp(configuration.maxWindowBits)
        if let offered = request.serverMaxWindowBits {
            parameters.serverMaxWindowBits = min(offered, serverLimit)
            response += "; server_max_window_bits=\(parameters.serverMaxWindowBits)"
        } else {
            parameters.serverMaxWindowBits = serverLimit
        }

        if let offered = request.clientMaxWindowBits {
            let clientWindow = offered ?? 15
            let wanted = min(clientWindow, clamp(configuration.clientMaxWindowBits))
            if wanted < clientWindow { response += "; client_max_window_bits=\(wanted)" }
            parameters.clientMaxWindowBits = wanted
        }
        return (parameters, response)
    }

    /// Reads the four RFC 7692 parameters of an offer; any other, repeated or badly valued
    /// parameter makes the whole offer unacceptable (§7.1: "MUST decline").
    private static func request(from offer: ExtensionOffer) -> Request? {
        var request = Request()
        var seen: Set<String> = []
        for parameter in offer.parameters {
            guard seen.insert(parameter.name).inserted else { return nil }
            switch parameter.name {
            case "server_no_context_takeover":
                guard parameter.value == nil else { return nil }
                request.serverNoContextTakeover = true
            case "client_no_context_takeover":
                guard parameter.value == nil else { return nil }
                request.clientNoContextTakeover = true
            case "server_max_window_bits":
                guard let value = parameter.value, let bits = windowBits(value) else { return nil }
                request.serverMaxWindowBits = bits
            case "client_max_window_bits":
                if let value = parameter.value {
                    guard let bits = windowBits(value) else { return nil }
                    request.clientMaxWindowBits = .some(bits)
                } else {
                    request.clientMaxWindowBits = .some(nil)
                }
            default:
                return nil
            }
        }
        return request
    }

    /// Parses a window size: a decimal 8...15 without leading zeros (RFC 7692 §7.1.2.1).
    private static func windowBits(_ text: String) -> Int? {
        switch text {
        case "8": 8
        case "9": 9
        case "10": 10
        case "11": 11
        case "12": 12
        case "13": 13
        case "14": 14
        case "15": 15
        default: nil
        }
    }

    /// Keeps a configured window size inside the range the protocol can express.
    private static func clamp(_ bits: Int) -> Int {
        min(max(bits, 8), 15)
    }
}
