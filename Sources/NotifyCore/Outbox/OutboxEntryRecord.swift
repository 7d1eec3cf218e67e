#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// An outbox file as written on disk: its own type, apart from `Delivery` and the wire's
/// `DeliveryStatus`, so that a protocol change cannot change the disk format by accident.
///
/// Format 1 (no `version` field) did not record the account; format 2 does.
struct OutboxEntryRecord: Codable {
    static let currentVersion = 2

    struct Problem: Codable {
        var code: String
        var message: String
    }

    var version: Int?
    var id: String
    var sequence: Int
    var to: String
    var platform: String
    var message: String
    var createdAt: Date
    var expiresAt: Date
    var attempts: Int
    var nextAttemptAt: Date?
    var lastError: Problem?
    var state: String
    var account: AccountKey?
    var idempotencyKey: String?
    /// A notification request's (`Delivery.request`); absent for a registrations backend's send.
    var tags: [String]?
    var action: String?
    var silent: Bool?

    init(_ delivery: Delivery) {
        version = Self.currentVersion
        id = delivery.id
        sequence = delivery.sequence
        to = delivery.to
        platform = delivery.pns
        message = delivery.message
        createdAt = delivery.createdAt
        expiresAt = delivery.expiresAt
        attempts = delivery.attempts
        nextAttemptAt = delivery.nextAttemptAt
        lastError = delivery.lastError.map { Problem(code: $0.code.rawValue, message: $0.message) }
        state = delivery.state.rawValue
        account = delivery.account
        idempotencyKey = delivery.idempotencyKey
        tags = delivery.request?.tags
        action = delivery.request?.action
        silent = delivery.request?.silent
    }

    /// The most bytes `delivery` can take in a file, in a batch's deeper indentation too:
    /// each string at six bytes per byte (`\u0000`, JSON's longest escape, for a control
    /// character), and 2 KiB for the keys, numbers, dates and spaces around them.
    static func sizeBound(of delivery: Delivery) -> Int {
        // Added up one by one: a list of the strings cost an allocation per message.
        var bytes = delivery.id.utf8.count + delivery.to.utf8.count + delivery.message.utf8.count
        bytes += delivery.pns.utf8.count + delivery.state.rawValue.utf8.count
        if let request = delivery.request {
            bytes += request.action.utf8.count + request.tags.reduce(0) { $0 + $1.utf8.count + 4 }
        }
        bytes += (delivery.account?.user.utf8.count ?? 0) + (delivery.account?.backend.utf8.count ?? 0)
        bytes += (delivery.lastError?.code.rawValue.utf8.count ?? 0) + (delivery.lastError?.message.utf8.count ?? 0)
        bytes += delivery.idempotencyKey?.utf8.count ?? 0
        return 2048 + 6 * bytes
    }

    /// Writes the record as `JSONEncoder.state` encodes it (keys sorted); false for a date
    /// the writer leaves to the encoder.
    func write(to json: inout JSONTextWriter) -> Bool {
        json.beginObject()
        if let account {
            json.key("account")
            json.beginObject()
            if account.api != .registrations {
                json.key("api")
                json.string(account.api.rawValue)
            }
            json.key("backend")
            json.string(account.backend)
            json.key("user")
            json.string(account.user)
            json.endObject()
        }
        if let action {
            json.key("action")
            json.string(action)
        }
        json.key("attempts")
        json.int(attempts)
        json.key("created_at")
        guard json.date(createdAt) else { return false }
        json.key("expires_at")
        guard json.date(expiresAt) else { return false }
        json.key("id")
        json.string(id)
        if let idempotencyKey {
            json.key("idempotency_key")
            json.string(idempotencyKey)
        }
        if let lastError {
            json.key("last_error")
            // The same two keys as a reply's error: one writer for both.
            WireError(code: ErrorCode(rawValue: lastError.code), message: lastError.message).write(to: &json)
        }
        json.key("message")
        json.string(message)
        if let nextAttemptAt {
            json.key("next_attempt_at")
            guard json.date(nextAttemptAt) else { return false }
        }
        json.key("platform")
        json.string(platform)
        json.key("sequence")
        json.int(sequence)
        if let silent {
            json.key("silent")
            json.bool(silent)
        }
        json.key("state")
        json.string(state)
        if let tags {
            json.key("tags")
            json.strings(tags)
        }
        json.key("to")
        json.string(to)
        if let version {
            json.key("version")
            json.int(version)
        }
        json.endObject()
        return true
    }

    /// The file of one record, as `JSONEncoder.state` writes it.
    func stateFile() throws -> Data {
        var json = JSONTextWriter(pretty: true, escapingSlashes: true, capacity: OutboxEntryRecord.textSize(message))
        guard write(to: &json) else { return try JSONEncoder.state.encode(self) }
        return Data(json.bytes)
    }

    /// Room for a record's text, most of the time.
    static func textSize(_ message: String) -> Int {
        640 + message.utf8.count
    }

    struct UnknownPlatform: Error, CustomStringConvertible {
        var name: String
        var description: String { "unknown platform '\(name)'" }
    }

    func delivery() throws -> Delivery {
        var request: Delivery.RequestFields?
        let platform: Platform?
        if self.platform == Delivery.everyPlatform {
            guard let tags, let action else { throw DiskFormat.OutOfRange(description: "a notification request without its tags and action") }
            request = Delivery.RequestFields(tags: tags, action: action, silent: silent ?? false)
            platform = nil
        } else {
            guard let named = Platform(rawValue: self.platform) else { throw UnknownPlatform(name: self.platform) }
            platform = named
        }
        // Numbers from a file are checked before use: one past the ids notifyd hands out
        // would overflow the id counter, a negative one reuse ids.
        guard (1...OutboxIDCounter.largestSequence).contains(sequence) else {
            throw DiskFormat.OutOfRange(description: "sequence \(sequence) is not one notifyd writes")
        }
        guard attempts >= 0 else { throw DiskFormat.OutOfRange(description: "attempts \(attempts) is not one notifyd writes") }
        var delivery = Delivery(sequence: sequence, to: to, platform: platform, message: message, createdAt: createdAt, expiresAt: expiresAt, account: account,
                                request: request)
        delivery.id = id
        delivery.attempts = attempts
        delivery.nextAttemptAt = nextAttemptAt
        delivery.lastError = lastError.map { WireError(code: ErrorCode($0.code), message: $0.message) }
        delivery.state = DeliveryState(state)
        delivery.idempotencyKey = idempotencyKey
        return delivery
    }

    enum CodingKeys: String, CodingKey {
        case version, id, sequence, to, platform, message, attempts, state, account, tags, action, silent
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case nextAttemptAt = "next_attempt_at"
        case lastError = "last_error"
        case idempotencyKey = "idempotency_key"
    }
}
