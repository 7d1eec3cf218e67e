import Foundation
import Testing
@testable import NotifyCore

struct BackendURLTests {
    @Test(arguments: [
        ("https://backend.example.com", "https://backend.example.com"),
        ("http://localhost:5000", "http://localhost:5000"),
        ("https://backend.example.com/", "https://backend.example.com"),
        ("https://backend.example.com///", "https://backend.example.com"),
        ("https://h.example/app/", "https://h.example/app"),
        ("  https://h.example  ", "https://h.example"),
        ("HTTPS://h.example", "HTTPS://h.example"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
    ])
    func acceptsHTTPAndHTTPSWithAHost(text: String, expected: String) throws {
        #expect(try BackendURL.validate(text, allowInsecureHTTP: false) == expected)
    }

    @Test(arguments: ["ftp://h.example", "file:///etc/passwd", "garbage", "", "https://", "http:///path", "h.example", "mailto:a@b"])
    func refusesWhatIsNotAnHTTPBackend(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: false) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("is not a backend URL"))
        // What comes before an `@` may be a password: never repeated (see below).
        #expect(message.contains(text.contains("@") ? "'…@b'" : "'\(text)'"))
    }

    @Test(arguments: ["https://bob:secret@h.example", "https://bob@h.example/", "http://:pw@h.example"])
    func refusesCredentialsInTheURL(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: false) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("notifyctl login"))
        #expect(!message.contains("secret"))
    }

    @Test(arguments: ["https://h.example/api/", "https://h.example/api", "http://127.0.0.1:5000/API/", "https://h.example/app/api"])
    func refusesAURLEndingInTheAPIPrefixAndNamesTheOneToUse(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: false) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("'\(text)' ends in /api"))
        #expect(message.contains("use " + text.dropLast(text.hasSuffix("/") ? 5 : 4)))
    }

    /// A password with `?`, `/` or `#` unescaped makes a URL that does not parse: it is
    /// refused as no URL, and the message still leaves the password out.
    @Test(arguments: ["https://alice:S3cr3t?PW@example.com", "https://alice:S3cr3t/PW@example.com", "https://alice:S3cr3t#PW@h.example", "alice:S3cr3tPW@example.com",
                      "https://alice:123/S3cr3tPW@h.example", "https://alice:#S3cr3tPW@h.example"])
    func aURLThatDoesNotParseIsNeverRepeatedWithItsPassword(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: false) }
        let message = try #require(invalidArgumentText(error))
        #expect(!message.contains("S3cr3t"), "\(message)")
        #expect(!message.contains("PW"), "\(message)")
    }

    @Test(arguments: [("http://127.0.0.1:80800", 80800), ("https://h.example:0", 0), ("http://[::1]:99999/app", 99999)])
    func refusesAPortNoServerCanHave(text: String, port: Int) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: false) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("names port \(port)"))
        #expect(message.contains("from 1 to 65535"))
    }

    @Test func theHighestPortIsAccepted() throws {
        #expect(try BackendURL.validate("http://127.0.0.1:65535", allowInsecureHTTP: false) == "http://127.0.0.1:65535")
    }

    @Test(arguments: ["https://h.example/?x=1", "https://h.example/app#top", "https://h.example?", "https://h.example/#"])
    func refusesAQueryOrAFragment(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: false) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("must not hold a query"))
    }

    @Test func aPathThatOnlyContainsApiIsFine() throws {
        #expect(try BackendURL.validate("https://api.example.com/apiary", allowInsecureHTTP: false) == "https://api.example.com/apiary")
        #expect(try BackendURL.validate("https://h.example/api/v2", allowInsecureHTTP: false) == "https://h.example/api/v2")
    }

    @Test(arguments: ["http://127.0.0.1:8080", "http://127.9.8.7", "http://localhost:5000", "http://LOCALHOST", "http://[::1]:8080"])
    func plainHTTPToThisMachineIsAccepted(text: String) throws {
        #expect(try BackendURL.validate(text, allowInsecureHTTP: false) == text)
    }

    @Test(arguments: ["http://backend.invalid", "http://10.0.0.1:8080", "http://128.0.0.1", "http://[::2]", "http://localhost.example.com", "http://127.0.0.1.example.com",
                      // Names libcurl hands to DNS, whatever they look like.
                      "http://localhost.:80", "http://127.0.0.1.:9", "http://LOCALHOST.", "http://127.1:9"])
    func plainHTTPToAnotherMachineIsRefusedWithTheWayOut(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: false) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("use https://"))
        #expect(message.contains("allow_insecure_http"))
        #expect(try BackendURL.validate(text, allowInsecureHTTP: true) == text)
        #expect(try BackendURL.validate(text.replacingOccurrences(of: "http://", with: "https://"), allowInsecureHTTP: false) != "")
    }

    @Test(arguments: ["https://bob:s3cr3t@h.example/app", "http://bob:s3cr3t@127.0.0.1:8080", "https://bob:s3cr3t@"])
    func credentialsInTheURLAreNeverRepeated(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text, allowInsecureHTTP: true) }
        let message = try #require(invalidArgumentText(error))
        #expect(!message.contains("s3cr3t"))
        #expect(!message.contains("bob"))
    }

    @Test func theRequestItselfRefusesPlainHTTPToAnotherMachine() {
        #expect(BackendURL.insecureRefusal(URL(string: "http://backend.invalid")!, allowInsecureHTTP: false)?.contains("https://") == true)
        #expect(BackendURL.insecureRefusal(URL(string: "http://backend.invalid")!, allowInsecureHTTP: true) == nil)
        #expect(BackendURL.insecureRefusal(URL(string: "https://backend.invalid")!, allowInsecureHTTP: false) == nil)
        #expect(BackendURL.insecureRefusal(URL(string: "http://127.0.0.1:9")!, allowInsecureHTTP: false) == nil)
    }
}
