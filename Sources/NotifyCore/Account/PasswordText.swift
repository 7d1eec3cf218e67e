#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a password command prints, or a systemd credential holds: one line of printable
/// text, with or without a newline after it. Anything else is refused with what was wrong
/// and never the text itself: a NUL or a second line went out whole in an HTTP header
/// (100 MB of NULs was answered 431, and the login was saved anyway), and a CR the
/// backend would take as part of the password.
enum PasswordText {
    /// The password in `data`, which `source` ("the password command") gave.
    static func line(_ data: Data, from source: String) throws(CoreError) -> String {
        var bytes = data[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        guard !bytes.isEmpty else { throw .passwordUnavailable("\(source) gave no password") }
        if bytes.contains(0) { throw .passwordUnavailable("\(source) gave a NUL byte; a password is one line of text") }
        if bytes.contains(UInt8(ascii: "\n")) { throw .passwordUnavailable("\(source) gave more than one line; a password is one line") }
        if bytes.contains(UInt8(ascii: "\r")) {
            throw .passwordUnavailable("\(source) gave a carriage return (CR, as a Windows line end): give the password and a newline only")
        }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { throw .passwordUnavailable("\(source) gave a control character; a password is printable text") }
        guard let text = String(bytes: bytes, encoding: .utf8) else { throw .passwordUnavailable("\(source) gave text that is not UTF-8") }
        return text
    }

    /// A password or API key given to `login`, held to the same rule: an API key goes into
    /// its header as it is, so a line break in it would add headers of its own to every
    /// request. `secret` names it ("password", "API key"); the text itself is never shown.
    static func checkGiven(_ text: String, named secret: String) throws(CoreError) {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return }
        throw .invalidArgument("the \(secret) given holds a control character (a line break, tab or NUL); a \(secret) is printable text on one line")
    }
}
