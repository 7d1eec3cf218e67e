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

    /// The same registration token serves FCM v1 and the legacy API.
    @Test(arguments: Platform.androidNames)
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

    @Test(arguments: Platform.androidNames + [.wns])
    func emptyOpaqueTokenIsRefused(platform: Platform) throws {
        let error = #expect(throws: CoreError.self) { try DeviceToken.normalize("", for: platform) }
        #expect(invalidArgumentText(error) == "the \(platform.rawValue) token is empty")
    }

    /// FCM and GCM registration tokens: letters, digits and `- _ : .`; one character
    /// outside that set is refused, named.
    @Test(arguments: [
        ("abc def", "' '"),
        (" abc", "' '"),
        ("abc\n", "U+A"),
        ("abc\tdef", "U+9"),
        ("abc\u{0}def", "U+0"),
        ("abc\u{7F}", "U+7F"),
        ("abc\u{00A0}def", "U+A0"),
        ("<bad>", "'<'"),
        ("abc>", "'>'"),
        ("abc/def", "'/'"),
        ("abc+def", "'+'"),
        ("abc=", "'='"),
    ])
    func aRegistrationTokenHoldsOnlyItsCharacters(raw: EscapedText, named: String) throws {
        for platform in Platform.androidNames {
            let error = #expect(throws: CoreError.self) { try DeviceToken.normalize(raw.text, for: platform) }
            let message = try #require(invalidArgumentText(error))
            #expect(message.contains("registration token is letters, digits and - _ : . only") && message.contains("\(named) is not allowed"),
                    "\(message)")
        }
    }

    @Test(arguments: ["fMEP0vJqS0:APA91bHqL-a_b.c", "a", "0", "-", "_:.", "APA91b" + String(repeating: "x", count: 150)])
    func aRegistrationTokenOfThoseCharactersIsTaken(raw: String) throws {
        for platform in Platform.androidNames { #expect(try DeviceToken.normalize(raw, for: platform) == raw) }
    }

    /// WNS: `https://` on notify.windows.com or a host under it; one step outside each
    /// part of the rule is refused.
    @Test(arguments: [
        "https://db5.notify.windows.com/?token=AwYAAAB",
        "https://notify.windows.com/x",
        "https://a.b.notify.windows.com:443/?token=x",
        "https://DB5.Notify.Windows.com/?token=x",
    ])
    func aChannelURIOnWindowsNotifyIsTaken(raw: String) throws {
        #expect(try DeviceToken.normalize(raw, for: .wns) == raw)
    }

    @Test(arguments: [
        ("http://db5.notify.windows.com/?token=x", "does not start with https://"),
        ("https//db5.notify.windows.com/", "does not start with https://"),
        ("https://evil/?x", "host is 'evil'"),
        ("https://notify.windows.com.evil.com/x", "host is 'notify.windows.com.evil.com'"),
        ("https://evilnotify.windows.com/x", "host is 'evilnotify.windows.com'"),
        ("https://user@db5.notify.windows.com/x", "host is"),
        ("https://db5.notify.windows.com/?token=a b", "U+20"),
        ("<bad>", "does not start with https://"),
    ])
    func anythingElseIsNotAChannelURI(raw: String, rule: String) throws {
        let error = #expect(throws: CoreError.self) { try DeviceToken.normalize(raw, for: .wns) }
        let message = try #require(invalidArgumentText(error))
        #expect(message.contains("a WNS channel is an https:// URI on a host under notify.windows.com") && message.contains(rule), "\(message)")
    }

    /// APNs: whole bytes of hex; one digit more or less than even is refused.
    @Test func anAPNsTokenIsWholeBytesOfHex() throws {
        #expect(try DeviceToken.normalize(String(repeating: "ab", count: 32), for: .apns).count == 64)
        #expect(try DeviceToken.normalize(String(repeating: "ab", count: 50), for: .apns).count == 100, "no length is assumed")
        for odd in [String(repeating: "a", count: 63), String(repeating: "a", count: 65)] {
            #expect(throws: CoreError.self) { try DeviceToken.normalize(odd, for: .apns) }
        }
        #expect(throws: CoreError.self) { try DeviceToken.normalize("abcg", for: .apns) }
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
        #expect(try #require(invalidArgumentText(fcm)).contains("add --platform fcmv1"))
        let apns = #expect(throws: CoreError.self) { try DeviceToken.normalize("<3f2a 1b9c>", for: .fcm) }
        #expect(try #require(invalidArgumentText(apns)).contains("add --platform apns"))
    }
}
