#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem

/// The waits between attempts: how long a failure backs off (our backoff, a `Retry-After`,
/// or the network), and what may end a wait early (a reload, a working backend, a network
/// change). The state they share with RegistrationMachine.swift is internal for them.
extension RegistrationMachine {
    /// A reload changed the policy. A wait already scheduled ends at what the new backoff
    /// gives for the same failure, when that is sooner (a longer backoff applies from the
    /// next failure); a refresh is armed again for the new interval.
    public mutating func changePolicy(_ newPolicy: RegistrationPolicy, now: Date) -> [RegistrationAction] {
        guard newPolicy != policy else { return [] }
        policy = newPolicy
        if let retryAt, let failure = lastFailure {
            let delay = failure.unit.map { policy.backoff.delay(failures: failures, retryAfter: failure.retryAfter, unit: $0, watched: failure.watched) }
                ?? policy.backoff.ceiling
            let sooner = failure.at.addingTimeInterval(delay)
            if sooner < retryAt {
                self.retryAt = sooner
                if backendWaitUntil != nil { backendWaitUntil = sooner }
                lastReason = described(failure.reason, retryAfter: failure.retryAfter)
            }
        }
        return reconcile(now: now)
    }

    /// The backend answered another request (a delivery): a retry waiting on our own
    /// backoff goes now. A `Retry-After` still in force is kept.
    public mutating func backendWorks(now: Date) -> [RegistrationAction] {
        guard waitsOnBackend, backendWait(now: now) == nil else { return [] }
        endWait()
        return reconcile(now: now)
    }

    /// The network changed (a link, an address or a default route came up, or the machine
    /// woke): a retry waiting on the network, or on our own backoff (once per failure, as
    /// with `backendWorks`), goes now; so does a refresh that fell due meanwhile, whichever
    /// clock its timer ran on. A `Retry-After` still in force is kept.
    public mutating func networkMayBeBack(now: Date) -> [RegistrationAction] {
        if waitsOnBackend, backendWait(now: now) == nil { endWait() }
        return reconcile(now: now)
    }

    mutating func endWait() {
        if recoverableWait { waitCutShort = true }
        recoverableWait = false
        offlineWait = false
        retryAt = nil
    }

    /// `watched`: the backend could not be reached, and the reachability probe ends the
    /// wait when it is back, so the wait may grow past `retry_max` (`Backoff.ceiling`).
    mutating func backOff(_ finished: InFlight, reason: String, retryAfter: Double?, watched: Bool = false, now: Date) -> [RegistrationAction] {
        failures += 1
        lastReason = described(reason, retryAfter: retryAfter)
        let unit = random.nextUnit()
        lastFailure = (now, retryAfter, unit, watched, reason)
        let when = now.addingTimeInterval(policy.backoff.delay(failures: failures, retryAfter: retryAfter, unit: unit, watched: watched))
        retryAt = when
        backendWaitUntil = retryAfter == nil ? nil : when
        // A watched wait stays one the probe ends, however often (see `OutboxQueue`).
        recoverableWait = retryAfter == nil && (watched || !waitCutShort)
        waitCutShort = false
        offlineSince = nil
        settle(finished.generation)
        // Changes made while the call was in flight wait for the retry too: the backend is down.
        if generation > finished.generation { settle(generation) }
        return reconcile(now: now)
    }

    /// The reason, with what the cap in effect did to a longer wait the backend asked for.
    func described(_ reason: String, retryAfter: Double?) -> String {
        [reason, policy.backoff.retryAfterNote(retryAfter)].compactMap { $0 }.joined(separator: "; ")
    }

    /// Not the backend's failure: `failures`, and so the backoff, stay as they were. The
    /// network's next change ends the wait; should none be seen, the longest backoff does.
    mutating func waitForNetwork(_ finished: InFlight, reason: String, now: Date) -> [RegistrationAction] {
        lastReason = reason
        offlineSince = offlineSince ?? now
        offlineWait = true
        recoverableWait = false
        waitCutShort = false
        backendWaitUntil = nil
        lastFailure = (now, nil, nil, false, reason)
        retryAt = now.addingTimeInterval(policy.backoff.ceiling)
        settle(finished.generation)
        if generation > finished.generation { settle(generation) }
        return reconcile(now: now)
    }

    func backendWait(now: Date) -> Date? {
        guard let backendWaitUntil, backendWaitUntil > now else { return nil }
        return backendWaitUntil
    }
}
