import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// The password never shows in descriptions, debug output or `dump`.
struct CredentialsTests {
    private static let password = "hunter2-Sekr1t"
    private let credentials = Credentials(user: "bob", password: CredentialsTests.password, backend: "https://b.example", revision: "rev-9")

    private func renderings(_ value: some Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        let mirror = Mirror(reflecting: value).children.map { "\($0.label ?? ""): \($0.value)" }.joined(separator: ", ")
        return [String(describing: value), String(reflecting: value), "\(value)", dumped, mirror]
    }

    @Test func credentialsNeverShowThePassword() {
        for text in renderings(credentials) {
            #expect(!text.contains(Self.password), "\(text)")
            #expect(!text.contains("hunter2"), "\(text)")
        }
        #expect(credentials.description == "credentials of bob")
        #expect(credentials.debugDescription == "credentials of bob")
    }

    @Test func credentialsInsideOtherValuesStayHidden() {
        let wrapped: [String: Credentials] = ["current": credentials]
        var dumped = ""
        dump(wrapped, to: &dumped)
        #expect(!dumped.contains(Self.password))
        #expect(!"\(wrapped)".contains(Self.password))
        #expect(!"\(Optional(credentials) as Any)".contains(Self.password))
    }

    @Test func credentialsDumpStillShowsWhoAndWhere() {
        var dumped = ""
        dump(credentials, to: &dumped)
        #expect(dumped.contains("bob"))
        #expect(dumped.contains("rev-9"))
        #expect(dumped.contains("https://b.example"))
    }

    @Test func backendAccountNeverShowsThePassword() throws {
        let account = BackendAccount(baseURL: try #require(URL(string: "https://b.example/app")), user: "bob", password: Self.password)
        for text in renderings(account) {
            #expect(!text.contains(Self.password), "\(text)")
        }
        #expect(account.description == "bob at https://b.example/app")
        #expect(account.debugDescription == account.description)
        // Nor its base64 form.
        let encoded = Data("bob:\(Self.password)".utf8).base64EncodedString()
        for text in renderings(account) {
            #expect(!text.contains(encoded))
        }
    }

    @Test func authorizationHeaderIsBasicOfUserColonPassword() throws {
        let account = BackendAccount(baseURL: try #require(URL(string: "https://b.example")), user: "bob", password: "secret")
        #expect(account.authorizationHeader == "Authorization: Basic Ym9iOnNlY3JldA==")
    }

    /// The backend service takes the app's key in a header of its own, never the user.
    @Test func anInstallationsBackendGetsTheKeyInItsApikeyHeader() throws {
        let account = BackendAccount(baseURL: try #require(URL(string: "https://b.example")), user: "bob", password: "k3y", api: .installations)
        #expect(account.authorizationHeader == "apikey: k3y")
    }

    @Test func referenceCarriesUserAndRevisionOnly() {
        #expect(credentials.reference == AccountReference(user: "bob", revision: "rev-9"))
    }

    @Test func everyLoginGetsANewRevision() {
        let first = Credentials(user: "bob", password: "p", backend: nil)
        let second = Credentials(user: "bob", password: "p", backend: nil)
        #expect(first.revision != second.revision)
        #expect(!first.revision.isEmpty)
    }

    @Test func encodedFileFormatKeepsThePassword() throws {
        // The store needs it back; only descriptions hide it.
        let data = try JSONEncoder().encode(credentials)
        let decoded = try JSONDecoder().decode(Credentials.self, from: data)
        #expect(decoded.password == Self.password)
    }

    @Test(arguments: ["bob", "bob@example.com", "Bob_Smith-2", "b.o.b#1"])
    func validUserNames(user: String) throws {
        try Credentials.validateUser(user)
    }

    /// The tag username:<name> holds 120 characters at most: a longer name made every
    /// registration fail with a 400 that read as an Android name the backend did not know.
    @Test func aNameTooLongForItsTagIsRefusedAndTheLongestPasses() throws {
        try Credentials.validateUser(String(repeating: "b", count: 111))
        let error = #expect(throws: CoreError.self) { try Credentials.validateUser(String(repeating: "b", count: 112), role: "recipient") }
        #expect(invalidArgumentText(error) == "the recipient is 112 characters; at most 111 fit the tag username:<name> by which the backend finds a user's devices (a tag holds up to 120)")
    }

    @Test func emptyUserIsRefused() {
        let error = #expect(throws: CoreError.self) { try Credentials.validateUser("") }
        #expect(invalidArgumentText(error) == "the user name is empty")
    }

    @Test(arguments: ["bob:smith", ":", "bob:"])
    func colonIsRefused(user: String) throws {
        let error = #expect(throws: CoreError.self) { try Credentials.validateUser(user) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("':'"))
    }

    /// The backend turns the name into the tag `username:<user>`; what a tag cannot hold
    /// would make every registration fail, so it is refused at login.
    @Test(arguments: ["bob smith", " bob", "bob ", "bob\tsmith", "bob\n", "bob\u{7}", "José", "a/b", "bob!"])
    func charactersATagCannotHoldAreRefused(user: EscapedText) throws {
        let error = #expect(throws: CoreError.self) { try Credentials.validateUser(user.text) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("its tags allow only ASCII letters, digits and _ @ # . - in a name, not "), "\(message)")
    }
}
