import NotifyCoding
import Foundation
import NotifyProtocol
import Testing

/// `JSONTextWriter` and what is written with it: byte for byte what `JSONEncoder` writes
/// for the same values, or nothing (the encoder is used then).
struct JSONTextWriterTests {
    /// Every control character, the characters JSON escapes, and some it does not.
    static let awkward: String = {
        var text = ""
        for value in 0..<0x20 { text.unicodeScalars.append(Unicode.Scalar(UInt8(value))) }
        return text + "\"\\/ <b>&\u{7F}é🍷\u{2028}\u{2029}\u{FEFF}end"
    }()

    static let texts = ["", "plain", "a/b", "http://[::1]:8080/path?q=1", awkward, String(repeating: "x", count: 3000) + "\n"]

    static let dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_800_000_000), Date(timeIntervalSince1970: 1_800_000_000.999_999),
                        Date(timeIntervalSince1970: 1_709_208_000.5), Date(timeIntervalSince1970: 253_402_300_700.9)]

    static func statuses() -> [DeliveryStatus] {
        var statuses: [DeliveryStatus] = []
        for (index, text) in texts.enumerated() {
            let date = dates[index % dates.count]
            statuses.append(DeliveryStatus(id: "000000000\(index)-apns", to: text, pns: "apns", state: .queued, attempts: index * 7 - 3,
                                           createdAt: date, nextAttemptAt: date.addingTimeInterval(61.25), expiresAt: date,
                                           error: WireError(code: .backendUnavailable, message: text), preview: text))
            statuses.append(DeliveryStatus(id: text, to: "bob", pns: text, state: DeliveryState(text), attempts: 0, createdAt: date))
            statuses.append(DeliveryStatus(id: "7", to: "bob", pns: "fcm", state: .delivered, attempts: Int.max, createdAt: date,
                                           expiresAt: nil, error: nil, preview: ""))
        }
        return statuses
    }

    @Test func aSendResultIsWrittenAsTheEncoderWritesIt() throws {
        let statuses = Self.statuses()
        for status in statuses {
            let result = SendResult(deliveries: [status])
            let written = try #require(result.wireJSON)
            #expect(Array(written) == Array(try WireCoding.encoder().encode(result)))
        }
        for result in [SendResult(deliveries: statuses), SendResult(deliveries: [])] {
            let written = try #require(result.wireJSON)
            #expect(Data(written) == (try WireCoding.encoder().encode(result)))
        }
    }

    @Test func aDateOutsideTheWritersYearsIsLeftToTheEncoder() {
        for seconds in [-1.5, -62_135_596_800, 253_402_300_800, Double.nan] {
            let status = DeliveryStatus(id: "1", to: "bob", pns: "apns", state: .queued, attempts: 0, createdAt: Date(timeIntervalSince1970: seconds))
            #expect(SendResult(deliveries: [status]).wireJSON == nil)
        }
    }

    @Test func prettyTextIsTheEncodersToo() throws {
        struct Inner: Encodable {
            var list: [Int]
            var name: String
        }
        struct Outer: Encodable {
            var empty: [Int]
            var inner: [Inner]
            var none: [String: Int]
            var when: Date
        }
        let value = Outer(empty: [], inner: [Inner(list: [1, -20, 0], name: Self.awkward), Inner(list: [], name: "a/b")], none: [:],
                          when: Date(timeIntervalSince1970: 1_800_000_000.5))
        var json = JSONTextWriter(pretty: true, escapingSlashes: true)
        json.beginObject()
        json.key("empty")
        json.beginArray()
        json.endArray()
        json.key("inner")
        json.beginArray()
        for inner in value.inner {
            json.nextElement()
            json.beginObject()
            json.key("list")
            json.beginArray()
            for number in inner.list {
                json.nextElement()
                json.int(number)
            }
            json.endArray()
            json.key("name")
            json.string(inner.name)
            json.endObject()
        }
        json.endArray()
        json.key("none")
        json.beginObject()
        json.endObject()
        json.key("when")
        let written = json.date(value.when)
        #expect(written)
        json.endObject()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        #expect(Array(json.bytes) == Array(try encoder.encode(value)))
    }
}
