import Crypto

/// Where each file of a data folder lives (docs/durability.md, "Files").
///
/// ```
/// manifest.json                      the checkpoint: which documents and segments hold the tree
/// documents/<Key>.json               one top-level branch other than Messages (Auth, Groups, Users)
/// messages/<group>/<seq>.jsonl       a segment: one message record a line, append-only
/// messages/<group>/<seq>.idx         its index: offset, length and id of each record in id order
/// journal.jsonl                      mutations since the checkpoint, appended and fsynced
/// journal.<n>.jsonl                  a journal set aside for the checkpoint that is running
/// journal.spare                      zeros written ahead: the next journal, its blocks on disk
/// migrating                          present while a first-layout folder is being converted
/// ```
/// Keys become file names byte for byte when they are made of letters, digits, `-` and `_`
/// (push ids are); any other byte is written `%XX`, so no key can name a path outside its folder.
/// A name longer than `longestName` keeps its first bytes and ends in `~` and the key's SHA-256
/// in hex, so every key has a file the file system accepts (NAME_MAX is 255 bytes) and no two
/// keys share one (`~` is never written for a key's own bytes).
struct StoreLayout: Sendable {
    let directory: String

    var manifest: String { directory + "/manifest.json" }
    var temporaryManifest: String { directory + "/manifest.json.tmp" }
    var documents: String { directory + "/documents" }
    var messages: String { directory + "/messages" }
    var journal: String { directory + "/journal.jsonl" }
    var spareJournal: String { directory + "/journal.spare" }
    var legacySnapshot: String { directory + "/tree.json" }
    var legacyTemporarySnapshot: String { directory + "/tree.json.tmp" }
    var migrationMarker: String { directory + "/migrating" }

    func document(_ key: String) -> String { documents + "/" + Self.fileName(key) + ".json" }
    func group(_ gid: String) -> String { messages + "/" + Self.fileName(gid) }
    func segment(_ gid: String, _ seq: Int) -> String { group(gid) + "/" + Self.sequenceName(seq) + ".jsonl" }
    func index(_ gid: String, _ seq: Int) -> String { group(gid) + "/" + Self.sequenceName(seq) + ".idx" }
    func rotatedJournal(_ generation: Int) -> String { directory + "/journal.\(generation).jsonl" }

    /// The generation of a rotated journal's file name, or nil for any other name.
    static func rotatedGeneration(_ name: String) -> Int? {
        guard name.hasPrefix("journal."), name.hasSuffix(".jsonl") else { return nil }
        return Int(name.dropFirst("journal.".count).dropLast(".jsonl".count))
    }

    /// Eight digits, so a folder listing sorts segments in order.
    static func sequenceName(_ seq: Int) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// The longest name a key is written as in full: room for `.json.tmp` under NAME_MAX.
    static let longestName = 200

    static func fileName(_ key: String) -> String {
        var name = ""
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                name.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                name += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
            }
        }
        if name.isEmpty { return "%" }
        guard name.utf8.count > longestName else { return name }
        let digest = Crypto.sha256(Array(key.utf8)).map { byte in
            String(byte >> 4, radix: 16) + String(byte & 15, radix: 16)
        }
        return String(name.prefix(longestName - 65)) + "~" + digest.joined()
    }
}
