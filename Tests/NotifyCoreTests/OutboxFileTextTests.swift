import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// The outbox's files are written without the encoder, byte for byte as it writes them.
struct OutboxFileTextTests {
    static func deliveries() -> [Delivery] {
        var deliveries: [Delivery] = []
        let awkward = "\u{0}\u{1F}\"\\/ <b>\n\t&\u{7F}é🍷\u{2028}"
        for (index, text) in ["hello", "", awkward, "http://[::1]:8080/x?y=1"].enumerated() {
            let created = Date(timeIntervalSince1970: 1_800_000_000 + Double(index) * 1.3)
            var delivery = Delivery(sequence: index + 1, to: text.isEmpty ? "bob" : text, platform: Platform.allCases[index % Platform.allCases.count],
                                    message: text, createdAt: created, expiresAt: created.addingTimeInterval(604_800.7),
                                    account: index == 1 ? nil : AccountKey(user: "alice" + text, backend: "https://backend.example/" + text))
            delivery.attempts = index * 3
            if index >= 2 {
                delivery.nextAttemptAt = created.addingTimeInterval(30.5)
                delivery.lastError = WireError(code: .backendUnavailable, message: "HTTP 503: " + text)
                delivery.idempotencyKey = UUID().uuidString.lowercased()
            }
            if index == 3 { delivery.state = .failed }
            deliveries.append(delivery)
        }
        return deliveries
    }

    @Test func anEntryIsWrittenAsTheEncoderWritesIt() throws {
        for delivery in Self.deliveries() {
            let record = OutboxEntryRecord(delivery)
            #expect(Array(try record.stateFile()) == Array(try JSONEncoder.state.encode(record)))
        }
    }

    @Test func aBatchIsWrittenAsTheEncoderWritesIt() throws {
        let record = OutboxBatchRecord(Self.deliveries())
        #expect(Array(try record.stateFile()) == Array(try JSONEncoder.state.encode(record)))
    }

    @Test func aDateTheWriterLeavesGoesToTheEncoder() throws {
        var delivery = Self.deliveries()[0]
        delivery.expiresAt = .distantFuture
        let record = OutboxBatchRecord([delivery, Self.deliveries()[2]])
        #expect(try record.stateFile() == (try JSONEncoder.state.encode(record)))
        #expect(try record.entries[0].stateFile() == (try JSONEncoder.state.encode(record.entries[0])))
    }
}
