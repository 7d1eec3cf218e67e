#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// What `send --no-queue` and `notifyctl outbox` (list, purge, retry, cancel) ask of the
/// outbox, and the counts `status` shows.
extension Outbox {
    /// One attempt per platform, nothing kept: for `send --no-queue`.
    public func sendOnce(to: String, message: String, platforms: [Platform]) async throws(CoreError) -> [DeliveryStatus] {
        guard let account = accounts.currentKey else { throw accounts.loggedIn == nil ? .notLoggedIn : .noBackend }
        let platforms = distinctAtTheBackend(platforms)
        for platform in platforms { try NotificationText.checkSize(message, sender: account.user, for: platform) }
        var statuses: [DeliveryStatus] = []
        for platform in platforms {
            let now = clock.now()
            var delivery = Delivery(sequence: 0, to: to, platform: platform, message: message, createdAt: now, expiresAt: now, account: account)
            delivery.id = "direct-" + platform.rawValue
            delivery.idempotencyKey = UUID().uuidString.lowercased()
            let result = await attempt(delivery)
            delivery.attempts = 1
            switch result {
            case .delivered: delivery.state = .delivered
            case .transient(_, let error), .unreachable(let error), .offline(let error), .unauthorized(let error), .failed(let error):
                delivery.state = .failed
                delivery.lastError = error
            case .accountGone:
                delivery.state = .failed
                delivery.lastError = CoreError.accountGone(user: account.user).wireError
            case .notAttempted:
                // Only lanes leave a request unsent, and one attempt takes none.
                delivery.state = .failed
                delivery.lastError = CoreError.backendUnavailable("not sent").wireError
            }
            onEvent(delivery.status)
            statuses.append(delivery.status)
        }
        return statuses
    }

    public func list() -> [DeliveryStatus] {
        (queue.queued + queue.dead).map(status)
    }

    /// Forgets failed and expired entries, and those held for an account that is gone.
    public func purge() async -> Int {
        let purged = queue.purgeDead()
        let store = self.store
        await writer.value {
            for delivery in purged { try? store.remove(delivery.id) }
        }
        return purged.count
    }

    /// Counts for `status`: waiting, held (for refused credentials, or for an account not
    /// logged in now), failed or expired; the next attempt.
    public func summary() -> OutboxSummary {
        let held = queue.queued.filter { queue.paused || queue.isHeld($0) }
        let waiting = queue.queued.filter { !queue.paused && !queue.isHeld($0) }
        return OutboxSummary(waiting: waiting.count, held: held.count, failed: queue.dead.count,
                             nextAttemptAt: waiting.compactMap(\.nextAttemptAt).min())
    }

    /// `outbox retry [ID]`: tries now instead of at the next scheduled attempt.
    public func retry(_ id: String?) throws(CoreError) -> Int {
        if let id, queue.delivery(id) == nil { throw .invalidArgument("no message '\(id)' in the outbox; `notifyctl outbox` lists them") }
        if let id, queue.delivery(id)?.state != .queued {
            throw .invalidArgument("message '\(id)' is not waiting (it \(queue.delivery(id)?.state == .expired ? "expired" : "failed")); send it again")
        }
        let count = queue.retryNow(id)
        logger.notice("outbox: retrying \(count) waiting message\(count == 1 ? "" : "s") now, on request")
        pump()
        return count
    }

    /// `outbox cancel ID`: forgets one message, waiting or failed.
    public func cancel(_ id: String) async throws(CoreError) -> DeliveryStatus {
        guard queue.delivery(id) != nil else { throw .invalidArgument("no message '\(id)' in the outbox; `notifyctl outbox` lists them") }
        guard var delivery = queue.cancel(id) else {
            throw .invalidArgument("message '\(id)' is being sent right now; look again with `notifyctl outbox`")
        }
        let store = self.store
        await writer.value { try? store.remove(id) }
        delivery.state = .cancelled
        delivery.nextAttemptAt = nil
        logger.notice("outbox: cancelled \(id) to \(delivery.to) on request")
        report(delivery)
        pump()
        return delivery.status
    }
}
