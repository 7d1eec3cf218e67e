import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// A backend that answers another request ends the waits on it: queued deliveries and a
/// retrying registration go at once, not at the end of their backoff.
struct BackendRecoveryTests {
    typealias Q = OutboxQueueTests
    static let backend = Q.alice.backend

    @Test func aWorkingBackendEndsTheOutboxsOwnBackoff() {
        let first = Q.delivery(1), second = Q.delivery(2), toCarol = Q.delivery(3, to: "carol")
        var queue = Q.queue([first, second, toCarol], concurrency: 1)
        #expect(Q.ids(queue.takeReady(now: Q.at(0))) == [first.id])
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: Q.at(1))
        #expect(queue.waitsOnBackend)
        #expect(Q.ids(queue.takeReady(now: Q.at(1))) == [toCarol.id], "bob's messages wait their backoff")
        queue.finished(toCarol.id, .delivered, now: Q.at(2))

        let anotherEnded = queue.backendWorks("https://another.example")
        #expect(!anotherEnded, "only waits on the backend that answered end")
        let ended = queue.backendWorks(Self.backend)
        #expect(ended)
        #expect(!queue.waitsOnBackend)
        // In order, one at a time per recipient: the first message again, not the second.
        #expect(Q.ids(queue.takeReady(now: Q.at(2))) == [first.id])
        let more = queue.takeReady(now: Q.at(2))
        #expect(more.isEmpty)
    }

    @Test func aRetryAfterStillInForceIsKept() {
        let first = Q.delivery(1)
        var queue = Q.queue([first])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .transient(retryAfter: 120, error: Q.unavailable), now: Q.at(1))
        #expect(!queue.waitsOnBackend)
        let ended = queue.backendWorks(Self.backend)
        #expect(!ended)
        let started = queue.takeReady(now: Q.at(2))
        #expect(started.isEmpty)
    }

    @Test func messagesHeldForARefusedLoginStayHeld() {
        var first = Q.delivery(1)
        first.senderWaiting = false
        var queue = Q.queue([first, Q.delivery(2, to: "carol")])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .unauthorized(Q.refused), now: Q.at(1))
        let ended = queue.backendWorks(Self.backend)
        #expect(!ended)
        let started = queue.takeReady(now: Q.at(2))
        #expect(queue.paused && started.isEmpty)
    }

    /// A recipient whose own messages fail while others go through is retried once per
    /// failure of its own backoff, not at every other success.
    @Test func aWaitIsCutShortOncePerFailure() {
        let first = Q.delivery(1)
        var queue = Q.queue([first])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: Q.at(1))
        let ended = queue.backendWorks(Self.backend)
        #expect(ended)
        #expect(Q.ids(queue.takeReady(now: Q.at(1))) == [first.id])
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: Q.at(2))
        let endedAgain = queue.backendWorks(Self.backend)
        #expect(!endedAgain, "failed again at once: its backoff runs")
        let started = queue.takeReady(now: Q.at(3))
        #expect(started.isEmpty)
        // Its own retry fails too: the next answer from the backend may end that wait.
        let retry = queue.queued[0].nextAttemptAt!
        #expect(Q.ids(queue.takeReady(now: retry)) == [first.id])
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: retry)
        let endedAfterItsOwnRetry = queue.backendWorks(Self.backend)
        #expect(endedAfterItsOwnRetry)
    }

    @Test func aWorkingBackendEndsTheRegistrationsBackoff() {
        let inputs = RegistrationInputs(token: "AB", platform: .apns, tags: [], account: AccountReference(user: "alice", revision: "r1"),
                                        backend: Self.backend, enabled: true)
        var machine = RegistrationMachine(inputs: inputs, record: RegistrationRecord(),
                                          policy: RegistrationPolicy(refreshInterval: 86400, backoff: Backoff(initial: 600, multiplier: 2, maximum: 1800), debounce: 0))
        let first = machine.start(now: Q.at(0))
        #expect(first.contains(.perform(.createId(handle: "AB", backend: Self.backend))))
        _ = machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "connection refused")), now: Q.at(1))
        #expect(machine.waitsOnBackend)
        let retry = machine.backendWorks(now: Q.at(2))
        #expect(retry.contains(.perform(.createId(handle: "AB", backend: Self.backend))))
        #expect(!machine.waitsOnBackend)
        // Failed again at once: no second shortcut; a Retry-After is never cut short either.
        _ = machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "connection refused")), now: Q.at(3))
        let retryAgain = machine.backendWorks(now: Q.at(4))
        #expect(retryAgain.isEmpty)
        _ = machine.wake(now: Q.at(3 + 1800))
        _ = machine.stepFinished(.failed(.transient(retryAfter: 900, reason: "HTTP 503")), now: Q.at(3 + 1801))
        let retryDuringRetryAfter = machine.backendWorks(now: Q.at(3 + 1802))
        #expect(retryDuringRetryAfter.isEmpty)
    }
}
