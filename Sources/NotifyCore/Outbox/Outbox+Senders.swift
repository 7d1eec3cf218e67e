#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The senders waiting to hear what became of their deliveries: answered as soon as they
/// can be, or when their time runs out.
extension Outbox {
    /// Waits until each delivery is delivered, failed or expired (`untilFinal`), or until
    /// its fate is known for now (sent, or waiting for a retry); bounded by `timeout`.
    public func wait(for ids: [String], untilFinal: Bool, timeout: Double) async -> [DeliveryStatus] {
        if isSettled(ids, untilFinal: untilFinal) { return answer(ids) }
        return await withCheckedContinuation { continuation in
            let deadline = ContinuousClock.now + .seconds(timeout)
            waiters.add(.init(ids: ids, untilFinal: untilFinal, continuation: continuation, deadline: deadline))
            armDeadlineTimer(deadline)
        }
    }

    /// Final statuses kept for senders still to be answered (for tests: none once all are).
    var unansweredStatusCount: Int { outcomes.unanswered.count }

    private func statuses(_ ids: [String]) -> [DeliveryStatus] {
        ids.compactMap { id in queue.delivery(id).map(status) ?? outcomes.unanswered[id] }
    }

    /// The statuses a sender is told: from now on a refusal keeps them listed.
    private func answer(_ ids: [String]) -> [DeliveryStatus] {
        queue.markAnswered(ids)
        defer { outcomes.answered(ids) }
        return statuses(ids)
    }

    /// A delivery as listed; a held one says whose it is and why it waits.
    func status(_ delivery: Delivery) -> DeliveryStatus {
        var status = delivery.status
        if queue.isHeld(delivery) {
            status.nextAttemptAt = nil
            status.error = Self.heldReason(delivery.account, current: accounts.currentKey, saved: accounts.loggedIn).wireError
        } else if queue.paused, delivery.state == .queued, let reason = queue.pauseReason {
            // Held with every other until the next login: what the backend refused says why.
            status.nextAttemptAt = nil
            status.error = reason
        }
        return status
    }

    /// Why a message queued for `key` is held while `current` is logged in, and `saved` is
    /// the login saved (one kept for another backend origin is not `current`).
    static func heldReason(_ key: AccountKey?, current: AccountKey?, saved: Credentials?) -> CoreError {
        guard let key else { return .accountGone(user: "an earlier login") }
        if let current, current.user == key.user, current.backend != key.backend {
            return .heldForBackend(user: key.user, backend: key.backend)
        }
        // Still logged in there: it is the backend that moved.
        if current == nil, let saved, saved.user == key.user, saved.origin != nil, saved.origin == BackendURL.origin(key.backend) {
            return .heldForBackend(user: key.user, backend: key.backend)
        }
        return .accountGone(user: key.user)
    }

    private func isSettled(_ ids: [String], untilFinal: Bool) -> Bool {
        let now = clock.now()
        return ids.allSatisfy { id in
            if outcomes.isBeingWritten(id) { return false }
            if outcomes.unanswered[id] != nil { return true }
            guard queue.delivery(id)?.state == .queued else { return true }
            return !untilFinal && queue.isWaitingForRetry(id, now: now)
        }
    }

    /// `changed` nil: every waiter; else only those of these deliveries.
    func releaseSettledWaiters(among changed: [String]?) {
        // Chosen first, removed after: removing while iterating the dictionary copied it
        // once per removal, quadratic in a burst of pipelined sends.
        release(waiters.waiting(on: changed).filter { isSettled($0.value.ids, untilFinal: $0.value.untilFinal) })
    }

    func release(_ chosen: [UInt64: SenderWaiters.Waiter]) {
        for (id, waiter) in chosen {
            waiters.remove(id)
            waiter.continuation.resume(returning: answer(waiter.ids))
        }
    }

    /// One timer for all waiters, set for the earliest deadline (`DeadlineTimer`), on the
    /// continuous clock, not the outbox's `WakeTimer`: a sender's timeout is real time,
    /// which a test's clock must not stop.
    private func armDeadlineTimer(_ deadline: ContinuousClock.Instant) {
        waiters.timer.arm(for: deadline) { await self.deadlinePassed(at: $0) }
    }

    private func deadlinePassed(at deadline: ContinuousClock.Instant) {
        release(waiters.timerFired(at: deadline, now: ContinuousClock.now))
        if let next = waiters.earliestDeadline { armDeadlineTimer(next) }
    }
}
