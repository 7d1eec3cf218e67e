#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How many queued deliveries each account has, and when the next attempts of each are
/// due: what `status` says of the outbox (waiting or held, the next attempt), kept as
/// deliveries come, go and change, so that saying it costs the number of accounts, not
/// the length of the queue.
struct AccountTallies: Sendable {
    private var counts: [AccountKey?: Int] = [:]
    /// Per account, each next attempt time its deliveries have, with how many have it.
    private var nextAttempts: [AccountKey?: [Date: Int]] = [:]

    /// How many deliveries of `account` are counted.
    func count(of account: AccountKey?) -> Int { counts[account] ?? 0 }

    /// The earliest next attempt of a delivery of `account`.
    func nextAttempt(of account: AccountKey?) -> Date? { nextAttempts[account]?.keys.min() }

    mutating func add(_ account: AccountKey?, nextAttempt: Date? = nil) {
        counts[account, default: 0] += 1
        if let nextAttempt { nextAttempts[account, default: [:]][nextAttempt, default: 0] += 1 }
    }

    mutating func remove(_ account: AccountKey?, nextAttempt: Date? = nil) {
        Self.decrement(&counts, account)
        // In place: a copy of the account's table out and back would copy it whole.
        if let nextAttempt, let index = nextAttempts.index(forKey: account) {
            Self.decrement(&nextAttempts.values[index], nextAttempt)
            if nextAttempts.values[index].isEmpty { nextAttempts.remove(at: index) }
        }
    }

    mutating func removeAll() {
        counts = [:]
        nextAttempts = [:]
    }

    private static func decrement<Key: Hashable>(_ counts: inout [Key: Int], _ key: Key) {
        guard let index = counts.index(forKey: key) else { return }
        if counts.values[index] > 1 {
            counts.values[index] -= 1
        } else {
            counts.remove(at: index)
        }
    }
}
