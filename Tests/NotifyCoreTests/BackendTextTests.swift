import Foundation
import Testing
@testable import NotifyCore

/// Backend text is scrubbed of every spelling of the credentials, then cut to one line.
struct BackendTextTests {
    static let account = BackendAccount(baseURL: URL(string: "https://h.example")!, user: "carol", password: "s3cret/pa ss")
    static let basic = Data("carol:s3cret/pa ss".utf8).base64EncodedString()

    @Test(arguments: [
        "Authorization: Basic \(basic)",
        "authorization: basic \(basic)",
        "token=\(basic.replacingOccurrences(of: "=", with: ""))",
        "password was s3cret/pa ss",
        "password was s3cret%2Fpa%20ss",
        "{\"Authorization\":\"Basic \(basic)\"}",
    ])
    func credentialsAreScrubbed(text: String) {
        let excerpt = BackendText.excerpt(text, account: Self.account)
        #expect(!excerpt.contains("s3cret"))
        #expect(!excerpt.contains(Self.basic.replacingOccurrences(of: "=", with: "")))
        #expect(excerpt.contains(BackendText.redacted))
    }

    /// An API key (or password) echoed back by a server that escaped it on the way: as its
    /// JSON encoders write it (Foundation's escapes `/`), as a form, in lower-case hex, in HTML.
    static let key = "k3y/Ab+Cd9== é\"\\<&'"
    static let keyAccount = BackendAccount(baseURL: URL(string: "https://h.example")!, user: "-", password: key, api: .installations)

    static func echoes() throws -> [String] {
        let serialized = String(decoding: try JSONSerialization.data(withJSONObject: ["apikey": key]), as: UTF8.self)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let unescapedSlashes = String(decoding: try encoder.encode(["apikey": key]), as: UTF8.self)
        let form = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~ ")
        let formEncoded = key.addingPercentEncoding(withAllowedCharacters: form)!.replacingOccurrences(of: " ", with: "+")
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let lowerHex = key.unicodeScalars.map { unreserved.contains($0) ? String($0) : String($0).utf8.map { String(format: "%%%02x", $0) }.joined() }.joined()
        let html = "<td>k3y/Ab+Cd9== é&quot;\\&lt;&amp;&#39;</td>"
        return [serialized, unescapedSlashes, "apikey=" + formEncoded, "Location: /x?k=" + lowerHex, html,
                #"{"apikey":"k3y\/Ab+Cd9== \u00e9\"\\<&'"}"#]
    }

    @Test func anEscapedEchoOfTheSecretIsScrubbed() throws {
        for echo in try Self.echoes() {
            let excerpt = BackendText.excerpt(echo, account: Self.keyAccount)
            #expect(!excerpt.contains("k3y"), "\(echo) → \(excerpt)")
            #expect(excerpt.contains(BackendText.redacted), "\(echo) → \(excerpt)")
        }
    }

    @Test func anyoneElsesBasicValueIsScrubbedToo() {
        let other = Data("dave:hunter2".utf8).base64EncodedString()
        #expect(BackendText.excerpt("Authorization: Basic \(other)\r\nHost: x", account: Self.account) == "Authorization: Basic [redacted] Host: x")
    }

    @Test func theExcerptIsOneShortLine() {
        let text = "line one\r\nline\ttwo\u{0}\u{1B}[31m" + String(repeating: "y", count: 5000)
        let excerpt = BackendText.excerpt(text, account: Self.account)
        #expect(!excerpt.contains { $0.isNewline })
        #expect(!excerpt.unicodeScalars.contains { CharacterSet.controlCharacters.contains($0) })
        #expect(excerpt.hasPrefix("line one line two"))
        #expect(excerpt.count == BackendText.maximumLength + 1)
    }

    @Test func aSecretIsScrubbedBeforeTheCutSoNoPartOfItRemains() {
        let text = String(repeating: "a", count: BackendText.maximumLength - 5) + Self.basic
        #expect(!BackendText.excerpt(text, account: Self.account).contains(Self.basic.prefix(5)))
    }

    @Test(arguments: [
        ("https://u:p@h.example/x", "https://h.example/x"),
        ("https://u@h.example", "https://h.example"),
        // An `@` anywhere may end a password that no parser reads as one.
        ("https://h.example/a@b", "https://b"),
        ("https://alice:123/x@h.example", "https://h.example"),
        ("no url", "no url"),
        // A password with `?`, `/` or `#` in it makes no URL, and is still dropped.
        ("https://alice:S3cr3t?PW@example.com", "https://example.com"),
        ("https://alice:S3cr3t/PW@example.com/app", "https://example.com/app"),
        ("https://alice:S3cr3t#PW@example.com", "https://example.com"),
        ("alice:S3cr3tPW@host", "…@host"),
    ])
    func userInfoIsDroppedFromURLs(text: String, expected: String) {
        #expect(BackendText.withoutUserInfo(text) == expected)
    }
}
