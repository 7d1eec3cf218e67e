import Testing
@testable import NotifyCore

struct RedactionTests {
    @Test(arguments: [
        ("Authorization: Basic Ym9iOnNlY3JldA==", "Authorization: Basic [redacted]"),
        ("authorization: basic Ym9iOnNlY3JldA==", "authorization: basic [redacted]"),
        ("AUTHORIZATION:Basic xyz", "AUTHORIZATION:Basic [redacted]"),
        ("Authorization = Bearer abc.def-ghi_jkl~", "Authorization = Bearer [redacted]"),
        ("Authorization: \"Basic xyz\"", "Authorization: \"Basic [redacted]\""),
        ("sent PUT with Authorization: Basic Ym9i+/9= to https://b", "sent PUT with Authorization: Basic [redacted] to https://b"),
    ])
    func authorizationHeaderIsMasked(input: String, expected: String) {
        #expect(Redaction.redact(input) == expected)
    }

    @Test(arguments: [
        (#"{"user":"bob","password":"hunter2"}"#, #"{"user":"bob","password":"[redacted]"}"#),
        (#"{"password" : "hunter2", "x":1}"#, #"{"password" : "[redacted]", "x":1}"#),
        (#"{"Password":"hunter2"}"#, #"{"Password":"[redacted]"}"#),
        (#"{"password":""}"#, #"{"password":"[redacted]"}"#),
    ])
    func jsonPasswordIsMasked(input: String, expected: String) {
        #expect(Redaction.redact(input) == expected)
    }

    @Test func escapedQuotesInsideThePasswordAreMaskedToo() {
        let input = #"{"password":"hun\"ter\\2\"x","user":"bob"}"#
        let output = Redaction.redact(input)
        #expect(output == #"{"password":"[redacted]","user":"bob"}"#)
        #expect(!output.contains("ter"))
    }

    @Test func everyOccurrenceIsMasked() {
        let input = #"Authorization: Basic aaa then {"password":"p1"} and {"password":"p2"}"#
        #expect(Redaction.redact(input) == #"Authorization: Basic [redacted] then {"password":"[redacted]"} and {"password":"[redacted]"}"#)
    }

    @Test(arguments: [
        "registered (id 8499338226434223-1)",
        "the backend refused the credentials (HTTP 403); waiting for `notifyctl login`",
        "password reset needed for bob",
        "Authorization failed",
        #"{"user":"bob","passwords":3}"#,
        "",
    ])
    func harmlessTextIsUnchanged(text: String) {
        #expect(Redaction.redact(text) == text)
    }

    /// A Swift dictionary of request headers (`"\(request.allHTTPHeaderFields)"`) or a JSON
    /// object puts a quote between the header name and the colon. The pattern allows a
    /// quote before the scheme but not after the name, so this common shape slips through.
    @Test func quotedHeaderNameIsMasked() {
        let dictionary = #"["Authorization": "Basic Ym9iOnNlY3JldA==", "Accept": "application/json"]"#
        let json = #"{"Authorization":"Basic Ym9iOnNlY3JldA=="}"#
        #expect(!Redaction.redact(dictionary).contains("Ym9iOnNlY3JldA=="))
        #expect(!Redaction.redact(json).contains("Ym9iOnNlY3JldA=="))
    }
}
