import Foundation
import NotifyTestSupport
import Testing
@testable import NotifyCore
import NotifySystem

/// Every file notifyd reads back, damaged 2,000 ways each from a fixed seed: bytes flipped,
/// cut short, numbers replaced with extremes (Int64's ends and past them, -5, 1e308, NaN)
/// and values with the wrong type. Each is read as notifyd reads it at start, then used as
/// it is next (a new id covered, the outbox numbered): never a crash, and no number out of
/// range taken as it is.
@Suite struct StateFileFuzzTests {
    static let seed: UInt64 = 0x7374_6174_6566_757A
    static let variants = 2_000
    static let extremes = ["-5", "0", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "99999999999999999999",
                           "1e308", "-1e308", "NaN", "1.5", "\"7\"", "null", "[]", "{}", "true"]

    static let samples: [String: String] = [
        "state.json": """
            {"version":1,"token":"3F2A1B","platform":"apns","tags":["a"],"enabled":true,
             "registration":{"id":"8499-1","id_backend":"https://b.example","registered_at":"2026-01-01T00:00:00Z",
             "registered":{"handle":"3F2A1B","platform":"apns","tags":["a"],"user":"alice","backend":"https://b.example"}}}
            """,
        "credentials.json": #"{"version":1,"user":"alice","password":"pw","backend":"https://b.example","revision":"r1","saved_at":"2026-01-01T00:00:00Z"}"#,
        "outbox-ids": #"{"version":1,"reserved_through":2000}"#,
        "outbox-expired": #"{"version":1,"expired_through":"2026-01-01T00:00:00Z","sequences_through":2000}"#,
        "outbox/0000000007-apns.json": """
            {"version":1,"id":"0000000007-apns","sequence":7,"to":"bob","platform":"apns","message":"hi",
             "created_at":"2026-01-01T00:00:00Z","expires_at":"2099-01-01T00:00:00Z","attempts":2,"state":"queued",
             "account":{"user":"alice","backend":"https://b.example"}}
            """,
    ]

    @Test(arguments: samples.keys.sorted())
    func aDamagedFileIsReadWithoutACrashAndNoNumberOutOfRangeIsUsed(name: String) async throws {
        let failures = try await offThePool { try Self.run(name) }
        let count = failures.count
        #expect(count == 0, "\(count) failures (seed \(Self.seed)), first: \(failures.prefix(5).joined(separator: "\n"))")
    }

    @Sendable static func run(_ name: String) throws -> [String] {
        var random = SplitMix64(seed: seed ^ UInt64(samples.keys.sorted().firstIndex(of: name) ?? 0))
        let sample = Array(samples[name]!.utf8)
        var failures: [String] = []
        for number in 0..<variants {
            let directory = try ScratchDirectory()
            defer { directory.remove() }
            try FileManager.default.createDirectory(atPath: directory.file("outbox"), withIntermediateDirectories: true)
            let bytes = damaged(sample, &random)
            try Data(bytes).write(to: URL(fileURLWithPath: directory.file(name)))
            if let failure = readBack(name, in: directory.path) {
                failures.append("variant \(number) \(String(decoding: bytes, as: UTF8.self).debugDescription): \(failure)")
            }
        }
        return failures
    }

    /// Reads the file as notifyd does, and uses what it read: what was wrong, if anything.
    static func readBack(_ name: String, in directory: String) -> String? {
        switch name {
        case "state.json":
            _ = StateStore(directory: directory).load()
        case "credentials.json":
            _ = CredentialStore(directory: directory).load()
        case "outbox-ids":
            let counter = OutboxIDCounter(path: FilePath.join(directory, "outbox-ids"))
            _ = counter.load()
            let highest = counter.highest
            guard (0...OutboxIDCounter.largestSequence).contains(highest) else { return "the counter took \(highest)" }
            try? counter.cover(highest + 1)
        case "outbox-expired":
            let mark = OutboxExpiryMark(path: FilePath.join(directory, "outbox-expired"))
            _ = mark.load()
            _ = mark.covers(sequence: 7, expiresAt: Date())
            _ = try? mark.record(expiredAt: Date(), sequences: [8], beingTried: [])
        default:
            let store = OutboxStore(stateDirectory: directory)
            let (deliveries, _) = store.load()
            let highest = store.highestSequence()
            guard (0...OutboxIDCounter.largestSequence).contains(highest) else { return "the outbox took \(highest)" }
            if let bad = deliveries.first(where: { !(1...OutboxIDCounter.largestSequence).contains($0.sequence) || $0.attempts < 0 }) {
                return "an entry with sequence \(bad.sequence), attempts \(bad.attempts) was taken"
            }
            var queue = OutboxQueue(backoff: Backoff(), concurrency: 4)
            for delivery in deliveries { queue.add(delivery) }
            _ = queue.takeReady(now: Date())
        }
        return nil
    }

    static func damaged(_ sample: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = sample
        switch random.next() % 4 {
        case 0:
            for _ in 0...(random.next() % 4) {
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
            }
        case 1:
            bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
        default:
            // A number, or a value after a key, replaced with an extreme.
            let text = String(decoding: bytes, as: UTF8.self)
            let values = text.ranges(of: /:\s*(-?\d+|"[^"]*"|true|false)/)
            guard !values.isEmpty else { return bytes }
            let range = values[Int(random.next() % UInt64(values.count))]
            let extreme = extremes[Int(random.next() % UInt64(extremes.count))]
            bytes = Array((String(text[..<range.lowerBound]) + ":" + extreme + String(text[range.upperBound...])).utf8)
        }
        return bytes
    }
}
