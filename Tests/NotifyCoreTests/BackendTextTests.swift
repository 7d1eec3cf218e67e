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
        ("https://h.example/a@b", "https://h.example/a@b"),
        ("no url", "no url"),
    ])
    func userInfoIsDroppedFromURLs(text: String, expected: String) {
        #expect(BackendText.withoutUserInfo(text) == expected)
    }
}
