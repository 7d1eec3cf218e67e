import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import NotifyProtocol
import Testing
@testable import NotifyCore

/// A message a user might type, named for readable test output.
struct NotificationTextSample: Sendable, CustomTestStringConvertible {
    let name: String
    let text: String

    var testDescription: String { name }

    /// XML 1.0 cannot carry these at all.
    var hasXMLForbiddenControl: Bool {
        text.unicodeScalars.contains { $0.value < 0x20 && !["\t", "\n", "\r"].contains($0) }
    }

    static let quote = NotificationTextSample(name: "quote", text: #"say "hi""#)
    static let backslash = NotificationTextSample(name: "backslash", text: #"C:\temp\new"#)
    static let newline = NotificationTextSample(name: "newline", text: "line one\nline two")
    static let carriageReturn = NotificationTextSample(name: "carriage return", text: "line one\rline two")
    static let tab = NotificationTextSample(name: "tab", text: "a\tb")
    static let control = NotificationTextSample(name: "U+0001", text: "a\u{01}b")
    static let lessThan = NotificationTextSample(name: "less than", text: "1 < 2")
    static let greaterThan = NotificationTextSample(name: "greater than", text: "2 > 1")
    static let ampersand = NotificationTextSample(name: "ampersand", text: "salt & pepper")
    static let apostrophe = NotificationTextSample(name: "apostrophe", text: "it's")
    static let wine = NotificationTextSample(name: "wine emoji", text: "cheers 🍷")
    static let family = NotificationTextSample(name: "family emoji", text: "👩‍👩‍👧 at home")
    static let lineSeparator = NotificationTextSample(name: "U+2028", text: "before\u{2028}after")
    static let everything = NotificationTextSample(
        name: "all of them", text: "\"\\\n\r\t\u{01}<>&'🍷👩‍👩‍👧\u{2028} </text><x>&amp; \"}}, {\"aps\":\\u0041")
    static let everythingXMLCanCarry = NotificationTextSample(
        name: "all that XML can carry", text: "\"\\\n\r\t<>&'🍷👩‍👩‍👧\u{2028} </text><x>&amp; \"}}, {\"aps\":\\u0041")

    static let all: [NotificationTextSample] = [
        quote, backslash, newline, carriageReturn, tab, control, lessThan, greaterThan, ampersand, apostrophe,
        wine, family, lineSeparator, everything, everythingXMLCanCarry,
    ]
    static let xmlCompatible = all.filter { !$0.hasXMLForbiddenControl }
}

/// The tutorial backend's payload templates, as its controller pastes the text in.
private enum TutorialTemplate {
    static func payload(_ pasted: String, sender: String, for platform: Platform) -> String {
        let text = "From " + sender + ": " + pasted
        switch platform {
        case .apns: return "{\"aps\":{\"alert\":\"" + text + "\"}}"
        case .fcmv1: return "{ \"message\":{\"data\" : {\"message\":\"" + text + "\"}}}"
        case .fcm, .gcm: return "{ \"data\" : {\"message\":\"" + text + "\"}}"
        case .wns: return "<toast><visual><binding template=\"ToastText01\"><text id=\"1\">" + text + "</text></binding></visual></toast>"
        }
    }

    /// What reaches the controller: the request body is a JSON string, which ASP.NET decodes.
    static func received(_ body: String) throws -> String {
        let wire = try JSONEncoder().encode(body)
        return try JSONDecoder().decode(String.self, from: wire)
    }
}

private func scalars(_ text: String?) -> [UInt32]? {
    text.map { $0.unicodeScalars.map(\.value) }
}

/// The text a phone shows for an APNs or FCM payload, read by a real JSON parser.
private func shownText(json payload: String, for platform: Platform) throws -> String? {
    let object = try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
    switch platform {
    case .apns: return (object?["aps"] as? [String: Any])?["alert"] as? String
    case .fcmv1: return ((object?["message"] as? [String: Any])?["data"] as? [String: Any])?["message"] as? String
    case .fcm, .gcm: return (object?["data"] as? [String: Any])?["message"] as? String
    case .wns: return nil
    }
}

#if canImport(FoundationXML) || canImport(Darwin)
/// Collects the character data of the toast's `<text>` element.
private final class ToastTextCollector: NSObject, XMLParserDelegate {
    private var depth = 0
    var text = ""
    var textElements = 0

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        if elementName == "text" {
            depth += 1
            textElements += 1
        }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        if elementName == "text" { depth -= 1 }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if depth > 0 { text += string }
    }

    /// The text element's content, or nil when the document is not well-formed.
    static func shownText(_ toast: String) -> (text: String, elements: Int)? {
        let collector = ToastTextCollector()
        let parser = XMLParser(data: Data(toast.utf8))
        parser.delegate = collector
        guard parser.parse() else { return nil }
        return (collector.text, collector.textElements)
    }
}
#endif

struct NotificationTextTests {
    // MARK: What the phone shows

    @Test(arguments: NotificationTextSample.all, [Platform.apns, .fcmv1, .fcm, .gcm])
    func jsonPayloadShowsExactlyWhatWasTyped(message: NotificationTextSample, platform: Platform) throws {
        let payload = try NotificationText.payload(message.text, sender: "alice", for: platform)
        let shown = try shownText(json: payload, for: platform)
        #expect(scalars(shown) == scalars("From alice: " + message.text))
    }

    #if canImport(FoundationXML) || canImport(Darwin)
    @Test(arguments: NotificationTextSample.xmlCompatible)
    func wnsToastShowsExactlyWhatWasTyped(message: NotificationTextSample) throws {
        let toast = try NotificationText.payload(message.text, sender: "alice", for: .wns)
        let parsed = try #require(ToastTextCollector.shownText(toast), "not well-formed XML: \(toast)")
        #expect(parsed.elements == 1)
        #expect(scalars(parsed.text) == scalars("From alice: " + message.text))
    }

    @Test func wnsToastKeepsTabAndNewlineAsTyped() throws {
        let toast = try NotificationText.payload("a\tb\nc", sender: "alice", for: .wns)
        let parsed = try #require(ToastTextCollector.shownText(toast))
        #expect(scalars(parsed.text) == scalars("From alice: a\tb\nc"))
    }

    @Test func wnsToastKeepsCarriageReturnsApartFromLineFeeds() throws {
        // An XML parser reads a literal CR, or CR LF, as a single LF.
        for text in ["a\rb", "a\r\nb", "a\n\rb", "\r\r"] {
            let toast = try NotificationText.payload(text, sender: "alice", for: .wns)
            let parsed = try #require(ToastTextCollector.shownText(toast))
            #expect(scalars(parsed.text) == scalars("From alice: " + text), "\(toast)")
        }
    }
    #endif

    @Test(arguments: [NotificationTextSample.control, .everything])
    func wnsRefusesControlCharactersXMLCannotCarry(message: NotificationTextSample) {
        for escaping in NotificationText.Escaping.allCases {
            let error = #expect(throws: CoreError.self) {
                _ = try NotificationText.body(message.text, for: .wns, escaping: escaping)
            }
            let text = invalidArgumentText(error)
            #expect(text?.contains("U+0001") == true, "\(String(describing: error))")
        }
        #expect(throws: CoreError.self) {
            try NotificationText.payload(message.text, sender: "alice", for: .wns)
        }
        #expect(throws: CoreError.self) {
            try NotificationText.checkSize(message.text, sender: "alice", for: .wns)
        }
    }

    @Test(arguments: ["\u{00}", "\u{08}", "\u{0B}", "\u{0C}", "\u{1B}", "\u{1F}", "\u{FFFE}", "\u{FFFF}"])
    func wnsRefusesEveryCharacterXMLForbids(character: String) {
        let error = #expect(throws: CoreError.self) {
            _ = try NotificationText.payload("x" + character + "y", sender: "alice", for: .wns)
        }
        #expect(invalidArgumentText(error) != nil)
    }

    @Test(arguments: [NotificationTextSample.control, .everything])
    func jsonPlatformsCarryControlCharacters(message: NotificationTextSample) throws {
        for platform in [Platform.apns, .fcmv1, .fcm, .gcm] {
            let body = try NotificationText.body(message.text, for: platform, escaping: .tutorial)
            #expect(!body.unicodeScalars.contains("\u{01}"))
        }
    }

    // MARK: The tutorial backend's pasting

    @Test(arguments: NotificationTextSample.all, Platform.allCases)
    func tutorialBackendPastingTheBodyBuildsThePayload(message: NotificationTextSample, platform: Platform) throws {
        if platform == .wns && message.hasXMLForbiddenControl { return }
        let body = try NotificationText.body(message.text, for: platform, escaping: .tutorial)
        let built = TutorialTemplate.payload(try TutorialTemplate.received(body), sender: "alice", for: platform)
        let expected = try NotificationText.payload(message.text, sender: "alice", for: platform)
        #expect(scalars(built) == scalars(expected))
    }

    @Test(arguments: NotificationTextSample.all, Platform.allCases)
    func withoutEscapingTheBodyIsTheMessage(message: NotificationTextSample, platform: Platform) throws {
        if platform == .wns && message.hasXMLForbiddenControl { return }
        let body = try NotificationText.body(message.text, for: platform, escaping: .none)
        #expect(scalars(body) == scalars(message.text))
    }

    @Test(arguments: Platform.allCases)
    func plainTextNeedsNoEscaping(platform: Platform) throws {
        let text = "Dinner at 8? Bring wine 🍷, café crème"
        #expect(try NotificationText.body(text, for: platform, escaping: .tutorial) == text)
    }

    @Test(arguments: [NotificationTextSample.quote, .backslash, .newline])
    func pastingTheRawTextWouldBreakTheJSON(message: NotificationTextSample) throws {
        // The reason for escaping: the tutorial backend with an unescaped body gives invalid JSON.
        let raw = TutorialTemplate.payload(message.text, sender: "alice", for: .apns)
        let parsed = try? JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any]
        let alert = (parsed?["aps"] as? [String: Any])?["alert"] as? String
        #expect(alert != "From alice: " + message.text)
        let escaped = try NotificationText.body(message.text, for: .apns, escaping: .tutorial)
        #expect(escaped != message.text)
    }

    // MARK: Size limits

    private static let wrappers: [(Platform, String, Int)] = [
        (.apns, "{\"aps\":{\"alert\":\"From alice: \"}}", 4096),
        (.fcmv1, "{ \"message\":{\"data\" : {\"message\":\"From alice: \"}}}", 4096),
        (.fcm, "{ \"data\" : {\"message\":\"From alice: \"}}", 4096),
        (.gcm, "{ \"data\" : {\"message\":\"From alice: \"}}", 4096),
        (.wns, "<toast><visual><binding template=\"ToastText01\"><text id=\"1\">From alice: </text></binding></visual></toast>", 5120),
    ]

    @Test func limitsAreThePlatformLimits() {
        #expect(NotificationText.payloadLimit(.apns) == 4096)
        #expect(NotificationText.payloadLimit(.fcmv1) == 4096)
        #expect(NotificationText.payloadLimit(.fcm) == 4096)
        #expect(NotificationText.payloadLimit(.gcm) == 4096)
        #expect(NotificationText.payloadLimit(.wns) == 5120)
    }

    @Test func aMessageThatExactlyFitsPasses() throws {
        for (platform, wrapper, limit) in Self.wrappers {
            let message = String(repeating: "a", count: limit - wrapper.utf8.count)
            #expect(try NotificationText.payload(message, sender: "alice", for: platform).utf8.count == limit)
            #expect(throws: Never.self, "\(platform)") {
                try NotificationText.checkSize(message, sender: "alice", for: platform)
            }
        }
    }

    @Test func oneByteMoreIsTooLargeAndTheErrorSaysWhy() throws {
        for (platform, wrapper, limit) in Self.wrappers {
            let message = String(repeating: "a", count: limit - wrapper.utf8.count + 1)
            let error = #expect(throws: CoreError.self, "\(platform)") {
                try NotificationText.checkSize(message, sender: "alice", for: platform)
            }
            guard case .messageTooLarge(let text)? = error else {
                Issue.record("expected messageTooLarge for \(platform), got \(String(describing: error))")
                continue
            }
            #expect(text.contains(platform.rawValue), "\(text)")
            #expect(text.contains(String(limit + 1)), "\(text)")
            #expect(text.contains(String(limit)), "\(text)")
            #expect(text.hasSuffix("shorten it by at least 1 byte"), "\(text)")
            #expect(error?.wireError.code == .messageTooLarge)
        }
    }

    @Test func escapingCountsTowardsTheLimit() {
        let quotes = String(repeating: "\"", count: 2100)
        #expect(quotes.utf8.count < 4096)
        let error = #expect(throws: CoreError.self) {
            try NotificationText.checkSize(quotes, sender: "alice", for: .apns)
        }
        guard case .messageTooLarge(let text)? = error else {
            Issue.record("expected messageTooLarge, got \(String(describing: error))")
            return
        }
        let expectedSize = "{\"aps\":{\"alert\":\"From alice: \"}}".utf8.count + 2 * 2100
        #expect(text.contains(String(expectedSize)), "\(text)")
    }

    @Test func xmlEscapingCountsTowardsTheWNSLimit() {
        // 1100 ampersands are 1100 bytes typed but 5500 bytes as &amp;.
        let ampersands = String(repeating: "&", count: 1100)
        #expect(throws: CoreError.self) {
            try NotificationText.checkSize(ampersands, sender: "alice", for: .wns)
        }
        #expect(throws: Never.self) {
            try NotificationText.checkSize(ampersands, sender: "alice", for: .apns)
        }
    }

    @Test func sizeIsCountedInUTF8Bytes() {
        // 1100 characters, 4400 bytes.
        let wine = String(repeating: "🍷", count: 1100)
        #expect(wine.count < 4096)
        #expect(throws: CoreError.self) {
            try NotificationText.checkSize(wine, sender: "alice", for: .apns)
        }
        #expect(throws: Never.self) {
            try NotificationText.checkSize(wine, sender: "alice", for: .wns)
        }
    }

    @Test func theSenderNameCountsTowardsTheLimit() {
        let wrapper = "{\"aps\":{\"alert\":\"From alice: \"}}"
        let message = String(repeating: "a", count: 4096 - wrapper.utf8.count)
        #expect(throws: Never.self) {
            try NotificationText.checkSize(message, sender: "alice", for: .apns)
        }
        #expect(throws: CoreError.self) {
            try NotificationText.checkSize(message, sender: "alice2", for: .apns)
        }
    }
}
