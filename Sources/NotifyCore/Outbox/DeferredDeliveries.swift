#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The queued deliveries whose turn is not near: kept as an index entry of 40 bytes each,
/// their records (the message's text with them) left on disk until they move into the
/// queue's active part (`OutboxQueue.queued`), which holds every key's first messages. A
/// week offline then costs memory per message queued, not per byte.
///
/// In sequence order, as the active part is; what leaves is marked and skipped, and swept
/// out once it is most of the storage. What a recipient, platform and account share is
/// kept once per key (`Key`).
public struct DeferredDeliveries: Sendable {
    struct Entry {
        var sequence: Int
        /// Whole seconds since 1970, rounded up: the expiry a message's record says, which a
        /// start's expiry mark is read against, whatever the clock (one that reads 1970 before
        /// it is set included). Records and new messages' expiries are whole seconds already.
        var expires: Int64
        /// Whole seconds since 2001, rounded down (for a listing; clamped to 2001...2137).
        var created: UInt32
        var offset: UInt32
        var length: UInt32
        var key: UInt32
        /// The bytes of the message's text.
        var bytes: UInt32
        var removed = false
        var senderWaiting = false
        /// Its record says it was tried (read whole at a start, its text left on disk): the
        /// entry keeps no attempts or error, so its expiry reads the record back.
        var tried = false
    }

    /// A key's shared part, and where its entries are.
    @dynamicMemberLookup
    struct Key {
        var shared: DeliveryKey
        /// Deferred entries of the key not removed.
        var count = 0
        /// No entry of the key sits before this position.
        var first = 0

        subscript<Value>(dynamicMember path: KeyPath<DeliveryKey, Value>) -> Value { shared[keyPath: path] }
    }

    private(set) var entries: [Entry] = []
    private var head = 0
    private var removedCount = 0
    private(set) var keys: [Key] = []
    private var keyIndex: [String: UInt32] = [:]
    public private(set) var count = 0
    /// The bytes of the deferred messages' text.
    public private(set) var bytes = 0
    /// The earliest expiry of an entry, or later (nil: none).
    private(set) var expiryFloor: Date?
    /// The entries per account (for `status`).
    private(set) var tallies = AccountTallies()

    public init() {}

    public var isEmpty: Bool { count == 0 }

    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(entries.count + count)
    }

    /// Whether `delivery` can be kept as an index entry: a queued one whose id is the one its
    /// sequence number gives, with its record on disk at `stored`.
    static func fits(_ delivery: Delivery) -> Bool {
        delivery.state == .queued && delivery.id == Delivery.id(sequence: delivery.sequence, platform: delivery.platform)
            && delivery.sequence > 0
    }

    func count(of orderKey: String) -> Int {
        keyIndex[orderKey].map { keys[Int($0)].count } ?? 0
    }

    /// Adds `delivery` (its record on disk at `stored`) behind every entry there; its
    /// sequence is higher than theirs.
    mutating func append(_ delivery: Delivery, stored: StoredEntry, bytes size: Int) {
        let key = intern(delivery)
        if keys[Int(key)].count == 0 { keys[Int(key)].first = entries.count }
        keys[Int(key)].count += 1
        tallies.add(keys[Int(key)].account)
        entries.append(Entry(sequence: delivery.sequence, expires: Self.wholeSeconds(delivery.expiresAt),
                             created: Self.seconds(delivery.createdAt, up: false), offset: stored.offset, length: stored.length,
                             key: key, bytes: UInt32(clamping: size), senderWaiting: delivery.senderWaiting, tried: !delivery.neverTried))
        count += 1
        bytes += size
        let expires = Self.expiry(entries[entries.count - 1].expires)
        if expiryFloor.map({ expires < $0 }) ?? true { expiryFloor = expires }
    }

    private mutating func intern(_ delivery: Delivery) -> UInt32 {
        if let index = keyIndex[delivery.orderKey] { return index }
        let index = UInt32(keys.count)
        keys.append(Key(shared: DeliveryKey(of: delivery)))
        keyIndex[delivery.orderKey] = index
        return index
    }

    /// The delivery an entry stands for, without its message (read from disk at its turn).
    func delivery(at position: Int) -> Delivery {
        let entry = entries[position]
        var delivery = keys[Int(entry.key)].shared.delivery(sequence: entry.sequence, createdAt: Self.date(entry.created),
                                                            expiresAt: Self.expiry(entry.expires))
        delivery.senderWaiting = entry.senderWaiting
        return delivery
    }

    func stored(at position: Int) -> StoredEntry {
        StoredEntry(offset: entries[position].offset, length: entries[position].length)
    }

    func orderKey(at position: Int) -> String {
        keys[Int(entries[position].key)].orderKey
    }

    /// Positions of the entries not removed, in order.
    var positions: [Int] {
        positions { _ in true }
    }

    /// Positions of the entries not removed whose sequence is `sequence` or higher, in order.
    func positions(from sequence: Int) -> LazyFilterSequence<Range<Int>> {
        let entries = self.entries
        return (firstPosition(atOrAfter: sequence)..<entries.count).lazy.filter { !entries[$0].removed }
    }

    /// Where the entries of `sequence` are, in order, those removed left out: one, nearly
    /// always, but copies of one message on disk may share a number (see
    /// `OutboxQueue.queuedIndex`).
    func positions(of sequence: Int) -> [Int] {
        var positions: [Int] = []
        var position = firstPosition(atOrAfter: sequence)
        while position < entries.count && entries[position].sequence == sequence {
            if !entries[position].removed { positions.append(position) }
            position += 1
        }
        return positions
    }

    /// The first position, removed or not, whose sequence is `sequence` or higher.
    private func firstPosition(atOrAfter sequence: Int) -> Int {
        var low = head
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The first entry of `orderKey`, if any.
    mutating func firstPosition(of orderKey: String) -> Int? {
        guard let key = keyIndex[orderKey], keys[Int(key)].count > 0 else { return nil }
        var position = max(keys[Int(key)].first, head)
        while position < entries.count && (entries[position].removed || entries[position].key != key) { position += 1 }
        keys[Int(key)].first = position
        return position < entries.count ? position : nil
    }

    /// The first entry not removed.
    var firstPosition: Int? {
        var position = head
        while position < entries.count && entries[position].removed { position += 1 }
        return position < entries.count ? position : nil
    }

    mutating func markAnswered(at position: Int) {
        entries[position].senderWaiting = false
    }

    /// Takes the entry at `position` out. Positions stay as they are until `tidy`.
    mutating func remove(at position: Int) {
        guard !entries[position].removed else { return }
        entries[position].removed = true
        let key = Int(entries[position].key)
        keys[key].count -= 1
        tallies.remove(keys[key].account)
        if keys[key].first == position { keys[key].first = position + 1 }
        count -= 1
        bytes -= Int(entries[position].bytes)
        removedCount += 1
        while head < entries.count && entries[head].removed {
            head += 1
        }
    }

    /// Lets the storage of what was removed go, once it is most of it; positions change.
    mutating func tidy() {
        if count == 0 {
            guard !entries.isEmpty || !keys.isEmpty else { return }
            entries = []
            keys = []
            keyIndex = [:]
            bytes = 0
            head = 0
            removedCount = 0
            expiryFloor = nil
            tallies.removeAll()
        } else if removedCount >= 1024 && removedCount * 2 >= entries.count {
            sweep()
        }
    }

    /// Drops the removed entries from the storage, keys without entries with them.
    private mutating func sweep() {
        var kept: [Entry] = []
        kept.reserveCapacity(count)
        var renumbered: [UInt32: UInt32] = [:]
        var newKeys: [Key] = []
        var newIndex: [String: UInt32] = [:]
        for entry in entries[head...] where !entry.removed {
            var entry = entry
            if let number = renumbered[entry.key] {
                entry.key = number
            } else {
                var key = keys[Int(entry.key)]
                key.first = kept.count
                let number = UInt32(newKeys.count)
                renumbered[entry.key] = number
                newIndex[key.orderKey] = number
                newKeys.append(key)
                entry.key = number
            }
            kept.append(entry)
        }
        entries = kept
        keys = newKeys
        keyIndex = newIndex
        head = 0
        removedCount = 0
    }

    /// The positions, in order, of the entries `isChosen` picks.
    func positions(where isChosen: (_ position: Int) -> Bool) -> [Int] {
        var chosen: [Int] = []
        for position in head..<entries.count where !entries[position].removed && isChosen(position) {
            chosen.append(position)
        }
        return chosen
    }

    /// The entries that expired by `now`, not removed yet; sets the floor to the next expiry.
    mutating func expired(now: Date) -> [Int] {
        guard let floor = expiryFloor, floor <= now else { return [] }
        var found: [Int] = []
        var earliest: Date?
        for position in head..<entries.count where !entries[position].removed {
            let expires = Self.expiry(entries[position].expires)
            if expires <= now {
                found.append(position)
            } else if earliest.map({ expires < $0 }) ?? true {
                earliest = expires
            }
        }
        expiryFloor = earliest
        return found
    }

    /// Per key with entries: its recipient, account and how many; for counts that stand
    /// for the rest of the queue.
    var perKey: [(to: String, account: AccountKey?, orderKey: String, count: Int)] {
        keys.filter { $0.count > 0 }.map { ($0.to, $0.account, $0.orderKey, $0.count) }
    }

    /// The oldest acceptance per recipient, from the deferred entries.
    var oldestPerRecipient: [String: Date] {
        var oldest: [String: Date] = [:]
        for position in head..<entries.count where !entries[position].removed {
            let to = keys[Int(entries[position].key)].to
            let created = Self.date(entries[position].created)
            if oldest[to].map({ created < $0 }) ?? true { oldest[to] = created }
        }
        return oldest
    }

    private static func seconds(_ date: Date, up: Bool) -> UInt32 {
        let value = date.timeIntervalSinceReferenceDate
        let rounded = up ? value.rounded(.up) : value.rounded(.down)
        return UInt32(clamping: Int64(max(0, min(rounded, Double(UInt32.max)))))
    }

    private static func date(_ seconds: UInt32) -> Date {
        Date(timeIntervalSinceReferenceDate: Double(seconds))
    }

    private static func wholeSeconds(_ date: Date) -> Int64 {
        Int64(exactly: date.timeIntervalSince1970.rounded(.up)) ?? .max
    }

    private static func expiry(_ seconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(seconds))
    }
}
