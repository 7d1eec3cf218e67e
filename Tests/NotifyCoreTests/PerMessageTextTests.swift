import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// Text made once per message without Foundation's formatters: the same text they make.
struct PerMessageTextTests {
    @Test func anIdsSequenceIsPaddedAsPrintfPadsIt() {
        for sequence in [0, 1, 9, 10, 12_345, 999_999_999, 1_000_000_000, 9_999_999_999, 12_345_678_901, Int.max, -1, -12_345, Int.min] {
            #expect(Delivery.paddedSequence(sequence) == CFormat.string("%010ld", sequence))
        }
    }

    @Test func anIdempotencyKeyIsALowerCaseUUID() throws {
        var keys = Set<String>()
        for _ in 0..<100 {
            let key = Delivery.newIdempotencyKey()
            let uuid = try #require(UUID(uuidString: key))
            #expect(uuid.uuidString.lowercased() == key)
            #expect(uuid.uuid.6 >> 4 == 4 && uuid.uuid.8 >> 6 == 0b10, "a random (version 4) UUID of RFC 4122's variant: \(key)")
            keys.insert(key)
        }
        #expect(keys.count == 100)
    }

    @Test func aSendsBodyIsTheEncodersJSONString() throws {
        var control = ""
        for value in 0..<0x20 { control.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        for text in ["", "plain", "From alice: hi", #"{"aps":{"alert":"x\"y"}}"#, "a/b\\c", control + "\u{7F}é🍷\u{2028}"] {
            #expect(HTTPBackend.jsonString(text) == (try JSONEncoder().encode(text)))
        }
    }

    @Test func escapingTakesTextWithNothingToEscapeAsItIs() {
        for text in ["", "plain text", "é🍷 <b>&", "a/b", "…€"] {
            #expect(JSONStringText.escaped(text) == text)
        }
        #expect(JSONStringText.escaped("a\u{2028}b\"\\\n") == "a\\u2028b\\\"\\\\\\n")
    }
}

extension PerMessageTextTests {
    @Test func aPayloadsSizeIsCountedAsItWouldBeWritten() throws {
        for message in ["", "hi", "say \"hi\"\n\t\\ <b>&'", "é🍷\u{2028}\u{1}", String(repeating: "x", count: 5000)] {
            for platform in Platform.allCases {
                let written = try? NotificationText.payload(message, sender: "alice", for: platform).utf8.count
                #expect((try? NotificationText.payloadSize(message, sender: "alice", for: platform)) == written)
            }
        }
    }

    @Test func aPreviewIsTheFirstFortyCharacters() {
        for message in ["", "short", String(repeating: "é", count: 20), String(repeating: "a", count: 40), String(repeating: "a", count: 41),
                        String(repeating: "\r\n", count: 30), String(repeating: "🍷", count: 50), "e\u{301}" + String(repeating: "x", count: 39)] {
            #expect(Delivery.preview(message) == String(message.prefix(40)))
        }
    }
}
