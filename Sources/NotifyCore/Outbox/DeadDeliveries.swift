#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The deliveries that failed or expired after they were queued, kept to be reported until
/// `outbox cancel` or `outbox --purge`: an entry of 40 bytes each, without the message,
/// whose record (written when it failed or expired, in its own file; or, for one that
/// expired before it was tried, where it was queued) a listing reads back for its first
/// words. A week offline past `outbox_expiry` expires everything queued: 100,000 messages
/// kept whole cost some 500 bytes each, and a lookup by id was a scan.
///
/// In order of sequence (of id, among copies of one message), as a start finds them on
/// disk and the rest of the queue is: a listing before a restart is the one after it, and
/// a lookup by id is a binary search. What a recipient, platform and account share, and
/// an error many share ("not delivered before it expired"), is kept once.
public struct DeadDeliveries: RandomAccessCollection, Sendable {
    struct Entry {
        var sequence: Int
        /// `createdAt` exactly: a listing shows it.
        var created: Double
        /// In `keys`, or for a delivery kept whole, in `whole`.
        var key: UInt32
        /// In `errors`, or `Entry.noError`.
        var error: UInt32
        var attempts: UInt32
        /// Where the record a listing reads its first words from is.
        var stored: StoredEntry
        var expired: Bool
        var isWhole = false

        static let noError = UInt32.max
    }

    private var entries: [Entry] = []
    private var keys: [DeliveryKey] = []
    private var keyIndex: [String: UInt32] = [:]
    private var errors: [WireError] = []
    private var errorIndex: [WireError: UInt32] = [:]
    /// The rare delivery an entry cannot stand for (an id not of the form its sequence
    /// gives: a hand-edited file), whole, with an entry that points here.
    private var whole: [Delivery] = []

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { entries.count }

    /// The delivery at `position`, without its message (read back from its record).
    public subscript(position: Int) -> Delivery {
        let entry = entries[position]
        if entry.isWhole { return whole[Int(entry.key)] }
        let created = Date(timeIntervalSinceReferenceDate: entry.created)
        var delivery = keys[Int(entry.key)].delivery(sequence: entry.sequence, createdAt: created, expiresAt: created)
        delivery.attempts = Int(entry.attempts)
        delivery.state = entry.expired ? .expired : .failed
        delivery.lastError = entry.error == Entry.noError ? nil : errors[Int(entry.error)]
        return delivery
    }

    /// Whether `delivery` can be an entry: failed or expired, with the id its sequence gives.
    static func fits(_ delivery: Delivery) -> Bool {
        (delivery.state == .failed || delivery.state == .expired) && delivery.sequence > 0
            && delivery.id == Delivery.id(sequence: delivery.sequence, platform: delivery.platform)
            && UInt32(exactly: delivery.attempts) != nil
    }

    mutating func reserveCapacity(_ count: Int) {
        entries.reserveCapacity(entries.count + count)
    }

    /// Adds a delivery that failed or expired, its record at `stored`: in its own file,
    /// unless it expired before it was tried.
    mutating func append(_ delivery: Delivery, stored: StoredEntry = .inOwnFile) {
        append(contentsOf: CollectionOfOne((delivery, stored)))
    }

    /// Adds deliveries that failed or expired, each with its record in its own file, in any order.
    mutating func append(contentsOf deliveries: some Sequence<Delivery>) {
        append(contentsOf: deliveries.lazy.map { ($0, StoredEntry.inOwnFile) })
    }

    /// Adds deliveries that failed or expired, each with where its record is, in any order.
    mutating func append(contentsOf deliveries: some Sequence<(Delivery, StoredEntry)>) {
        var inOrder = true
        for (delivery, stored) in deliveries {
            var entry: Entry
            if Self.fits(delivery) {
                let error = delivery.lastError.map { intern($0) } ?? Entry.noError
                entry = Entry(sequence: delivery.sequence, created: delivery.createdAt.timeIntervalSinceReferenceDate, key: intern(delivery),
                              error: error, attempts: UInt32(delivery.attempts), stored: stored,
                              expired: delivery.state == .expired)
            } else {
                entry = Entry(sequence: delivery.sequence, created: 0, key: UInt32(whole.count), error: Entry.noError, attempts: 0, stored: stored,
                              expired: false, isWhole: true)
                whole.append(delivery)
            }
            if let last = entries.last, !precedes(last, entry) { inOrder = false }
            entries.append(entry)
        }
        // Once for a pass of the expiry that finds some in the active part: they come after
        // the deferred part's, which follow theirs.
        if !inOrder { entries.sort(by: precedes) }
    }

    private func precedes(_ first: Entry, _ second: Entry) -> Bool {
        guard first.sequence == second.sequence else { return first.sequence < second.sequence }
        return id(of: first) < id(of: second)
    }

    private func id(of entry: Entry) -> String {
        entry.isWhole ? whole[Int(entry.key)].id : Delivery.id(sequence: entry.sequence, platform: keys[Int(entry.key)].platform)
    }

    private mutating func intern(_ delivery: Delivery) -> UInt32 {
        if let index = keyIndex[delivery.orderKey] { return index }
        let index = UInt32(keys.count)
        keys.append(DeliveryKey(of: delivery))
        keyIndex[delivery.orderKey] = index
        return index
    }

    private mutating func intern(_ error: WireError) -> UInt32 {
        if let index = errorIndex[error] { return index }
        let index = UInt32(errors.count)
        errors.append(error)
        errorIndex[error] = index
        return index
    }

    /// The first position whose sequence is `sequence` or higher, among the entries.
    func firstPosition(atOrAfter sequence: Int) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The positions of the deliveries whose sequence is `sequence`.
    func positions(of sequence: Int) -> [Int] {
        Array((firstPosition(atOrAfter: sequence)..<entries.count).prefix { entries[$0].sequence == sequence })
    }

    /// The position of the delivery `id`.
    func position(of id: String) -> Int? {
        if let sequence = Delivery.sequence(inID: id), let found = positions(of: sequence).first(where: { self.id(at: $0) == id }) {
            return found
        }
        // One kept whole may have an id that does not begin with its sequence.
        guard !whole.isEmpty else { return nil }
        return entries.indices.first { entries[$0].isWhole && whole[Int(entries[$0].key)].id == id }
    }

    /// The positions of the deliveries kept whole, whose ids may not follow their order.
    var positionsKeptWhole: [Int] {
        whole.isEmpty ? [] : entries.indices.filter { entries[$0].isWhole }
    }

    /// Where the record of the delivery at `position` is.
    func stored(at position: Int) -> StoredEntry {
        entries[position].stored
    }

    /// The id of the delivery at `position`, without making the rest of it.
    func id(at position: Int) -> String {
        id(of: entries[position])
    }

    /// Takes the delivery at `position` out. (What a whole one leaves in `whole` goes once
    /// none is left.)
    @discardableResult
    mutating func remove(at position: Int) -> Delivery {
        let delivery = self[position]
        entries.remove(at: position)
        if isEmpty { self = DeadDeliveries() }
        return delivery
    }

    /// Forgets them all; returns their ids.
    mutating func removeAll() -> [String] {
        let ids = indices.map(id(at:))
        self = DeadDeliveries()
        return ids
    }

    /// Per recipient: how many, and the earliest accepted; without making each delivery.
    var perRecipient: [String: (count: Int, oldest: Date)] {
        var perKey = [(count: Int, oldest: Double)](repeating: (0, .infinity), count: keys.count)
        var found: [String: (count: Int, oldest: Date)] = [:]
        func add(_ to: String, _ count: Int, _ oldest: Date) {
            let before = found[to] ?? (0, oldest)
            found[to] = (before.count + count, Swift.min(before.oldest, oldest))
        }
        for entry in entries {
            if entry.isWhole {
                add(whole[Int(entry.key)].to, 1, whole[Int(entry.key)].createdAt)
                continue
            }
            perKey[Int(entry.key)].count += 1
            perKey[Int(entry.key)].oldest = Swift.min(perKey[Int(entry.key)].oldest, entry.created)
        }
        for (index, tally) in perKey.enumerated() where tally.count > 0 {
            add(keys[index].to, tally.count, Date(timeIntervalSinceReferenceDate: tally.oldest))
        }
        return found
    }
}
