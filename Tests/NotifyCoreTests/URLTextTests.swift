import Foundation
import Testing
@testable import NotifyCore

struct URLTextTests {
    private func url(_ text: String) throws -> URL {
        try #require(URL(string: text))
    }

    @Test func unreservedCharactersAreKept() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        #expect(URLText.escape(unreserved) == unreserved)
    }

    @Test(arguments: [
        (":", "%3A"),
        ("/", "%2F"),
        ("+", "%2B"),
        ("&", "%26"),
        ("=", "%3D"),
        (" ", "%20"),
        ("?", "%3F"),
        ("#", "%23"),
        ("%", "%25"),
        ("@", "%40"),
        ("é", "%C3%A9"),
        ("🔔", "%F0%9F%94%94"),
    ])
    func everythingElseIsPercentEncoded(character: String, encoded: String) {
        #expect(URLText.escape(character) == encoded)
    }

    @Test func fcmTokenSurvivesAsAQueryValue() {
        #expect(URLText.escape("dQw4:APA91b-x_y") == "dQw4%3AAPA91b-x_y")
    }

    @Test func wnsURIIsEncodedWhole() {
        #expect(URLText.escape("https://h.notify.windows.com/?token=a+b&c=d")
            == "https%3A%2F%2Fh.notify.windows.com%2F%3Ftoken%3Da%2Bb%26c%3Dd")
    }

    @Test(arguments: ["https://h", "https://h/", "https://h//", "https://h///"])
    func joinsWithOneSlashWhateverTheBaseEndsWith(base: String) throws {
        let url = try #require(URLText.url(base: try url(base), path: "api/register", query: []))
        #expect(url.absoluteString == "https://h/api/register")
    }

    @Test(arguments: ["https://h/app", "https://h/app/", "https://h/app//"])
    func keepsABasePathPrefix(base: String) throws {
        let url = try #require(URLText.url(base: try url(base), path: "api/register/abc", query: []))
        #expect(url.absoluteString == "https://h/app/api/register/abc")
    }

    @Test func queryValuesAndNamesAreEscapedAndKeepTheirOrder() throws {
        let base = try #require(URL(string: "http://localhost:5000/"))
        let url = try #require(URLText.url(base: base, path: "api/notifications", query: [("pns", "fcm"), ("to_tag", "bob smith"), ("a&b", "c=d")]))
        #expect(url.absoluteString == "http://localhost:5000/api/notifications?pns=fcm&to_tag=bob%20smith&a%26b=c%3Dd")
    }

    @Test func handleQueryRoundTripsThroughURLComponents() throws {
        let handle = "dQw4:APA91b-x_y+z/w="
        let url = try #require(URLText.url(base: try url("https://h"), path: "api/register", query: [("handle", handle)]))
        let components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        #expect(components.queryItems?.first { $0.name == "handle" }?.value == handle)
    }

    @Test func noQueryMeansNoQuestionMark() throws {
        let url = try #require(URLText.url(base: try url("https://h"), path: "api/register/1", query: []))
        #expect(url.query == nil)
        #expect(!url.absoluteString.contains("?"))
    }
}
