import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// What `send --wait` says for each way a send can fail, through the built binaries: a
/// backend that answered is never "could not be reached".
@Suite struct FailureWordingTests {
    static let cases: [(fault: DevBackend.FaultRule, said: String)] = [
        (DevBackend.FaultRule(route: .send, status: 429, retryAfter: 120), "the backend asked to slow down (HTTP 429); next attempt in"),
        (DevBackend.FaultRule(route: .send, status: 503), "the backend is unavailable for now (HTTP 503); next attempt in"),
        (DevBackend.FaultRule(route: .send, status: 502), "the gateway in front of the backend could not get an answer from it (HTTP 502)"),
        (DevBackend.FaultRule(route: .send, status: 500), "the backend failed (HTTP 500)"),
        (DevBackend.FaultRule(route: .send, status: 403, retryAfter: 60), "the backend asked to slow down (HTTP 403, Retry-After 60 s)"),
        (DevBackend.FaultRule(route: .send, status: 400, body: "Bad tag"), "the backend refused the request (HTTP 400): Bad tag"),
        (DevBackend.FaultRule(route: .send, drop: true), "the request to the backend failed:"),
    ]

    @Test func eachFailureIsWordedForWhatHappened() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--retry-min", "1h", "--retry-max", "1h"])
        _ = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice".utf8))
        for (index, (fault, said)) in Self.cases.enumerated() {
            backend.clearFaults()
            try backend.addFault(fault)
            // A recipient each: a failed message holds back the later ones to its recipient.
            let sent = try await daemon.notifyctl(["send", "--to", "bob\(index)", "--wait", "--timeout", "3", "hello"])
            let text = sent.output + sent.error
            #expect(text.contains(said), "\(fault): \(text)")
            #expect(!text.contains("could not be reached"), "\(fault): the backend answered: \(text)")
        }
        await daemon.cleanUp()

        // Nothing listens: that one could not be reached, and says where it tried.
        let down = try await DaemonUnderTest(backend: "http://127.0.0.1:9", extraArguments: ["--retry-min", "1h", "--retry-max", "1h"])
        _ = try await down.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice".utf8))
        let refused = try await down.notifyctl(["send", "--to", "bob", "--wait", "--timeout", "3", "hello"])
        #expect((refused.output + refused.error).contains("the backend could not be reached: cannot connect to http://127.0.0.1:9: connection refused"),
                "\(refused.output)\(refused.error)")
        // The wait ran out, and the message is not forgotten: said so.
        #expect(refused.status == 4)
        #expect(refused.output.contains("Not delivered within the 3 s waited: notifyd keeps trying by itself"), "\(refused.output)")
        await down.cleanUp()
    }

    /// A name the backend's tags cannot hold: the rule is the backend's, and the character
    /// is said in words ("''' is not allowed" said neither).
    @Test func aNameTheBackendsTagsCannotHoldIsRefusedSayingWhoseRuleAndWhichCharacters() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        try await daemon.logIn("alice")
        let rule = "the backend finds a user's devices by the tag username:<name>, and its tags allow only ASCII letters, digits and _ @ # . - in a name"
        for (name, character) in [("o'brien", "an apostrophe (')"), ("josé", "é (U+E9)"), ("ann lee", "a space")] {
            let sent = try await daemon.notifyctl(["send", "--to", name, "hello"])
            #expect(sent.status == 2, "\(name): \(sent.output)\(sent.error)")
            #expect(sent.error.contains("\"\(name)\" cannot be a recipient: \(rule), not \(character)"), "\(sent.error)")
        }
        let login = try await daemon.notifyctl(["login", "--password-stdin", "o'brien"], stdin: Data("o'brien\n".utf8))
        #expect(login.error.contains("\"o'brien\" cannot be a user name: \(rule), not an apostrophe (')"), "\(login.error)")
        #expect(backend.pushes().isEmpty)
        await daemon.cleanUp()
    }
}
