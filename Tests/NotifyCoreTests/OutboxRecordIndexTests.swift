import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// A start reads a queued record's index fields straight from its bytes
/// (`OutboxRecordIndex`): whatever it reads must be what the full decoder reads, and any
/// record it is not sure of must go to the full decoder.
struct OutboxRecordIndexTests {
    static let created = Date(timeIntervalSince1970: 1_790_000_000)

    static func delivery(_ message: String, to: String = "bob", platform: Platform = .apns, account: AccountKey? = AccountKey(user: "alice", backend: "http://127.0.0.1:8080")) -> Delivery {
        var delivery = Delivery(sequence: 42, to: to, platform: platform, message: message, createdAt: created,
                                expiresAt: created.addingTimeInterval(86_400), account: account)
        delivery.idempotencyKey = "7c1e2a44-0000-4000-8000-000000000001"
        return delivery
    }

    static func record(_ delivery: Delivery) throws -> Data {
        try OutboxEntryRecord(delivery).stateFile()
    }

    static func index(of data: Data) -> OutboxRecordIndex? {
        data.withUnsafeBytes { OutboxRecordIndex.read($0) }
    }

    /// Texts with every kind of escape a record can hold: quotes, backslashes, control
    /// characters, slashes, two-, three- and four-byte characters, and `\u` escapes of
    /// each length the writer or an older encoder may have used.
    static let texts = ["", "plain", "quote \" and backslash \\ and slash /", "tab\tnew\nline\r\u{8}\u{c}", "\u{1}\u{1f}\u{7f}",
                        "é ü ñ", "日本語のテキスト", "emoji 🎉👍🏽", String(repeating: "x", count: 4000), "$(alertAction) \u{2028}\u{2029}"]

    @Test(arguments: texts)
    func readsWhatTheDecoderReads(text: String) throws {
        for account in [AccountKey(user: "alice", backend: "http://127.0.0.1:8080"), AccountKey(user: "al", backend: "https://b.example", api: .installations), nil] {
            for platform in [Platform.apns, .fcmv1, .wns] {
                // A name with escapes in it too: the writer escapes `/`, and a user may be named anything.
                let delivery = Self.delivery(text, to: platform == .wns ? "b\"o/b\u{1}" : "bob", platform: platform, account: account)
                let data = try Self.record(delivery)
                let index = try #require(Self.index(of: data), "a plain queued record is read: \(String(decoding: data, as: UTF8.self))")
                let decoded = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
                #expect(index.id == decoded.id)
                #expect(index.sequence == decoded.sequence)
                #expect(index.to == decoded.to)
                #expect(index.platform == decoded.platform)
                #expect(index.createdAt == decoded.createdAt)
                #expect(index.expiresAt == decoded.expiresAt)
                #expect(index.account == decoded.account)
                #expect(index.messageBytes == decoded.message.utf8.count, "the text's length for \(text.debugDescription)")
                #expect(index.delivery.orderKey == decoded.orderKey)
            }
        }
    }

    /// `\u` escapes as another encoder may write them, the surrogate pair included.
    @Test func countsEscapedCharactersAsTheirUTF8Bytes() throws {
        let data = try Self.record(Self.delivery("MARK"))
        let text = String(decoding: data, as: UTF8.self)
        let escaped = #"\u0041\u00e9\u65e5\ud83c\udf89\n"#
        let index = try #require(Self.index(of: Data(text.replacingOccurrences(of: "MARK", with: escaped).utf8)))
        #expect(index.messageBytes == "Aé日🎉\n".utf8.count)
        // A lone surrogate is not a character: the full decoder has the last word.
        #expect(Self.index(of: Data(text.replacingOccurrences(of: "MARK", with: #"\ud83c"#).utf8)) == nil)
        #expect(Self.index(of: Data(text.replacingOccurrences(of: "MARK", with: #"\q"#).utf8)) == nil)
    }

    /// A failed or expired record, kept to be listed until a purge, is read with its state,
    /// attempts and last error as the decoder reads them, its text only counted.
    @Test(arguments: [DeliveryState.failed, .expired])
    func readsAFailedOrExpiredRecordAsTheDecoderReadsIt(state: DeliveryState) throws {
        for lastError in [WireError(code: .timeout, message: "not delivered before it expired"), WireError(code: .backendRejected, message: "HTTP 400: \"bad\" / request"), nil] {
            var delivery = Self.delivery(String(repeating: "text ", count: 200))
            delivery.state = state
            delivery.attempts = 7
            delivery.lastError = lastError
            let data = try Self.record(delivery)
            let index = try #require(Self.index(of: data), "\(String(decoding: data, as: UTF8.self))")
            let decoded = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
            #expect(index.delivery.state == decoded.state)
            #expect(index.delivery.attempts == decoded.attempts)
            #expect(index.delivery.lastError == decoded.lastError)
            #expect(index.delivery.id == decoded.id && index.delivery.to == decoded.to && index.delivery.account == decoded.account)
            #expect(index.messageBytes == decoded.message.utf8.count)
        }
    }

    /// Every record that is not a message waiting its first turn or one failed or expired,
    /// or that holds what the index does not keep, goes to the full decoder.
    @Test func leavesAnyOtherShapeToTheDecoder() throws {
        var retried = Self.delivery("retried")
        retried.attempts = 2
        retried.lastError = WireError(code: .backendUnavailable, message: "503")
        retried.nextAttemptAt = Self.created.addingTimeInterval(60)
        // Queued after an attempt: not waiting its first turn, though nothing else is recorded.
        var tried = Self.delivery("tried")
        tried.attempts = 1
        var erred = Self.delivery("erred")
        erred.lastError = WireError(code: .backendUnavailable, message: "503")
        var failedWithRetry = Self.delivery("failed")
        failedWithRetry.state = .failed
        failedWithRetry.nextAttemptAt = Self.created.addingTimeInterval(60)
        var delivered = Self.delivery("delivered")
        delivered.state = .delivered
        let request = Delivery(sequence: 43, to: "bob", platform: nil, message: "to tags", createdAt: Self.created, expiresAt: Self.created.addingTimeInterval(60),
                               account: nil, request: Delivery.RequestFields(tags: ["username:bob"], action: "notification", silent: false))
        for delivery in [retried, tried, erred, failedWithRetry, delivered, request] {
            #expect(Self.index(of: try Self.record(delivery)) == nil, "\(delivery.id) \(delivery.state)")
        }
        let plain = String(decoding: try Self.record(Self.delivery("plain")), as: UTF8.self)
        let changed = [
            plain.replacingOccurrences(of: "\"version\" : 2", with: "\"version\" : 3"),
            plain.replacingOccurrences(of: "\"version\" : 2", with: "\"version\" : 0"),
            plain.replacingOccurrences(of: "\"to\" :", with: "\"unknown\" : 1,\n  \"to\" :"),
            plain.replacingOccurrences(of: "\"sequence\" : 42", with: "\"sequence\" : -42"),
            plain.replacingOccurrences(of: "\"sequence\" : 42", with: "\"sequence\" : 0"),
            plain.replacingOccurrences(of: "T", with: "t"),
            String(plain.dropLast(3)),
        ]
        for text in changed {
            #expect(text != plain)
            #expect(Self.index(of: Data(text.utf8)) == nil, "\(text)")
        }
    }

    /// A key written twice (by hand, or by another tool): the decoder keeps the first, so
    /// the reader must either keep the first too or leave the record to the decoder, never
    /// read another recipient, account, id or length than the one the message is sent with.
    @Test func aRepeatedKeyIsNotReadOtherwiseThanTheDecoderReadsIt() throws {
        let plain = String(decoding: try Self.record(Self.delivery("plain")), as: UTF8.self)
        let repeated = [
            plain.replacingOccurrences(of: "\"to\" : \"bob\"", with: "\"to\" : \"bob\", \"to\" : \"eve\""),
            plain.replacingOccurrences(of: "\"user\" : \"alice\"", with: "\"user\" : \"alice\", \"user\" : \"mallory\""),
            plain.replacingOccurrences(of: "\"backend\" :", with: "\"api\" : \"registrations\", \"api\" : \"installations\", \"backend\" :"),
            plain.replacingOccurrences(of: "\"platform\" : \"apns\"", with: "\"platform\" : \"apns\", \"platform\" : \"wns\""),
            plain.replacingOccurrences(of: "\"message\" : \"plain\"", with: "\"message\" : \"plain\", \"message\" : \"a longer text\""),
            plain.replacingOccurrences(of: "\"sequence\" : 42", with: "\"sequence\" : 42, \"sequence\" : 43"),
        ]
        for text in repeated {
            #expect(text != plain)
            let data = Data(text.utf8)
            guard let index = Self.index(of: data) else { continue }
            let decoded = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
            #expect(index.to == decoded.to && index.account == decoded.account && index.platform == decoded.platform, "\(text)")
            #expect(index.sequence == decoded.sequence && index.messageBytes == decoded.message.utf8.count, "\(text)")
            #expect(index.delivery.orderKey == decoded.orderKey, "\(text)")
        }
    }

    /// A date the writer leaves to the encoder (before 1970): the decoder reads it in the
    /// calendar Foundation's `.iso8601` uses, which is Julian before October 1582, so the
    /// reader must agree or leave it to the decoder.
    @Test(arguments: ["0001-01-01T00:00:00Z", "1500-03-01T12:00:00Z", "1582-10-04T00:00:00Z", "1969-12-31T23:59:59Z"])
    func aDateOutsideTheWritersOwnRangeIsReadAsTheDecoderReadsIt(date: String) throws {
        let plain = String(decoding: try Self.record(Self.delivery("plain")), as: UTF8.self)
        let written = WireDate.format(Self.created)
        let text = plain.replacingOccurrences(of: "\"created_at\" : \"" + written + "\"", with: "\"created_at\" : \"" + date + "\"")
        #expect(text != plain)
        let data = Data(text.utf8)
        let decoded = try JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
        guard let index = Self.index(of: data) else { return }
        #expect(index.createdAt == decoded.createdAt, "\(date): \(index.createdAt) read, \(decoded.createdAt) decoded")
    }

    /// Damaged bytes never crash the reader, and what it does read the decoder agrees with.
    @Test func damagedRecordsAreReadAsTheDecoderReadsThemOrNotAtAll() throws {
        let plain = Array(try Self.record(Self.delivery("a text with \"escapes\" and ✓")))
        var generator = SystemRandomNumberGenerator()
        for round in 0..<2000 {
            var bytes = plain
            for _ in 0..<(1 + round % 3) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                if round % 2 == 0 {
                    bytes[position] = UInt8.random(in: 0...255, using: &generator)
                } else {
                    bytes.remove(at: position)
                }
            }
            let data = Data(bytes)
            guard let index = Self.index(of: data) else { continue }
            let decoded = try? JSONDecoder.decodeStateFile(OutboxEntryRecord.self, from: data).delivery()
            guard let decoded else { continue }  // the reader may read what the decoder refuses: the record is decoded whole at its turn
            #expect(index.id == decoded.id && index.sequence == decoded.sequence && index.to == decoded.to, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(index.messageBytes == decoded.message.utf8.count)
        }
    }

    /// A batch file's `version` and `entries` written twice count as the decoder counts
    /// them: the first of each (a newer version first is still refused; no entry read twice).
    @Test func aBatchsKeysWrittenTwiceCountAsTheirFirst() throws {
        let text = #"{ "version" : 3, "entries" : [ { "a" : 1 } ], "version" : 2, "entries" : [ { "b" : 2 }, { "c" : 3 } ] }"#
        let (entries, version) = try Array(text.utf8).withUnsafeBytes { try BatchEntryRanges.layout(of: $0) }
        #expect(version == 3)
        #expect(entries.count == 1)
    }
}
