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
    static let redacted = Redaction.marker

    static func excerpt(_ data: Data, account: BackendAccount) -> String {
        excerpt(String(decoding: data, as: UTF8.self), account: account)
    }

    static func excerpt(_ text: String, account: BackendAccount, maximumLength: Int = BackendText.maximumLength) -> String {
        let scrubbed = scrub(text, secrets: secrets(of: account))
        let flat = scrubbed.unicodeScalars.map { Self.isControl($0) ? " " : String($0) }.joined()
        let single = flat.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return single.count > maximumLength ? String(single.prefix(maximumLength)) + "…" : single
    }

    /// Every spelling of the credentials a reply could carry: `user:password` in base64
    /// with and without its padding, and the password (or API key) as typed and as a
    /// server echoing it may have escaped it (`spellings`).
    static func secrets(of account: BackendAccount) -> [String] {
        let basic = Data("\(account.user):\(account.password)".utf8).base64EncodedString()
        var unpadded = basic
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        let secrets = [basic, unpadded] + (account.password.isEmpty ? [] : spellings(of: account.password))
        // Longest first, so a password inside the base64 text never leaves a part of it behind.
        return Array(Set(secrets)).filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// `secret` as typed, and as the encoders that echo a request write it: percent-encoded
    /// (either case of hex, and as a form with `+` for a space), in a JSON string (with `/`
    /// escaped or not, other characters as they are or as `\u` escapes), and in HTML.
    static func spellings(of secret: String) -> [String] {
        let percent = URLText.escape(secret)
        var lowerHex = ""
        var afterPercent = 0
        for character in percent {
            lowerHex.append(afterPercent > 0 ? Character(character.lowercased()) : character)
            afterPercent = character == "%" ? 2 : max(0, afterPercent - 1)
        }
        let form = percent.replacing("%20", with: "+")
        var spellings = [secret, percent, lowerHex, form, form.replacing("%2B", with: "%2b")]
        for slash in [false, true] {
            for ascii in [false, true] { spellings.append(jsonEscaped(secret, slash: slash, ascii: ascii)) }
        }
        let html = [("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\"", "&quot;")]
            .reduce(secret) { $0.replacing($1.0, with: $1.1) }
        spellings += [html.replacing("'", with: "&#39;"), html.replacing("'", with: "&#x27;")]
        return spellings
    }

    /// `text` as a JSON encoder writes it inside a string.
    private static func jsonEscaped(_ text: String, slash: Bool, ascii: Bool) -> String {
        var escaped = ""
        for unit in text.unicodeScalars {
            switch unit {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "/" where slash: escaped += "\\/"
            case _ where unit.value < 0x20 || (ascii && unit.value > 0x7E):
                for code in String(unit).utf16 { escaped += "\\u" + String(repeating: "0", count: 4 - String(code, radix: 16).count) + String(code, radix: 16) }
            default: escaped.unicodeScalars.append(unit)
            }
        }
        return escaped
    }

    /// Removes `secrets` and any credential that follows an authentication scheme name
    /// (`Basic …`, `Bearer …`), whoever it belongs to.
    static func scrub(_ text: String, secrets: [String]) -> String {
        Redaction.hidingSchemeCredentials(in: Redaction.hiding(secrets, in: text))
    }

    /// What a printed line must not carry, and format characters (Unicode Cf) as well: an
    /// excerpt is a plain summary, with no invisible characters in it.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        PrintableText.isControl(scalar) || scalar.properties.generalCategory == .format
    }

    /// A URL (from the backend, or as given) with any `user:password@` removed, for a
    /// message: everything after the scheme up to the last `@`. Not the authority a parser
    /// finds: a password holding `/`, `?` or `#` unescaped ends it early (`alice:123/x@h`
    /// reads as the host alice, port 123), yet it is still a password. An `@` further on
    /// (a path's) hides more than it must, which a message can afford.
    static func withoutUserInfo(_ text: String) -> String {
        let schemeEnd = text.firstRange(of: "://")?.upperBound
        let afterScheme = text[(schemeEnd ?? text.startIndex)...]
        guard let at = afterScheme.lastIndex(of: "@") else { return text }
        let shownAfter = afterScheme[afterScheme.index(after: at)...]
        return schemeEnd.map { String(text[..<$0]) + shownAfter } ?? "…@" + shownAfter
    }
}
