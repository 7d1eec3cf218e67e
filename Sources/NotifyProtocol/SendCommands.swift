#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `send`: a notification to another user, one backend request per platform.
public struct SendCommand: NotifyCommand {
    public static let name = "send"
    public typealias Result = SendResult

    /// The recipient's user name (the backend's `to_tag`; at an installations backend, the
    /// tag `username:<to>`). Absent only when `tags` names the recipients.
    public var to: String?
    public var message: String
    /// Platforms to send to; the daemon's default (`send_platforms`, else apns) when absent.
    /// An installations backend sends every request to all platforms, and takes none.
    public var pns: [String]?
    /// Wait until delivered (or failed, or `timeout`), instead of answering once queued.
    public var wait: Bool?
    /// False: fail now instead of queueing when the backend cannot take it.
    public var queue: Bool?
    public var timeout: Double?
    /// Installations backend only: raw tags, any of which a device must have (besides `to`).
    public var tags: [String]?
    /// Installations backend only: the request's `action` (default `SendCommand.defaultAction`).
    public var action: String?
    /// Installations backend only: a silent (background) notification.
    public var silent: Bool?

    public init(to: String?, message: String, pns: [String]? = nil, wait: Bool? = nil, queue: Bool? = nil, timeout: Double? = nil,
                tags: [String]? = nil, action: String? = nil, silent: Bool? = nil) {
        self.to = to
        self.message = message
        self.pns = pns
        self.wait = wait
        self.queue = queue
        self.timeout = timeout
        self.tags = tags
        self.action = action
        self.silent = silent
    }

    /// The action of a request that names none: the backend service's sample answers 422 to
    /// an empty one (an operator-precedence slip in its check), so one is always sent.
    public static let defaultAction = "notification"

    public static let defaultTimeout = 30.0
}

public struct SendResult: Codable, Hashable, Sendable {
    public var deliveries: [DeliveryStatus]
    public init(deliveries: [DeliveryStatus]) { self.deliveries = deliveries }
}

/// Where one message to one platform stands. An open set.
public struct DeliveryState: OpenEnumeration {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// In the outbox, waiting for its turn or for the backend to come back.
    public static let queued = DeliveryState("queued")
    /// The backend accepted it (HTTP 200).
    public static let delivered = DeliveryState("delivered")
    /// Refused for good (bad credentials, another 4xx, or `queue: false` and unavailable).
    public static let failed = DeliveryState("failed")
    /// Still undelivered when its time in the outbox ran out.
    public static let expired = DeliveryState("expired")
}

public struct DeliveryStatus: Codable, Hashable, Sendable {
    /// The outbox entry's id (one per message and platform).
    public var id: String
    public var to: String
    public var pns: String
    public var state: DeliveryState
    public var attempts: Int
    public var createdAt: Date
    public var nextAttemptAt: Date?
    public var expiresAt: Date?
    /// Why it is queued, failed or expired.
    public var error: WireError?
    /// The first characters of the message, for listings.
    public var preview: String?

    public init(id: String, to: String, pns: String, state: DeliveryState, attempts: Int, createdAt: Date,
                nextAttemptAt: Date? = nil, expiresAt: Date? = nil, error: WireError? = nil, preview: String? = nil) {
        self.id = id
        self.to = to
        self.pns = pns
        self.state = state
        self.attempts = attempts
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.expiresAt = expiresAt
        self.error = error
        self.preview = preview
    }

    enum CodingKeys: String, CodingKey {
        case id, to, pns, state, attempts, error, preview
        case createdAt = "created_at"
        case nextAttemptAt = "next_attempt_at"
        case expiresAt = "expires_at"
    }
}

/// `outbox`: what is waiting, why, and when it is tried next; plus what failed or
/// expired after queueing. `purge` forgets the failed and expired ones.
public struct OutboxCommand: NotifyCommand {
    public static let name = "outbox"
    public typealias Result = OutboxResult
    public var purge: Bool?
    /// A page: at most `limit` entries, those after the id `after` (in id order), with the
    /// counts per recipient. Without `limit`, every entry, as a script reads them.
    public var limit: Int?
    public var after: String?

    public init(purge: Bool? = nil, limit: Int? = nil, after: String? = nil) {
        self.purge = purge
        self.limit = limit
        self.after = after
    }
}

public struct OutboxResult: Codable, Hashable, Sendable {
    public var deliveries: [DeliveryStatus]
    /// How many failed or expired entries `purge` removed.
    public var purged: Int?
    /// For a page (`limit`): the entries in all, the id to give as `after` for the next
    /// page (absent at the end), and the counts per recipient.
    public var total: Int?
    public var nextAfter: String?
    public var recipients: [OutboxRecipient]?

    public init(deliveries: [DeliveryStatus], purged: Int? = nil, total: Int? = nil, nextAfter: String? = nil, recipients: [OutboxRecipient]? = nil) {
        self.deliveries = deliveries
        self.purged = purged
        self.total = total
        self.nextAfter = nextAfter
        self.recipients = recipients
    }

    enum CodingKeys: String, CodingKey {
        case deliveries, purged, total, recipients
        case nextAfter = "next_after"
    }
}

/// What the outbox holds for one recipient: counts by state, its oldest message, and
/// when notifyd tries next.
public struct OutboxRecipient: Codable, Hashable, Sendable {
    public var to: String
    public var waiting: Int
    public var held: Int
    public var failed: Int
    public var oldest: Date
    public var nextAttemptAt: Date?

    public init(to: String, waiting: Int, held: Int, failed: Int, oldest: Date, nextAttemptAt: Date? = nil) {
        self.to = to
        self.waiting = waiting
        self.held = held
        self.failed = failed
        self.oldest = oldest
        self.nextAttemptAt = nextAttemptAt
    }

    enum CodingKeys: String, CodingKey {
        case to, waiting, held, failed, oldest
        case nextAttemptAt = "next_attempt_at"
    }
}

extension EventName {
    public static let send = "send"
}

/// `{"event":"send", ...}`: a delivery was queued, delivered, failed or expired.
public struct SendEvent: Codable, Hashable, Sendable {
    public var event: String = EventName.send
    public var time: Date
    public var delivery: DeliveryStatus

    public init(time: Date, delivery: DeliveryStatus) {
        self.time = time
        self.delivery = delivery
    }
}

// A send's reply is written once per message: without the encoder (see `JSONTextWriter`).
extension SendResult {
    /// The result exactly as `WireCoding.encoder()` encodes it; nil for a date the writer
    /// leaves to the encoder.
    public var wireJSON: [UInt8]? {
        var json = JSONTextWriter(pretty: false, escapingSlashes: false, capacity: 32 + 192 * deliveries.count)
        json.beginObject()
        json.key("deliveries")
        json.beginArray()
        for delivery in deliveries {
            json.nextElement()
            guard delivery.write(to: &json) else { return nil }
        }
        json.endArray()
        json.endObject()
        return json.bytes
    }
}

extension DeliveryStatus {
    /// Writes the status as its `Encodable` conformance does, keys sorted; false for a date
    /// the writer leaves to the encoder.
    public func write(to json: inout JSONTextWriter) -> Bool {
        json.beginObject()
        json.key("attempts")
        json.int(attempts)
        json.key("created_at")
        guard json.date(createdAt) else { return false }
        if let error {
            json.key("error")
            error.write(to: &json)
        }
        if let expiresAt {
            json.key("expires_at")
            guard json.date(expiresAt) else { return false }
        }
        json.key("id")
        json.string(id)
        if let nextAttemptAt {
            json.key("next_attempt_at")
            guard json.date(nextAttemptAt) else { return false }
        }
        json.key("pns")
        json.string(pns)
        if let preview {
            json.key("preview")
            json.string(preview)
        }
        json.key("state")
        json.string(state.rawValue)
        json.key("to")
        json.string(to)
        json.endObject()
        return true
    }
}

extension WireError {
    /// Writes the error as its `Encodable` conformance does, keys sorted.
    public func write(to json: inout JSONTextWriter) {
        json.beginObject()
        json.key("code")
        json.string(code.rawValue)
        json.key("message")
        json.string(message)
        json.endObject()
    }
}
