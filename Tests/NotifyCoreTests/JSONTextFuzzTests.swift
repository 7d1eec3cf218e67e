import NotifyCoding
import Foundation
import NotifyProtocol
import NotifySystem
import NotifyTestSupport
import Testing
@testable import NotifyCore

/// The hand-written JSON text against `JSONEncoder`, byte for byte (not `String ==`, which
/// calls canonically equivalent texts equal), and the outbox's files read back by the loader.
struct JSONTextFuzzTests {
    struct Generator {
        var random: SplitMix64

        init(state: UInt64) {
            random = SplitMix64(seed: state)
        }

        mutating func next() -> UInt64 { random.next() }

        mutating func below(_ count: Int) -> Int { random.below(count) }

        mutating func scalar() -> Unicode.Scalar {
            switch below(6) {
            case 0: return Unicode.Scalar(UInt8(below(0x20)))
            case 1: return Unicode.Scalar(UInt8(0x20 + below(0x60)))
            case 2: return ["\"", "\\", "/", "\u{7F}", "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{301}", "\u{E9}", "\u{FFFF}", "\u{10FFFF}"][below(11)]
            default:
                while true {
                    if let scalar = Unicode.Scalar(UInt32(below(0x110000))) { return scalar }
                }
            }
        }

        mutating func text() -> String {
            var text = ""
            for _ in 0..<below(12) { text.unicodeScalars.append(scalar()) }
            return text
        }

        mutating func date() -> Date {
            let whole = Double(below(253_402_300_799))
            switch below(4) {
            case 0: return Date(timeIntervalSince1970: whole)
            case 1: return Date(timeIntervalSince1970: whole + 1 - Double(below(1000) + 1) * 1e-9)
            case 2: return Date(timeIntervalSinceReferenceDate: Double(below(1_000_000_000)) + Double(next() % 1_000_000) / 1e6)
            default: return Date(timeIntervalSince1970: Double(1_700_000_000 + below(200_000_000)) + Double(next() % 1_000_000_000) / 1e9)
            }
        }
    }

    @Test func aBodyIsWhatJSONEncoderWrites() throws {
        var random = Generator(state: 1)
        for _ in 0..<20_000 {
            let text = random.text()
            #expect(Array(HTTPBackend.jsonString(text)) == Array(try JSONEncoder().encode(text)))
        }
    }

    @Test func aSendReplyIsWhatTheEncoderWrites() throws {
        var random = Generator(state: 2)
        for _ in 0..<5_000 {
            let status = DeliveryStatus(id: random.text(), to: random.text(), pns: random.text(), state: DeliveryState(random.text()),
                                        attempts: Int(truncatingIfNeeded: random.next()), createdAt: random.date(),
                                        nextAttemptAt: random.below(2) == 0 ? nil : random.date(),
                                        expiresAt: random.below(2) == 0 ? nil : random.date(),
                                        error: random.below(2) == 0 ? nil : WireError(code: ErrorCode(random.text()), message: random.text()),
                                        preview: random.below(2) == 0 ? nil : random.text())
            let result = SendResult(deliveries: [status])
            guard let written = result.wireJSON else { continue }
            #expect(written == Array(try WireCoding.encoder().encode(result)))
        }
    }

    @Test func anOutboxFileIsWhatTheEncoderWritesAndLoadsBack() throws {
        var random = Generator(state: 3)
        for round in 0..<300 {
            var deliveries: [Delivery] = []
            for index in 0..<(1 + random.below(4)) {
                var delivery = Delivery(sequence: round * 10 + index + 1, to: random.text(),
                                        platform: Platform.allCases[random.below(Platform.allCases.count)], message: random.text(),
                                        createdAt: random.date(), expiresAt: random.date(),
                                        account: random.below(3) == 0 ? nil : AccountKey(user: random.text(), backend: random.text()))
                delivery.attempts = random.below(1000)
                if random.below(2) == 0 { delivery.nextAttemptAt = random.date() }
                if random.below(2) == 0 { delivery.lastError = WireError(code: ErrorCode(random.text()), message: random.text()) }
                if random.below(2) == 0 { delivery.idempotencyKey = random.text() }
                deliveries.append(delivery)
            }
            let batch = OutboxBatchRecord(deliveries)
            #expect(Array(try batch.stateFile()) == Array(try JSONEncoder.state.encode(batch)))
            for entry in batch.entries { #expect(Array(try entry.stateFile()) == Array(try JSONEncoder.state.encode(entry))) }
            let back = try JSONDecoder.decodeStateFile(OutboxBatchRecord.self, from: try batch.stateFile())
            for (read, delivery) in zip(try back.entries.map { try $0.delivery() }, deliveries) {
                #expect(Array(read.message.utf8) == Array(delivery.message.utf8) && Array(read.to.utf8) == Array(delivery.to.utf8) && read.id == delivery.id)
            }
        }
    }
}
