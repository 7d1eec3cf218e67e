#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every way notifyd keeps a secret out of what it shows, in one place: the secrets it
/// knows (a password, an API key, their encodings), the credentials after an
/// authentication scheme whoever they belong to, and, as the log's last line of defence,
/// the shapes a secret takes in a header or a JSON document.
public enum Redaction {
    /// What stands where a secret was.
    public static let marker = "[redacted]"

    /// The log's last line of defence: no code path logs a secret on purpose, and this
    /// masks the shapes a secret could take if one ever slipped into a message.
    public static func redact(_ text: String) -> String {
        var result = text
        result = result.replacing(#/(?i)(authorization"?\s*[:=]\s*"?(?:basic|bearer)\s+)[A-Za-z0-9+\/=._~-]+/#) { "\($0.output.1)\(marker)" }
        result = result.replacing(#/(?i)("password"\s*:\s*)"(?:[^"\\]|\\.)*"/#) { "\($0.output.1)\"\(marker)\"" }
        return result
    }

    /// `text` with each of `secrets` replaced by `mask`, the longest first, so that a
    /// secret inside another (a password inside its base64 form) leaves no part behind.
    static func hiding(_ secrets: [String], in text: String, as mask: String = marker) -> String {
        var result = text
        for secret in secrets.filter({ !$0.isEmpty }).sorted(by: { $0.count > $1.count }) {
            result = result.replacing(secret, with: mask)
        }
        return result
    }

    /// Any credential after an authentication scheme name (`Basic …`, `Bearer …`,
    /// `Digest …`, in any letter case) masked, whoever it belongs to: a backend or a proxy
    /// may echo a request's `Authorization` header.
    static func hidingSchemeCredentials(in text: String) -> String {
        var result = text
        for scheme in ["Basic", "Bearer", "Digest"] {
            result = hidingCredential(after: scheme, in: result)
        }
        return result
    }

    /// `Basic dXNlcjpwYXNz` -> `Basic [redacted]`, in any letter case.
    private static func hidingCredential(after scheme: String, in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let range = Self.caseInsensitiveRange(of: scheme + " ", in: rest) {
            result += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let token = rest.prefix { !$0.isWhitespace && $0 != "\"" && $0 != "," && $0 != ";" }
            if !token.isEmpty && token != marker {
                result += marker
                rest = rest.dropFirst(token.count)
            }
        }
        return result + rest
    }

    /// Where `needle` (ASCII) first occurs in `text`, in any letter case.
    private static func caseInsensitiveRange(of needle: String, in text: Substring) -> Range<Substring.Index>? {
        let wanted = Array(needle.lowercased().utf8)
        let bytes = text.utf8
        var start = bytes.startIndex
        while start != bytes.endIndex {
            var index = start
            var matched = 0
            while matched < wanted.count, index != bytes.endIndex, Self.lowercased(bytes[index]) == wanted[matched] {
                matched += 1
                index = bytes.index(after: index)
            }
            if matched == wanted.count { return start..<index }
            start = bytes.index(after: start)
        }
        return nil
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
    }
}
