/// The server's permessage-deflate settings, read once at start-up.
///
/// The defaults come from measuring raw deflate (window 15, memLevel 8, no context takeover,
/// `Z_SYNC_FLUSH`, trailer stripped) on chat JSON of 16 to 2048 bytes, comparing whole frames
/// (2-byte header below 126 bytes, 4-byte header above):
///
/// | message | 16 | 32 | 48 | 64 | 96 | 128 | 256 | 512 | 1024 | 2048 |
/// |---------|----|----|----|----|----|-----|-----|-----|------|------|
/// | plain frame | 18 | 34 | 50 | 66 | 98 | 132 | 260 | 516 | 1028 | 2052 |
/// | level 1 frame | 20 | 35 | 49 | 57 | 85 | 109 | 185 | 296 | 480 | 818 |
/// | level 6 frame | 20 | 35 | 49 | 57 | 87 | 109 | 184 | 289 | 463 | 776 |
///
/// Each compression costs roughly 5 to 10 µs for messages under 256 bytes whatever their size
/// (building the Huffman trees and `deflateReset` clearing the 64 KiB hash table dominate),
/// growing to about 15 µs (level 1) or 25 µs (level 6) at 2 KiB on this machine.
public struct DeflateConfiguration: Sendable {
    /// Whether the server accepts permessage-deflate offers at all.
    public var isEnabled: Bool = true

    /// Messages shorter than this many bytes go out uncompressed.
    ///
    /// Below about 48 bytes the compressed frame is no smaller than the plain one. From 64 to 127
    /// bytes it saves 9 to 23 bytes, less than the TLS record and TCP/IP headers around it, for the
    /// same fixed ~5 µs of CPU; from 128 bytes the saving is 17% and grows quickly (29% at 256,
    /// 44% at 512, 60% at 2 KiB), so 128 is where compression starts paying for its CPU.
    public var threshold: Int = 128

    /// zlib `memLevel` (1...9) of the deflater: memory is 2^(windowBits+2) + 2^(memLevel+9) bytes.
    public var memoryLevel: Int = 8

    /// The largest window (in bits, 8...15) the server compresses with; an offer may lower it.
    public var maxWindowBits: Int = 15

    /// The largest window (in bits, 8...15) the server asks clients to compress with.
    ///
    /// Only sent when the offer carries `client_max_window_bits` (RFC 7692 §7.1.2.2); lowering it
    /// shrinks each connection's inflater window from 32 KiB to 2^bits bytes.
    public var clientMaxWindowBits: Int = 15

    /// zlib compression level (0...9).
    ///
    /// Level 1 (zlib's fast matcher) makes frames at most 5% larger than level 6 on chat JSON up
    /// to 2 KiB (identical below 256 bytes) while costing noticeably less CPU on larger messages.
    public var compressionLevel: Int = 1

    /// Whether the server keeps its compression window between messages.
    ///
    /// `false` answers every offer with `server_no_context_takeover` (RFC 7692 §7.1.1.1 allows it
    /// even when not offered), so one compressed frame serves a whole room and no per-connection
    /// deflate state exists.
    public var serverContextTakeover: Bool = false

    /// Whether clients may keep their compression window between messages.
    ///
    /// `false` answers every offer with `client_no_context_takeover` (RFC 7692 §7.1.1.2 allows it
    /// even when not offered; Chromium, Python `websockets` and Node `ws` accept it). Every client
    /// message then stands alone, so `/rooms` and `/echo` pass it on as the client compressed it
    /// instead of compressing it again. The cost is the clients' upload ratio: without context a
    /// small message cannot refer to the previous ones.
    public var clientContextTakeover: Bool = true

    /// Creates the default configuration; set the properties to change it.
    public init() {}
}
