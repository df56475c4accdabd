import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import HummingbirdWSCompression
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket

#if canImport(Glibc)
import Glibc
#endif

/// The Hummingbird peer for Switchboard's benchmarks: `GET /rooms/{room}` upgrades to a
/// WebSocket whose every text or binary message goes, unchanged and in order, to every *other*
/// connection of the room. No notices and no query handling (`?notices=0` is ignored).
@main
struct HummingbirdRelay {
    static func main() async throws {
        let options: RelayOptions
        switch RelayOptions.parse(Array(CommandLine.arguments.dropFirst())) {
        case .success(let parsed):
            options = parsed
        case .failure(let error):
            print("HummingbirdRelay: \(error)")
            exit(2)
        }

        var logger = Logger(label: "HummingbirdRelay")
        logger.logLevel = .warning
        let registry = RoomRegistry()
        let maxMessage = options.maxMessage
        let extensions: [WebSocketExtensionFactory] =
            options.deflate
            ? [.perMessageDeflate(maxDecompressedFrameSize: maxMessage, minFrameSizeToCompress: options.deflateMinSize)]
            : []
        // Auto-ping off: the measured traffic should be the relayed messages only.
        let webSocket = WebSocketServerConfiguration(
            maxFrameSize: maxMessage, extensions: extensions, autoPing: .disabled)
        let upgrade = HTTPServerBuilder.http1WebSocketUpgrade(configuration: .init(ws: webSocket)) { request, _, _ in
            guard let room = roomName(request.path ?? "") else { return .dontUpgrade }
            return .upgrade([:]) { inbound, outbound, _ in
                try await relay(room: room, inbound: inbound, outbound: outbound, registry: registry, maxMessage: maxMessage)
            }
        }
        let server: HTTPServerBuilder
        let scheme: String
        if let cert = options.tlsCert, let key = options.tlsKey {
            let chain = try NIOSSLCertificate.fromPEMFile(cert).map { NIOSSLCertificateSource.certificate($0) }
            let tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain, privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            server = try .tls(upgrade, tlsConfiguration: tls)
            scheme = "wss"
        } else {
            server = upgrade
            scheme = "ws"
        }
        let app = Application(
            router: Router(),
            server: server,
            configuration: .init(address: .hostname(options.host, port: options.port), backlog: 4096),
            onServerRunning: { channel in
                // Written straight to fd 1 so a script piping stdout sees it at once (no buffering).
                let line = "listening on \(scheme)://\(options.host):\(channel.localAddress?.port ?? options.port)\n"
                _ = line.utf8CString.withUnsafeBufferPointer { write(1, $0.baseAddress, $0.count - 1) }
            },
            logger: logger
        )
        try await app.runService()
    }

    /// The room of a `/rooms/{room}` path (query stripped), or nil for any other path.
    static func roomName(_ path: String) -> String? {
        let withoutQuery = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let prefix = "/rooms/"
        guard withoutQuery.hasPrefix(prefix) else { return nil }
        let room = withoutQuery.dropFirst(prefix.count)
        guard !room.isEmpty, !room.contains("/") else { return nil }
        return String(room)
    }

    /// Joins `room`, relays every inbound message to the room's other connections, leaves on close.
    ///
    /// The message is turned into one frame (same opcode, same bytes) and that frame is written to
    /// each receiver in turn, awaiting each write: per receiver the order is the publisher's order.
    /// A receiver that has gone away makes its write throw; that must not stop the publisher.
    static func relay(
        room: String,
        inbound: WebSocketInboundStream,
        outbound: WebSocketOutboundWriter,
        registry: RoomRegistry,
        maxMessage: Int
    ) async throws {
        let id = registry.join(room, writer: outbound)
        defer { registry.leave(room, id: id) }
        for try await message in inbound.messages(maxSize: maxMessage) {
            let frame: WebSocketOutboundWriter.OutboundFrame
            switch message {
            case .text(let text):
                frame = .custom(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: text)))
            case .binary(let buffer):
                frame = .binary(buffer)
            }
            for writer in registry.others(in: room, excluding: id) {
                try? await writer.write(frame)
            }
        }
    }
}
