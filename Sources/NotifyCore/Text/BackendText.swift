#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// Text that came from the backend (an error body, a `Location`), made fit to store, log
/// and show: credentials scrubbed, then cut to one short line. A backend or a proxy in
/// front of it may echo the request, `Authorization` header included; that must not end
/// up in state.json, a log or `status`.
enum BackendText {
    /// The longest excerpt kept, in characters.
    static let maximumLength = 200
    static let redacted = "[redacted]"

    static func excerpt(_ data: Data, account: BackendAccount) -> String {
        excerpt(String(decoding: data, as: UTF8.self), account: account)
    }

    static func excerpt(_ text: String, account: BackendAccount, maximumLength: Int = BackendText.maximumLength) -> String {
        let scrubbed = scrub(text, secrets: secrets(of: account))
        let flat = scrubbed.unicodeScalars.map { Self.isControl($0) ? " " : String($0) }.joined()
        let single = flat.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return single.count > maximumLength ? String(single.prefix(maximumLength)) + "…" : single
    }

    /// Every spelling of the credentials a reply could carry: the password as typed and
    /// percent-encoded, and `user:password` in base64 with and without its padding.
    static func secrets(of account: BackendAccount) -> [String] {
        let basic = Data("\(account.user):\(account.password)".utf8).base64EncodedString()
        var unpadded = basic
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        var secrets = [basic, unpadded]
        if !account.password.isEmpty {
            secrets.append(account.password)
            secrets.append(URLText.escape(account.password))
        }
        // Longest first, so a password inside the base64 text never leaves a part of it behind.
        return Array(Set(secrets)).filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// Removes `secrets` and any credential that follows an authentication scheme name
    /// (`Basic …`, `Bearer …`), whoever it belongs to.
    static func scrub(_ text: String, secrets: [String]) -> String {
        var result = text
        for secret in secrets {
            result = result.replacing(secret, with: redacted)
        }
        for scheme in ["Basic", "Bearer", "Digest"] {
            result = replaceCredential(after: scheme, in: result)
        }
        return result
    }

    /// `Basic dXNlcjpwYXNz` -> `Basic [redacted]`, in any letter case.
    private static func replaceCredential(after scheme: String, in text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let range = Self.caseInsensitiveRange(of: scheme + " ", in: rest) {
            result += rest[..<range.upperBound]
            rest = rest[range.upperBound...]
            let token = rest.prefix { !$0.isWhitespace && $0 != "\"" && $0 != "," && $0 != ";" }
            if !token.isEmpty && token != redacted {
                result += redacted
                rest = rest.dropFirst(token.count)
            }
        }
        return result + rest
    }

    /// What a printed line must not carry, and format characters (Unicode Cf) as well: an
    /// excerpt is a plain summary, with no invisible characters in it.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        PrintableText.isControl(scalar) || scalar.properties.generalCategory == .format
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

    /// A URL from the backend with any `user:password@` removed, for a message.
    static func withoutUserInfo(_ text: String) -> String {
        guard let schemeEnd = text.firstRange(of: "://") else { return text }
        let afterScheme = text[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
        guard let at = afterScheme[..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<schemeEnd.upperBound]) + String(afterScheme[afterScheme.index(after: at)...])
    }
}
