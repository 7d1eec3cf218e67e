/// The inside of a JSON string literal, written the one way both notifyd and the dev
/// backend write it: quotes, backslashes and control characters escaped, U+2028 and
/// U+2029 too (JavaScript before ES2019 ends a line at them, so a payload pasted into a
/// script stays one string), hex digits in upper case; everything else, emoji included,
/// as it is.
public enum JSONStringText {
    public static func escaped(_ text: String) -> String {
        // Most messages have nothing to escape: looked for byte by byte, then taken as they are.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") || $0 == 0xE2 }) { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case _ where scalar.value < 0x20 || scalar == "\u{2028}" || scalar == "\u{2029}":
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
