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
        #expect(try BackendURL.validate(text) == expected)
    }

    @Test(arguments: ["ftp://h.example", "file:///etc/passwd", "garbage", "", "https://", "http:///path", "h.example", "mailto:a@b"])
    func refusesWhatIsNotAnHTTPBackend(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("is not a backend URL"))
        #expect(message.contains("'\(text)'"))
    }

    @Test(arguments: ["https://bob:secret@h.example", "https://bob@h.example/", "http://:pw@h.example"])
    func refusesCredentialsInTheURL(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("notifyctl login"))
        #expect(!message.contains("secret"))
    }

    @Test(arguments: ["https://h.example/api/", "https://h.example/api", "http://127.0.0.1:5000/API/", "https://h.example/app/api"])
    func refusesAURLEndingInTheAPIPrefixAndNamesTheOneToUse(text: String) throws {
        let error = #expect(throws: CoreError.self) { try BackendURL.validate(text) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("'\(text)' ends in /api"))
        #expect(message.contains("use " + text.dropLast(text.hasSuffix("/") ? 5 : 4)))
    }

    @Test func aPathThatOnlyContainsApiIsFine() throws {
        #expect(try BackendURL.validate("https://api.example.com/apiary") == "https://api.example.com/apiary")
        #expect(try BackendURL.validate("https://h.example/api/v2") == "https://h.example/api/v2")
    }
}
