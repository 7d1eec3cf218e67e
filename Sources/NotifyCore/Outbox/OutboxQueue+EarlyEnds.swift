#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ends a wait before its time: a backend that answered another request, a network
/// that may be back, a reload that shortened the backoff; and what `status` says of the
/// waits on the backend and the network.
extension OutboxQueue {
    /// True while a delivery waits on its backend's recovery (`backendWorks`) or on the network.
    public var waitsOnBackend: Bool { !recoverable.isEmpty || offline.values.contains(where: \.waiting) }

    /// Since when the deliveries still waiting to go out have found no route to their
    /// backend; nil unless one did at its last attempt.
    public var offlineSince: Date? {
        guard !offline.isEmpty, !paused else { return nil }
        return offline.filter { key, _ in queued.contains { $0.orderKey == key && !isHeld($0) } }.values.map(\.since).min()
    }

    /// The backend at `backend` answered another request: the deliveries waiting on it
    /// after a failure go out at the next `takeReady` (still one at a time per recipient,
    /// and within `concurrency`). A `Retry-After` the backend gave is not cut short.
    /// Returns whether any wait ended.
    public mutating func backendWorks(_ backend: String) -> Bool {
        let keys = recoverable.compactMap { $0.value == backend ? $0.key : nil }
        for key in keys {
            retryAt[key] = nil
            recoverable[key] = nil
            cutShort.insert(key)
        }
        let reachable = endOfflineWaits { $0.backend == backend }
        return !keys.isEmpty || reachable
    }

    /// The network changed (a link, an address or a default route came up, or the machine
    /// woke): the deliveries waiting on the network go out at the next `takeReady`, and so
    /// do those waiting their own backoff after a failure without `Retry-After`, once per
    /// failure as with `backendWorks`. Returns whether any wait ended.
    public mutating func networkMayBeBack() -> Bool {
        let keys = Array(recoverable.keys)
        for key in keys {
            retryAt[key] = nil
            cutShort.insert(key)
        }
        recoverable = [:]
        let offlineEnded = endOfflineWaits { _ in true }
        return !keys.isEmpty || offlineEnded
    }

    /// Ends the waits for the network of the keys `which` picks; their `since` stays until
    /// an attempt says more.
    private mutating func endOfflineWaits(_ which: (OfflineWait) -> Bool) -> Bool {
        let keys = offline.compactMap { $0.value.waiting && which($0.value) ? $0.key : nil }
        for key in keys {
            retryAt[key] = nil
            offline[key]?.waiting = false
        }
        return !keys.isEmpty
    }

    /// A reload changed `retry_min`, `retry_max` or `max_connections`. A wait already
    /// scheduled ends at what the new backoff gives for the same failure, when that is
    /// sooner (a longer backoff applies from the next failure). Returns whether one did.
    public mutating func changeSettings(backoff newBackoff: Backoff, concurrency newConcurrency: Int) -> Bool {
        backoff = newBackoff
        concurrency = max(1, newConcurrency)
        var shortened = Set<String>()
        for (key, wait) in retryAt {
            let failures = self.failures[key] ?? 1
            let delay = wait.unit.map { backoff.delay(failures: failures, retryAfter: wait.retryAfter, unit: $0, watched: wait.watched) } ?? backoff.ceiling
            let sooner = wait.failedAt.addingTimeInterval(delay)
            guard sooner < wait.until else { continue }
            retryAt[key]?.until = sooner
            shortened.insert(key)
        }
        guard !shortened.isEmpty else { return false }
        for index in queued.indices where queued[index].nextAttemptAt != nil && shortened.contains(queued[index].orderKey) {
            let wait = retryAt[queued[index].orderKey]
            queued[index].nextAttemptAt = wait?.until
            if let message = queued[index].lastError?.message {
                queued[index].lastError?.message = backoff.renamingCap(in: message, retryAfter: wait?.retryAfter)
            }
        }
        return true
    }
}
