import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// The machine after a failed call: its backoff and jitter, a backend's `Retry-After`, and
/// the longer waits of a backend that could not be reached, which the probe watches.
extension RegistrationMachineTests {
    @Test func transientFailureBacksOffWithJitterAndRetries() throws {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        let first = machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "connection refused")), now: Self.start)
        let firstRetry = try #require(Self.wake(first))
        #expect(firstRetry >= Self.start.addingTimeInterval(5) && firstRetry <= Self.start.addingTimeInterval(10))
        #expect(machine.status.state == .retrying)
        #expect(machine.status.nextAttemptAt == firstRetry)
        #expect(machine.status.message?.contains("connection refused") == true)
        #expect(Self.performed(machine.wake(now: firstRetry.addingTimeInterval(-1))).isEmpty, "not before the retry time")

        let again = machine.wake(now: firstRetry)
        #expect(Self.performed(again) == [.createId(handle: "AA", backend: Self.backend)])
        let second = machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "HTTP 503")), now: firstRetry)
        let secondRetry = try #require(Self.wake(second))
        #expect(secondRetry.timeIntervalSince(firstRetry) >= 20 && secondRetry.timeIntervalSince(firstRetry) <= 40)
        #expect(machine.failures == 2)
    }

    @Test func retryAfterIsHonoured() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        let actions = machine.stepFinished(.failed(.transient(retryAfter: 120, reason: "throttled")), now: Self.start)
        #expect(Self.wake(actions) == Self.start.addingTimeInterval(120))
    }

    @Test func aNewChangeReplacesAPendingRetry() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        _ = machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "down")), now: Self.start)
        let actions = machine.update(Self.complete(token: "BB"), now: Self.start.addingTimeInterval(1))
        #expect(Self.performed(actions) == [.createId(handle: "BB", backend: Self.backend)])
    }

    /// A `set-token` during a `Retry-After` wait is sent once the wait is over, not at once.
    @Test func aNewChangeWaitsOutTheBackendsRetryAfterThenSendsTheLatestOnce() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        _ = machine.stepFinished(.failed(.transient(retryAfter: 600, reason: "HTTP 503 from the backend")), now: Self.start)
        let end = Self.start.addingTimeInterval(600)
        for (offset, token) in [(1.0, "BB"), (300, "CC"), (599, "DD")] {
            let actions = machine.update(Self.complete(token: token), now: Self.start.addingTimeInterval(offset))
            #expect(Self.performed(actions).isEmpty, "token \(token) sent during the backend's wait")
            #expect(Self.wake(actions) == end)
            #expect(machine.status.state == .retrying)
            #expect(machine.settledGeneration == machine.generation)
        }
        #expect(Self.performed(machine.wake(now: end)) == [.createId(handle: "DD", backend: Self.backend)])
        #expect(Self.performed(machine.stepFinished(.created(id: "id-1"), now: end)) == [.upsert(id: "id-1", target: Self.target(Self.complete(token: "DD")))])
        #expect(Self.performed(machine.stepFinished(.done, now: end)).isEmpty)
        // Once registered, a change goes out at once again.
        #expect(Self.performed(machine.update(Self.complete(token: "EE"), now: end.addingTimeInterval(1))) == [.upsert(id: "id-1", target: Self.target(Self.complete(token: "EE")))])
    }

    @Test func registerOverridesTheBackendsWaitOnRequest() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        _ = machine.stepFinished(.failed(.transient(retryAfter: 600, reason: "throttled")), now: Self.start)
        #expect(Self.performed(machine.forceRegister(now: Self.start.addingTimeInterval(5))) == [.createId(handle: "AA", backend: Self.backend)])
    }

    /// `Retry-After: 0` answered every time made 1,281 requests in 3 s.
    @Test(arguments: [0.0, 0.001])
    func aRetryAfterOfNothingStillBacksOff(retryAfter: Double) throws {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        var now = Self.start
        var previousDelay = 0.0
        for failure in 1...4 {
            let actions = machine.stepFinished(.failed(.transient(retryAfter: retryAfter, reason: "HTTP 503 from the backend")), now: now)
            #expect(Self.performed(actions).isEmpty, "failure \(failure) retried at once")
            let wake = try #require(Self.wake(actions))
            let delay = wake.timeIntervalSince(now)
            #expect(delay >= Self.policy.backoff.initial / 2)
            #expect(delay > previousDelay / 2, "the backoff keeps growing")
            previousDelay = delay
            now = wake
            #expect(Self.performed(machine.wake(now: now)).count == 1)
        }
    }

    @Test func aHugeRetryAfterIsCappedAt30MinutesAndStatusSaysSo() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        let actions = machine.stepFinished(.failed(.transient(retryAfter: 1e9, reason: "HTTP 503 from the backend")), now: Self.start)
        #expect(Self.wake(actions) == Self.start.addingTimeInterval(1800))
        #expect(machine.status.state == .retrying)
        #expect(machine.status.message?.contains("the backend asked to wait 1000000000 s, capped at the larger of retry_max and 30 min (1800 s)") == true)
    }

    /// A backend that could not be reached is watched by the probe: its backoff grows past
    /// `retry_max`, to 30 min, sparing the backend requests while it is gone.
    @Test func anUnreachableBackendsBackoffGrowsPastRetryMax() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        var now = Self.start
        var longest = 0.0
        for _ in 0..<12 {
            let actions = machine.stepFinished(.failed(.unreachable(reason: "connection refused", tls: false)), now: now)
            let wake = try! #require(Self.wake(actions))
            longest = max(longest, wake.timeIntervalSince(now))
            #expect(machine.waitsOnBackend, "the probe may end the wait")
            now = wake
            _ = machine.wake(now: now)
        }
        #expect(longest > Self.policy.backoff.maximum)
        #expect(longest <= 1800)
    }
}
