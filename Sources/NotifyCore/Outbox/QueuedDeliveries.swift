#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// `OutboxQueue.queued`: the deliveries waiting or in flight, in sequence order, with
/// what the queue asks of them on every pass kept beside them instead of found by hashing
/// ids and keys each time: which are in flight, how many each order key has queued and in
/// flight.
///
/// A burst makes the queue long and empties it from the front, one delivered message
/// after another: the front's removal only moves a start index (the slots before it are
/// emptied, and dropped once they are half the storage), where an array would move every
/// delivery behind it, once per message.
public struct QueuedDeliveries: RandomAccessCollection, Sendable {
    /// `slots[head...]` are the queued deliveries; the slots before `head` hold `hole`.
    /// Beside them, whether each is in flight.
    private var slots: [Delivery] = []
    private var inFlight: [Bool] = []
    private var head = 0
    /// How many queued deliveries each order key has; a key with none is absent.
    private var keyCounts: [String: Int] = [:]
    /// How many deliveries of each order key are in flight; a key with none is absent.
    private(set) var inFlightPerKey: [String: Int] = [:]
    private(set) var inFlightCount = 0
    /// The bytes of the queued deliveries' messages.
    private(set) var bytes = 0
    /// The queued deliveries per account, with their next attempts (for `status`).
    private(set) var tallies = AccountTallies()

    /// What an emptied slot holds: no storage of its own to keep alive.
    private static let hole = Delivery(sequence: 0, to: "", platform: .apns, message: "",
                                       createdAt: Date(timeIntervalSince1970: 0), expiresAt: Date(timeIntervalSince1970: 0))

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { slots.count - head }

    public internal(set) subscript(position: Int) -> Delivery {
        _read {
            yield slots[head + position]
        }
        _modify {
            let slot = head + position
            let key = slots[slot].orderKey
            let size = slots[slot].message.utf8.count
            let (account, nextAttempt) = (slots[slot].account, slots[slot].nextAttemptAt)
            yield &slots[slot]
            bytes += slots[slot].message.utf8.count - size
            if slots[slot].nextAttemptAt != nextAttempt || slots[slot].account != account {
                tallies.remove(account, nextAttempt: nextAttempt)
                tallies.add(slots[slot].account, nextAttempt: slots[slot].nextAttemptAt)
            }
            if slots[slot].orderKey != key {
                removeKey(key, inFlight: inFlight[slot])
                addKey(slots[slot].orderKey, inFlight: inFlight[slot])
                internKey(at: slot)
            }
        }
    }

    /// The number of different order keys queued.
    var keyCount: Int { keyCounts.count }

    /// How many deliveries of `key` are queued.
    func count(of key: String) -> Int { keyCounts[key] ?? 0 }

    /// The storage's size, for the tests of `releaseStorageIfEmpty`.
    public var capacity: Int { slots.capacity }

    mutating func insert(_ delivery: Delivery, at position: Int) {
        addKey(delivery.orderKey, inFlight: false)
        bytes += delivery.message.utf8.count
        tallies.add(delivery.account, nextAttempt: delivery.nextAttemptAt)
        let slot: Int
        if position == 0 && head > 0 {
            head -= 1
            slot = head
            slots[slot] = delivery
            inFlight[slot] = false
        } else {
            slot = head + position
            slots.insert(delivery, at: slot)
            inFlight.insert(false, at: slot)
        }
        internKey(at: slot)
    }

    /// The deliveries of one key share one copy of it: compared with each other on every
    /// pass of `OutboxQueue.takeReady`, copies that are one string compare at once.
    private mutating func internKey(at slot: Int) {
        guard let index = keyCounts.index(forKey: slots[slot].orderKey) else { return }
        slots[slot].shareOrderKey(keyCounts.keys[index])
    }

    @discardableResult
    mutating func remove(at position: Int) -> Delivery {
        let slot = head + position
        removeKey(slots[slot].orderKey, inFlight: inFlight[slot])
        bytes -= slots[slot].message.utf8.count
        tallies.remove(slots[slot].account, nextAttempt: slots[slot].nextAttemptAt)
        guard position == 0 else {
            inFlight.remove(at: slot)
            return slots.remove(at: slot)
        }
        let delivery = slots[slot]
        slots[slot] = Self.hole
        inFlight[slot] = false
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            inFlight.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= slots.count {
            compact()
        }
        return delivery
    }

    /// Removes, in order, the deliveries `shouldBeRemoved` picks (asked once each, in order).
    mutating func removeAll(where shouldBeRemoved: (Delivery, _ inFlight: Bool) -> Bool) {
        compact()
        var kept: [Delivery] = []
        var keptInFlight: [Bool] = []
        for slot in slots.indices {
            if shouldBeRemoved(slots[slot], inFlight[slot]) {
                removeKey(slots[slot].orderKey, inFlight: inFlight[slot])
                bytes -= slots[slot].message.utf8.count
                tallies.remove(slots[slot].account, nextAttempt: slots[slot].nextAttemptAt)
            } else {
                kept.append(slots[slot])
                keptInFlight.append(inFlight[slot])
            }
        }
        guard kept.count < slots.count else { return }
        slots = kept
        inFlight = keptInFlight
    }

    private mutating func compact() {
        guard head > 0 else { return }
        slots.removeFirst(head)
        inFlight.removeFirst(head)
        head = 0
    }

    func isInFlight(at position: Int) -> Bool {
        inFlight[head + position]
    }

    /// The sequences of the deliveries in flight that `include` picks.
    func inFlightSequences(where include: (Delivery) -> Bool) -> Set<Int> {
        guard inFlightCount > 0 else { return [] }
        var sequences = Set<Int>()
        for position in indices where isInFlight(at: position) && include(self[position]) { sequences.insert(self[position].sequence) }
        return sequences
    }

    /// Marks the delivery at `position` in flight, or no longer.
    mutating func setInFlight(_ inFlight: Bool, at position: Int) {
        let slot = head + position
        guard self.inFlight[slot] != inFlight else { return }
        self.inFlight[slot] = inFlight
        let key = slots[slot].orderKey
        if inFlight {
            inFlightCount += 1
            inFlightPerKey[key, default: 0] += 1
        } else {
            inFlightCount -= 1
            Self.decrement(&inFlightPerKey, key)
        }
    }

    mutating func releaseStorageIfEmpty() {
        guard isEmpty else { return }
        if slots.capacity > 0 { slots = [] }
        if inFlight.capacity > 0 { inFlight = [] }
        head = 0
        keyCounts.releaseStorageIfEmpty()
        inFlightPerKey.releaseStorageIfEmpty()
        tallies.removeAll()
    }

    private mutating func addKey(_ key: String, inFlight: Bool) {
        keyCounts[key, default: 0] += 1
        if inFlight {
            inFlightCount += 1
            inFlightPerKey[key, default: 0] += 1
        }
    }

    private mutating func removeKey(_ key: String, inFlight: Bool) {
        Self.decrement(&keyCounts, key)
        if inFlight {
            inFlightCount -= 1
            Self.decrement(&inFlightPerKey, key)
        }
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        guard let index = counts.index(forKey: key) else { return }
        if counts.values[index] > 1 {
            counts.values[index] -= 1
        } else {
            counts.remove(at: index)
        }
    }
}
