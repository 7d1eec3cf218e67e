import NotifyCoding
import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyProtocol

/// The wire's dates read and written without Foundation's calendar, exactly as
/// Foundation's ISO 8601 style reads and writes them.
struct WireDateTests {
    @Test func formatsAndParsesLikeFoundationAcrossCenturiesAndLeapDays() async throws {
        let mismatches = try await offThePool {
            var mismatches: [String] = []
            var seconds: Double = -2_208_988_800  // 1900-01-01
            while seconds < 7_258_118_400 {  // 2200-01-01
                let date = Date(timeIntervalSince1970: seconds)
                let expected = date.formatted(Date.ISO8601FormatStyle())
                let formatted = WireDate.format(date)
                if formatted != expected { mismatches.append("\(seconds) formatted as \(formatted), not \(expected)") }
                if WireDate.parse(expected) != date { mismatches.append("\(expected) not read as \(seconds)") }
                seconds += 86_400 * 3 + 3_671.0  // every day of the week and hour, over the years
            }
            return mismatches
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(5))")
        for text in ["2000-02-29T23:59:59Z", "2024-02-29T00:00:00Z", "1970-01-01T00:00:00Z", "2100-03-01T12:00:00Z"] {
            let date = try #require(WireDate.parse(text))
            #expect(date == (try Date(text, strategy: Date.ISO8601FormatStyle())), "\(text)")
            #expect(WireDate.format(date) == text)
        }
    }

    @Test func fractionsOfASecondAreDroppedAsTheEncoderDoes() throws {
        let date = Date(timeIntervalSince1970: 1_800_000_000.75)
        #expect(WireDate.format(date) == "2027-01-15T08:00:00Z")
        let encoded = try WireCoding.encoder().encode([date])
        #expect(String(decoding: encoded, as: UTF8.self) == "[\"2027-01-15T08:00:00Z\"]")
    }

    @Test func anythingElseIsLeftToFoundation() {
        for text in ["2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01T00:00:00+01:00",
                     "2024-01-01T00:00:00.5Z", "2024-01-01 00:00:00Z", "0000-01-01T00:00:00Z", "２０２４-01-01T00:00:00Z", ""] {
            #expect(WireDate.parse(text) == nil, "\(text)")
        }
    }

    @Test func theDecoderStillAcceptsWhatFoundationReadsAndRefusesTheRest() throws {
        let decoder = WireCoding.decoder()
        let offset = try decoder.decode([Date].self, from: Data("[\"2024-01-01T01:00:00+01:00\"]".utf8))
        #expect(offset == [Date(timeIntervalSince1970: 1_704_067_200)])
        #expect(throws: DecodingError.self) { try decoder.decode([Date].self, from: Data("[\"yesterday\"]".utf8)) }
    }
}
