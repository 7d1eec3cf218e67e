import Foundation
import NotifyProtocol
import NotifySystem
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// What `status` says of the outbox is kept as tallies that change with the queue
/// (`OutboxQueue.counts`), not found by looking at every delivery. Driven through every kind
/// of change the queue knows, in an order a seeded generator picks, the tallies must agree
/// with looking after each step.
struct OutboxCountsTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let accounts: [AccountKey?] = [
        AccountKey(user: "alice", backend: "http://127.0.0.1:1"),
        AccountKey(user: "bob", backend: "http://127.0.0.1:1"),
        AccountKey(user: "alice", backend: "http://127.0.0.1:1", api: .installations),
        nil,
    ]
    static let error = WireError(code: .backendUnavailable, message: "HTTP 503")

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func theTalliesAgreeWithLookingAtEveryDelivery(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        var queue = OutboxQueue(backoff: Backoff(initial: 10, multiplier: 2, maximum: 1000), concurrency: 4, seed: seed)
        // Small bounds, so that deliveries are deferred and promoted as well.
        queue.setActiveLimits(12, perKey: 3)
        queue.setAccount(Self.accounts[0])
        var now = Self.start
        var sequence = 0
        var steps: [String] = []
        // What the run must have met for its agreement to mean anything.
        var seen = (deferred: false, held: false, waiting: false, nextAttempt: false)
        for _ in 0..<1500 {
            now = now.addingTimeInterval(Double(pick(20)))
            switch pick(10) {
            case 0, 1, 2:
                sequence += 1
                var delivery = Delivery(sequence: sequence, to: "user\(pick(5))", platform: .apns, message: "message \(sequence)",
                                        createdAt: now, expiresAt: now.addingTimeInterval(Double(60 + pick(600))), account: Self.accounts[pick(4)])
                delivery.senderWaiting = pick(2) == 0
                queue.add(delivery, stored: StoredEntry(offset: UInt32(sequence), length: 10))
                steps.append("add \(delivery.id)")
            case 3:
                let taken = queue.takeReady(now: now)
                steps.append("take \(taken.count)")
            case 4, 5:
                let inFlight = queue.queued.indices.filter { queue.queued.isInFlight(at: $0) }
                guard !inFlight.isEmpty else { continue }
                let id = queue.queued[inFlight[pick(inFlight.count)]].id
                let results: [DeliveryResult] = [.delivered, .transient(retryAfter: nil, error: Self.error), .unreachable(Self.error),
                                                 .offline(Self.error), .unauthorized(Self.error), .failed(Self.error), .accountGone]
                let result = results[pick(results.count)]
                queue.finished(id, result, now: now)
                steps.append("finish \(id) \(result)")
            case 6:
                for (delivery, stored) in queue.takePromotions() { queue.promoted(delivery, stored: stored) }
                steps.append("promote")
            case 7:
                let account = Self.accounts[pick(4)]
                queue.resume()
                queue.setAccount(account)
                steps.append("account \(String(describing: account))")
            case 8:
                switch pick(4) {
                case 0: _ = queue.expire(now: now.addingTimeInterval(Double(pick(300))))
                case 1: _ = queue.retryNow(nil)
                case 2: _ = queue.purgeDead()
                default:
                    if let id = queue.queued.randomElement(using: &random)?.id { _ = queue.cancel(id) }
                }
                steps.append("command")
            default:
                _ = queue.changeSettings(backoff: Backoff(initial: Double(1 + pick(10)), multiplier: 2, maximum: 100), concurrency: 1 + pick(4))
                _ = queue.backendWorks("http://127.0.0.1:1")
                _ = queue.networkMayBeBack()
                steps.append("settings")
            }
            guard queue.counts == queue.countsByLooking else {
                Issue.record("after \(steps.suffix(5)): tallied \(queue.counts), looked \(queue.countsByLooking)")
                return
            }
            let counts = queue.counts
            seen.deferred = seen.deferred || !queue.deferred.isEmpty
            seen.held = seen.held || counts.held > 0
            seen.waiting = seen.waiting || counts.waiting > 0
            seen.nextAttempt = seen.nextAttempt || counts.nextAttemptAt != nil
        }
        #expect(seen.deferred && seen.held && seen.waiting && seen.nextAttempt, "\(seen)")
    }
}
