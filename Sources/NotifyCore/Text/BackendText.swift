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
        Redaction.hidingSchemeCredentials(in: Redaction.hiding(secrets, in: text))
    }

    /// What a printed line must not carry, and format characters (Unicode Cf) as well: an
    /// excerpt is a plain summary, with no invisible characters in it.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        PrintableText.isControl(scalar) || scalar.properties.generalCategory == .format
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
