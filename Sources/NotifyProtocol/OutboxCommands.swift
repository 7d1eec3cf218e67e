#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `outbox-retry`: try the waiting messages now (all, or the delivery with that id),
/// including those held for credentials, instead of at their next scheduled attempt.
/// (`delivery`, not `id`: a request's `id` is the one the reply echoes.)
public struct OutboxRetryCommand: NotifyCommand {
    public static let name = "outbox-retry"
    public typealias Result = OutboxRetryResult
    public var delivery: String?
    public init(delivery: String? = nil) { self.delivery = delivery }
}

public struct OutboxRetryResult: Codable, Hashable, Sendable {
    /// How many waiting messages go out now.
    public var retried: Int
    public init(retried: Int) { self.retried = retried }
}

/// `outbox-cancel`: remove one message from the outbox, waiting or failed.
public struct OutboxCancelCommand: NotifyCommand {
    public static let name = "outbox-cancel"
    public typealias Result = OutboxCancelResult
    /// The delivery's id, as `outbox` lists it.
    public var delivery: String
    public init(delivery: String) { self.delivery = delivery }
}

public struct OutboxCancelResult: Codable, Hashable, Sendable {
    public var delivery: DeliveryStatus
    public init(delivery: DeliveryStatus) { self.delivery = delivery }
}

/// The outbox part of `status`: counts, and when notifyd tries next.
public struct OutboxSummary: Codable, Hashable, Sendable {
    /// Queued and retried by notifyd on its own.
    public var waiting: Int
    /// Queued but not sent until a login: the backend refused the credentials, or the
    /// message belongs to an account that is not logged in now.
    public var held: Int
    /// Failed or expired after queueing, kept to be reported until purged.
    public var failed: Int
    public var nextAttemptAt: Date?
    /// `outbox_max`: past `waiting` + `held` this many, `send` is refused. Absent from older daemons.
    public var limit: Int?
    /// The bytes of the waiting and held messages' text, and `outbox_max_bytes`, past which
    /// `send` is refused as well. Absent from older daemons.
    public var bytes: Int?
    public var bytesLimit: Int?

    public init(waiting: Int, held: Int, failed: Int, nextAttemptAt: Date? = nil, limit: Int? = nil, bytes: Int? = nil, bytesLimit: Int? = nil) {
        self.waiting = waiting
        self.held = held
        self.failed = failed
        self.nextAttemptAt = nextAttemptAt
        self.limit = limit
        self.bytes = bytes
        self.bytesLimit = bytesLimit
    }

    enum CodingKeys: String, CodingKey {
        case waiting, held, failed, limit, bytes
        case bytesLimit = "bytes_limit"
        case nextAttemptAt = "next_attempt_at"
    }
}

extension DeliveryState {
    /// Removed from the outbox by `outbox-cancel` before it was delivered.
    public static let cancelled = DeliveryState("cancelled")
}
