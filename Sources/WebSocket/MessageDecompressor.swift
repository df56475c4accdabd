// Sources/WebSocket/MessageDecompressor.swift
public protocol MessageDecompressor: AnyObject {
    /// Inflates one whole compressed message (all its frames' payloads concatenated). Throws `.tooLarge` as soon as the output would pass `limit` bytes (before inflating further), `.corrupt` on bad data.
    func decompress(_ payload: [UInt8], limit: Int) throws(DecompressionError) -> [UInt8]
}
public enum DecompressionError: Error, Sendable { case tooLarge, corrupt }
