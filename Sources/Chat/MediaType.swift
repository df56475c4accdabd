import Bytes

/// The image formats the server stores (docs/protocol.md, "Media"): JPEG, PNG, GIF and WebP.
///
/// An upload names its type in `Content-Type` and its bytes must begin with that format's
/// signature: the type is served back exactly as stored, with `nosniff`, so a file can only ever
/// be shown as the image it claims to be. The check is on the first bytes alone; a PNG header
/// followed by anything else still passes, and is still served as `image/png` that no browser
/// will run (with `Content-Security-Policy: sandbox` on top).
public enum MediaType: String, Sendable, CaseIterable {
    case jpeg = "image/jpeg"
    case png = "image/png"
    case gif = "image/gif"
    case webp = "image/webp"

    /// The type a `Content-Type` value names, ignoring parameters and case; nil for any other.
    public init?(contentType: String) {
        let essence = contentType.split(separator: ";", maxSplits: 1).first.map {
            String($0.filter { $0 != " " && $0 != "\t" }).asciiLowercased
        }
        guard let essence, let type = MediaType(rawValue: essence) else { return nil }
        self = type
    }

    /// Whether `bytes` begin with this format's signature.
    public func matches(_ bytes: [UInt8]) -> Bool {
        switch self {
        case .jpeg:
            return bytes.starts(with: [0xFF, 0xD8, 0xFF])
        case .png:
            return bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case .gif:
            return bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8))
        case .webp:
            // A RIFF container (four bytes of length between the tags) of form type WEBP.
            return bytes.count >= 12 && bytes.starts(with: Array("RIFF".utf8))
                && Array(bytes[8..<12]) == Array("WEBP".utf8)
        }
    }

    /// Every accepted `Content-Type`, for error messages.
    public static var accepted: String {
        allCases.map(\.rawValue).joined(separator: ", ")
    }
}
