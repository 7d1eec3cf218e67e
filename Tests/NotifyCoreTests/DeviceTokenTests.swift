import NotifyProtocol
import NotifyTestSupport
import Testing
@testable import NotifyCore

struct DeviceTokenTests {
    // MARK: APNs

    @Test(arguments: [
        "0a1b2c3d",
        "0A1B2C3D",
        "0a1B2c3D",
        "0a1b 2c3d",
        "<0a1b2c3d>",
        "<0a1b 2c3d>",
        " <0A1B 2C3D> ",
        "0a1b\t2c3d",
    ])
    func apnsTokenBecomesUppercaseHex(raw: String) throws {
        #expect(try DeviceToken.normalize(raw, for: .apns) == "0A1B2C3D")
    }

    @Test func realLengthApnsTokenFromTheOldDescriptionFormat() throws {
        let raw = "<740f4707 bebcf74f 9b7c25d4 8e335894 5f6aa01d a5ddb387 462c7eaf 61bb78ad>"
        #expect(try DeviceToken.normalize(raw, for: .apns)
            == "740F4707BEBCF74F9B7C25D48E3358945F6AA01DA5DDB387462C7EAF61BB78AD")
    }

    @Test func oddLengthApnsTokenIsRefusedWithTheCount() throws {
        let error = #expect(throws: CoreError.self) { try DeviceToken.normalize("abc", for: .apns) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("even number"))
        #expect(message.contains("3"))
    }

    @Test(arguments: [("0a1g", "'g'"), ("0a1b-2c3d", "'-'"), ("0a:1b", "':'"), ("0a1bé", "U+E9"), ("0a1b\n2c", "U+A")])
    func nonHexApnsTokenIsRefusedNamingTheCharacter(raw: EscapedText, named: String) throws {
        let error = #expect(throws: CoreError.self) { try DeviceToken.normalize(raw.text, for: .apns) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("hexadecimal"))
        #expect(message.contains(named))
    }

    @Test func fullWidthDigitsAreNotHex() throws {
        // "０Ａ" looks like hex but is not ASCII; the backend would not accept it.
        let error = #expect(throws: CoreError.self) { try DeviceToken.normalize("\u{FF10}\u{FF21}", for: .apns) }
        #expect(invalidArgumentText(error)?.contains("U+FF10") == true)
    }

    @Test(arguments: ["", "   ", "<>", "< >"])
    func emptyApnsTokenIsRefused(raw: String) throws {
        let error = #expect(throws: CoreError.self) { try DeviceToken.normalize(raw, for: .apns) }
        #expect(invalidArgumentText(error) == "the APNs token is empty")
    }

    // MARK: FCM, GCM, WNS

    @Test(arguments: [Platform.fcm, .gcm])
    func fcmTokenIsKeptVerbatim(platform: Platform) throws {
        let token = "dQw4w9WgXcQ:APA91bH-x_yZ0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ3-AbCdEf"
        #expect(try DeviceToken.normalize(token, for: platform) == token)
    }

    @Test func wnsChannelURIIsKeptVerbatim() throws {
        let uri = "https://db5p.notify.windows.com/?token=AwYAAAB%2bYx0kQk%3d&x=1"
        #expect(try DeviceToken.normalize(uri, for: .wns) == uri)
    }

    @Test func opaqueTokenKeepsItsCase() throws {
        #expect(try DeviceToken.normalize("abcDEF:ghi", for: .fcm) == "abcDEF:ghi")
    }

    @Test(arguments: [Platform.fcm, .gcm, .wns])
    func emptyOpaqueTokenIsRefused(platform: Platform) throws {
        let error = #expect(throws: CoreError.self) { try DeviceToken.normalize("", for: platform) }
        #expect(invalidArgumentText(error) == "the \(platform.rawValue) token is empty")
    }

    @Test(arguments: [
        ("abc def", "U+20"),
        (" abc", "U+20"),
        ("abc\n", "U+A"),
        ("abc\tdef", "U+9"),
        ("abc\u{0}def", "U+0"),
        ("abc\u{7F}", "U+7F"),
        ("abc\u{00A0}def", "U+A0"),
        ("abc\u{2028}", "U+2028"),
    ])
    func whitespaceAndControlCharactersAreRefusedInOpaqueTokens(raw: EscapedText, named: String) throws {
        for platform in [Platform.fcm, .gcm, .wns] {
            let error = #expect(throws: CoreError.self) { try DeviceToken.normalize(raw.text, for: platform) }
            let message = try #require(invalidArgumentText(error))
            #expect(message.contains("whitespace or control characters"))
            #expect(message.contains("(found \(named))"), "\(message)")
        }
    }

    /// Without `--platform`, a token in APNs's `<…>`/spaced form is APNs whatever came
    /// before; anything an FCM, GCM or WNS token can be keeps the platform before.
    @Test(arguments: [
        ("<3f2a1b9c 5d7e8f00>", Platform.fcm, Platform.apns),
        ("3f2a1b9c 5d7e8f00", .wns, .apns),
        ("<3F2A>", .gcm, .apns),
        ("3f2a1b9c5d7e8f00", .fcm, .fcm),
        ("fcm:abc-def", .fcm, .fcm),
        ("<3f2a1b9c 5d7e8f0>", .fcm, .fcm),
        ("<not hex>", .fcm, .fcm),
        ("fcm:abc-def", .apns, .apns),
    ])
    func aTokenOnlyAPNsCanHaveIsAPNs(raw: String, current: Platform, expected: Platform) {
        #expect(DeviceToken.platform(of: raw, current: current) == expected)
    }

    @Test func aMismatchedTokenNamesThePlatformToUse() throws {
        let fcm = #expect(throws: CoreError.self) { try DeviceToken.normalize("fcm:abc-def", for: .apns) }
        #expect(try #require(invalidArgumentText(fcm)).contains("--platform fcm, gcm or wns"))
        let apns = #expect(throws: CoreError.self) { try DeviceToken.normalize("<3f2a 1b9c>", for: .fcm) }
        #expect(try #require(invalidArgumentText(apns)).contains("add --platform apns"))
    }
}
