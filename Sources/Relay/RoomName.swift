/// Room names of the plain relay (`/rooms/{room}`): 1 to 64 characters of `A-Za-z0-9._-`.
public enum RoomName {
    public static func isValid(_ name: String) -> Bool {
        var count = 0
        for byte in name.utf8 {
            count += 1
            guard count <= 64 else { return false }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return count > 0
    }
}
