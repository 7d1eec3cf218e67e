/// Query-string and path-segment decoding.
///
/// Percent-decoding follows RFC 3986 only: '+' stays '+', because device handles
/// (FCM tokens, base64-ish strings) contain it and a client that percent-encodes
/// correctly must get its exact handle back.
enum QueryString {
    /// The first value for `name`, compared case-insensitively as ASP.NET model
    /// binding does; nil when absent. A bare `name` without '=' gives "".
    static func value(_ name: String, in query: String?) -> String? {
        guard let query else { return nil }
        let wanted = name.lowercased()
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard percentDecoded(String(parts[0])).lowercased() == wanted else { continue }
            return parts.count > 1 ? percentDecoded(String(parts[1])) : ""
        }
        return nil
    }

    /// Decodes `%XX` escapes; a malformed escape is kept literally, as ASP.NET does.
    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
