/// The Notification Hubs rule for tags: 1 to 120 characters, each an ASCII letter or
/// digit or one of `_ @ # . : -`. The hub refuses registrations breaking it.
enum TagRule {
    static let maxLength = 120

    static func isValid(_ tag: String) -> Bool {
        let bytes = tag.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else { return false }
        return bytes.allSatisfy(isAllowed)
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("_@#.:-".utf8).contains(byte)
        }
    }
}
