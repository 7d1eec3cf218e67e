import Testing
@testable import NotifyCore

struct RegistrationTagsTests {
    @Test func lettersDigitsAndAllowedPunctuationPass() throws {
        let tags = ["news", "Sport2", "from:alice", "a_b", "x@y", "#hash", "v1.2", "a-b", "_@#.:-"]
        #expect(try RegistrationTags.validate(tags) == tags)
    }

    @Test func noTagsIsFine() throws {
        #expect(try RegistrationTags.validate([]) == [])
    }

    @Test(arguments: [
        ("two words", "a space"),
        ("a/b", "'/'"),
        ("a+b", "'+'"),
        ("a,b", "','"),
        ("a\"b", "'\"'"),
        ("café", "'é'"),
    ])
    func otherCharactersAreRefused(tag: String, named: String) throws {
        let error = #expect(throws: CoreError.self) { try RegistrationTags.validate(["ok", tag]) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("contains \(named)"), "\(message)")
        #expect(message.contains("_ @ # . : -"))
    }

    @Test func emptyTagIsRefused() throws {
        let error = #expect(throws: CoreError.self) { try RegistrationTags.validate([""]) }
        #expect(invalidArgumentText(error) == "a tag may not be empty")
    }

    @Test func oneHundredTwentyCharactersIsTheLimit() throws {
        let longest = String(repeating: "a", count: 120)
        #expect(try RegistrationTags.validate([longest]) == [longest])

        let tooLong = String(repeating: "b", count: 121)
        let error = #expect(throws: CoreError.self) { try RegistrationTags.validate([tooLong]) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("121 characters"))
        #expect(message.contains("at most 120"))
    }

    @Test(arguments: ["username:bob", "USERNAME:bob", "UserName:eve", "username:"])
    func usernamePrefixIsReserved(tag: String) throws {
        let error = #expect(throws: CoreError.self) { try RegistrationTags.validate([tag]) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("reserved"))
    }

    @Test func similarButUnreservedTagsPass() throws {
        #expect(try RegistrationTags.validate(["username", "usernames:x", "user:bob", "from:username"])
            == ["username", "usernames:x", "user:bob", "from:username"])
    }

    @Test func duplicatesAreRemovedKeepingFirstOccurrenceOrder() throws {
        #expect(try RegistrationTags.validate(["b", "a", "b", "c", "a", "b"]) == ["b", "a", "c"])
    }

    @Test func tagsDifferingInCaseAreDistinct() throws {
        #expect(try RegistrationTags.validate(["News", "news"]) == ["News", "news"])
    }
}
