#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// One message to one recipient on one platform, as kept in the outbox until the
/// backend accepts it. Written to disk before the sender is told it was accepted. At an
/// installations backend, one notification request, which goes to every platform.
public struct Delivery: Equatable, Sendable {
    public var id: String
    /// Arrival order; deliveries to the same recipient and platform go out in this order.
    public var sequence: Int
    public var to: String { didSet { orderKey = Self.orderKey(platform, to, account) } }
    /// Nil for a notification request to an installations backend (`request`).
    public var platform: Platform? { didSet { orderKey = Self.orderKey(platform, to, account) } }
    /// What a notification request carries besides the text; nil for a registrations backend.
    public var request: RequestFields?
    public var message: String
    public var createdAt: Date
    public var expiresAt: Date
    public var attempts = 0
    public var nextAttemptAt: Date?
    public var lastError: WireError?
    /// `queued` while waiting; `failed` or `expired` once kept only to be reported.
    public var state: DeliveryState = .queued
    /// Who queued it: it is sent with this account's credentials or not at all. Nil only
    /// for an entry from before accounts were recorded, until the outbox adopts it.
    public var account: AccountKey? { didSet { orderKey = Self.orderKey(platform, to, account) } }
    /// True until the sender got an answer about this delivery (kept in memory only: an
    /// entry found at start was answered in an earlier run). A refusal while the sender
    /// still waits is its answer; after that, the delivery stays listed until purged.
    public var senderWaiting = false
    /// Sent as `Idempotency-Key` with every attempt, so that a backend that keeps them can
    /// drop a second copy (a reply lost after it took the first). Random, made when the
    /// message is accepted and kept with it; nil for an entry from before they were.
    public var idempotencyKey: String?

    /// What `Idempotency-Key` says: the key, or for an older entry one made of its id and
    /// the second it was accepted, stable across restarts.
    var sendKey: String {
        idempotencyKey ?? id + "@" + String(Int64(createdAt.timeIntervalSince1970.rounded(.down)))
    }

    /// The tags, action and kind of a notification request to the backend service.
    public struct RequestFields: Equatable, Sendable {
        /// Any of these a device must have: `username:<to>`, or the raw tags of `send --tag`.
        public var tags: [String]
        public var action: String
        public var silent: Bool

        public init(tags: [String], action: String, silent: Bool) {
            self.tags = tags
            self.action = action
            self.silent = silent
        }
    }

    /// What `pns` says of a request, which the backend sends to every platform.
    static let everyPlatform = "all"

    /// Where it goes, as ids, listings and outbox files name it: the platform, or `all`.
    static func pnsName(_ platform: Platform?) -> String {
        platform?.rawValue ?? everyPlatform
    }

    var pns: String { Self.pnsName(platform) }

    /// The id `init` gives: the sequence, and the platform or `all`.
    static func id(sequence: Int, platform: Platform?) -> String {
        paddedSequence(sequence) + "-" + pnsName(platform)
    }

    public init(sequence: Int, to: String, platform: Platform?, message: String, createdAt: Date, expiresAt: Date, account: AccountKey? = nil,
                request: RequestFields? = nil) {
        self.id = Self.id(sequence: sequence, platform: platform)
        self.request = request
        self.sequence = sequence
        self.to = to
        self.platform = platform
        self.message = message
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.account = account
        self.orderKey = Self.orderKey(platform, to, account)
    }

    /// Deliveries with the same key are strictly ordered; different keys go out side by side.
    /// Each account has its own order: a message held for a gone account holds back no other's.
    /// Kept rather than computed: the outbox asks for it on every pass over its queue.
    private(set) var orderKey: String

    private static func orderKey(_ platform: Platform?, _ to: String, _ account: AccountKey?) -> String {
        pnsName(platform) + "\u{0}" + to + "\u{0}" + (account.map { $0.user + "\u{0}" + $0.backend + ($0.api == .registrations ? "" : "\u{0}" + $0.api.rawValue) } ?? "")
    }

    /// Takes `key`'s storage for the order key when it is the same text.
    mutating func shareOrderKey(_ key: String) {
        if key == orderKey { orderKey = key }
    }

    /// `sequence` as `%010ld` writes it, without going through the C library's formatting
    /// once per message.
    static func paddedSequence(_ sequence: Int) -> String {
        guard sequence >= 0 else { return CFormat.string("%010ld", sequence) }
        let digits = String(sequence)
        let count = digits.utf8.count
        return count >= 10 ? digits : String(repeating: "0", count: 10 - count) + digits
    }

    /// A new random `idempotencyKey`: a version 4 UUID in lower case, as
    /// `UUID().uuidString.lowercased()` writes one, without the upper-case text in between;
    /// its bits from the system's generator (getrandom(2)), where `UUID()` on Linux opens,
    /// reads and closes /dev/urandom for every message.
    static func newIdempotencyKey() -> String {
        let hex = Array("0123456789abcdef".utf8)
        var generator = SystemRandomNumberGenerator()
        var random = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeMutableBytes(of: &random) { bytes in
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4: random
            bytes[8] = bytes[8] & 0x3F | 0x80  // the RFC 4122 variant
            var text: [UInt8] = []
            text.reserveCapacity(36)
            for (index, byte) in bytes.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
                text.append(hex[Int(byte >> 4)])
                text.append(hex[Int(byte & 0x0F)])
            }
            return String(decoding: text, as: UTF8.self)
        }
    }

    /// The first 40 characters of `message`: all of one of 40 bytes or fewer, without
    /// walking its characters (a status is made several times per message).
    static func preview(_ message: String) -> String {
        message.utf8.count <= 40 ? message : String(message.prefix(40))
    }

    /// The sequence number an id made by `init` begins with.
    static func sequence(inID id: String) -> Int? {
        guard let dash = id.utf8.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        return Int(Substring(id.utf8[..<dash]))
    }

    /// When a message accepted at `now` expires, `expiry` later: rounded up to a whole
    /// second, never early, as its record says it (records give times in whole seconds).
    /// The outbox then expires a message at the moment its record says, and the expiry mark,
    /// which a start reads against records, covers exactly what the outbox expired.
    static func expiry(acceptedAt now: Date, after expiry: TimeInterval) -> Date {
        Date(timeIntervalSince1970: (now.timeIntervalSince1970 + expiry).rounded(.up))
    }

    /// No attempt made and no error recorded: its record is as it was queued.
    var neverTried: Bool { attempts == 0 && lastError == nil }

    public var status: DeliveryStatus {
        DeliveryStatus(
            id: id, to: to, pns: pns, state: state, attempts: attempts, createdAt: createdAt,
            nextAttemptAt: state == .queued ? nextAttemptAt : nil, expiresAt: state == .queued ? expiresAt : nil,
            error: lastError, preview: Self.preview(message))
    }
}

/// How a delivery attempt ended, as the outbox needs to know it.
public enum DeliveryResult: Equatable, Sendable {
    case delivered
    /// Try again later (network, timeouts, 408, 429, 5xx, throttling).
    case transient(retryAfter: Double?, error: WireError)
    /// The backend could not be reached at all: tried again when the reachability probe
    /// sees it back, or at the end of a backoff that may grow past `retry_max`.
    case unreachable(WireError)
    /// No route to the backend: tried again when the network changes; not counted against it.
    case offline(WireError)
    /// The credentials were refused: hold everything until the next login.
    case unauthorized(WireError)
    /// Refused for good.
    case failed(WireError)
    /// Not attempted: its account is no longer the one logged in. Held, not counted.
    case accountGone
    /// Not sent: one before it in its lane was not accepted. Still queued, not counted.
    case notAttempted
}
