import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// A request that finds no route to the backend is not the backend's failure: what waits
/// on it waits for the network, its backoff does not grow, and a change of the network
/// (or the machine waking) ends the wait. Pure values, driven with explicit dates.
struct OfflineTests {
    typealias Q = OutboxQueueTests
    static let remote = AccountKey(user: "alice", backend: "https://backend.example")
    static let noRoute = WireError(code: .backendUnavailable, message: "no route to the host")

    static func remoteQueue(_ deliveries: [Delivery], backoff: Backoff = Q.backoff) -> OutboxQueue {
        var queue = OutboxQueue(backoff: backoff, concurrency: 4, seed: 7)
        queue.setAccount(remote)
        for delivery in deliveries { queue.add(delivery) }
        return queue
    }

    static func delivery(_ sequence: Int, to: String = "bob") -> Delivery {
        Q.delivery(sequence, to: to, account: remote)
    }

    // MARK: The outbox

    @Test func offlineAttemptsDoNotGrowTheBackoff() throws {
        let first = Self.delivery(1)
        var queue = Self.remoteQueue([first])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: Q.at(0))
        var now = try #require(queue.queued[0].nextAttemptAt)
        for _ in 1...5 {
            let retried = queue.takeReady(now: now)
            #expect(Q.ids(retried) == [first.id])
            queue.finished(first.id, .offline(Self.noRoute), now: now)
            let retry = try #require(queue.queued[0].nextAttemptAt)
            #expect(retry == now.addingTimeInterval(Q.backoff.ceiling), "offline, the backoff's ceiling is the fallback")
            let ended = queue.networkMayBeBack()
            #expect(ended)
            now = now.addingTimeInterval(1)
        }
        let afterwards = queue.takeReady(now: now)
        #expect(Q.ids(afterwards) == [first.id])
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: now)
        let delay = try #require(queue.queued[0].nextAttemptAt).timeIntervalSince(now)
        // The second failure of the backend's own: 10–20 s. Counting the five offline
        // attempts would make it the seventh: 320–640 s.
        #expect(delay >= 10 && delay <= 20, "waits \(delay) s")
    }

    @Test func aChangeOfTheNetworkEndsTheWaitAndOfflineLastsUntilAnotherOutcome() throws {
        let first = Self.delivery(1), second = Self.delivery(2, to: "carol")
        var queue = Self.remoteQueue([first, second])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .offline(Self.noRoute), now: Q.at(1))
        queue.finished(second.id, .offline(Self.noRoute), now: Q.at(2))
        #expect(queue.offlineSince == Q.at(1))
        #expect(queue.waitsOnBackend)
        let early = queue.takeReady(now: Q.at(100))
        #expect(early.isEmpty, "no retry of its own before the longest backoff")

        let ended = queue.networkMayBeBack()
        #expect(ended)
        #expect(!queue.waitsOnBackend)
        let retried = queue.takeReady(now: Q.at(101))
        #expect(Set(Q.ids(retried)) == [first.id, second.id])
        #expect(queue.offlineSince == Q.at(1), "still offline while the retries are under way")
        queue.finished(first.id, .offline(Self.noRoute), now: Q.at(102))
        #expect(queue.offlineSince == Q.at(1), "found no route again: offline since the first time")
        queue.finished(second.id, .delivered, now: Q.at(102))
        #expect(queue.offlineSince == Q.at(1))
        _ = queue.networkMayBeBack()
        _ = queue.takeReady(now: Q.at(103))
        queue.finished(first.id, .delivered, now: Q.at(104))
        #expect(queue.offlineSince == nil)
    }

    @Test func aBackendThatAnswersEndsTheWaitsOnIt() {
        let first = Self.delivery(1)
        var queue = Self.remoteQueue([first])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .offline(Self.noRoute), now: Q.at(1))
        let anotherEnded = queue.backendWorks("https://another.example")
        #expect(!anotherEnded)
        let ended = queue.backendWorks(Self.remote.backend)
        #expect(ended)
        let retried = queue.takeReady(now: Q.at(2))
        #expect(Q.ids(retried) == [first.id])
    }

    /// Waits on our own backoff end too, once per failure; a backend's Retry-After is kept.
    @Test func aChangeOfTheNetworkEndsOwnBackoffsButNotRetryAfter() {
        let first = Self.delivery(1), second = Self.delivery(2, to: "carol")
        var queue = Self.remoteQueue([first, second])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: Q.at(1))
        queue.finished(second.id, .transient(retryAfter: 600, error: Q.unavailable), now: Q.at(1))
        let ended = queue.networkMayBeBack()
        #expect(ended)
        let retried = queue.takeReady(now: Q.at(2))
        #expect(Q.ids(retried) == [first.id])
        queue.finished(first.id, .transient(retryAfter: nil, error: Q.unavailable), now: Q.at(3))
        let endedAgain = queue.networkMayBeBack()
        #expect(!endedAgain, "failed again at once: its backoff runs")
        let waiting = queue.takeReady(now: Q.at(4))
        #expect(waiting.isEmpty)
    }

    @Test func heldAndCancelledDeliveriesAreNotOffline() {
        let first = Self.delivery(1), second = Self.delivery(2, to: "carol")
        var queue = Self.remoteQueue([first, second])
        _ = queue.takeReady(now: Q.at(0))
        queue.finished(first.id, .offline(Self.noRoute), now: Q.at(1))
        queue.finished(second.id, .offline(Self.noRoute), now: Q.at(2))
        let cancelled = queue.cancel(first.id)
        #expect(cancelled != nil)
        #expect(queue.offlineSince == Q.at(2))
        queue.setAccount(AccountKey(user: "bob", backend: Self.remote.backend))
        #expect(queue.offlineSince == nil, "held for an account that is not logged in")
    }

    // MARK: The registration

    static let inputs = RegistrationInputs(token: "AB", platform: .apns, tags: [], account: AccountReference(user: "alice", revision: "r1"),
                                           backend: remote.backend, enabled: true)
    static let policy = RegistrationPolicy(refreshInterval: 86400, backoff: Backoff(initial: 10, multiplier: 2, maximum: 1800), debounce: 0)
    static let create = RegistrationAction.perform(.createId(handle: "AB", backend: remote.backend))

    @Test func anOfflineRegistrationWaitsForTheNetworkAndCountsNoFailure() {
        var machine = RegistrationMachine(inputs: Self.inputs, record: RegistrationRecord(), policy: Self.policy)
        let first = machine.start(now: Q.at(0))
        #expect(first.contains(Self.create))
        let waiting = machine.stepFinished(.failed(.offline(reason: "no route to the host")), now: Q.at(1))
        #expect(waiting.contains(.wake(at: Q.at(1 + 1800))), "the longest backoff, should the network never be seen to change")
        #expect(machine.failures == 0)
        #expect(machine.offlineSince == Q.at(1))
        #expect(machine.waitsOnBackend)
        #expect(machine.status.state == .retrying)
        #expect(machine.status.message?.contains("retrying when the network comes back") == true)

        let retry = machine.networkMayBeBack(now: Q.at(50))
        #expect(retry.contains(Self.create))
        #expect(machine.offlineSince == Q.at(1), "still offline while the retry is under way")
        _ = machine.stepFinished(.failed(.offline(reason: "no route to the host")), now: Q.at(51))
        #expect(machine.offlineSince == Q.at(1))
        #expect(machine.failures == 0)
        let retryAgain = machine.networkMayBeBack(now: Q.at(60))
        #expect(retryAgain.contains(Self.create))
        _ = machine.stepFinished(.created(id: "id-1"), now: Q.at(61))
        _ = machine.stepFinished(.done, now: Q.at(62))
        #expect(machine.status.state == .registered)
        #expect(machine.offlineSince == nil)
    }

    @Test func aChangeOfTheNetworkKeepsARetryAfter() {
        var machine = RegistrationMachine(inputs: Self.inputs, record: RegistrationRecord(), policy: Self.policy)
        _ = machine.start(now: Q.at(0))
        _ = machine.stepFinished(.failed(.transient(retryAfter: 900, reason: "HTTP 503")), now: Q.at(1))
        let duringRetryAfter = machine.networkMayBeBack(now: Q.at(2))
        #expect(!duringRetryAfter.contains(Self.create))
        #expect(machine.status.nextAttemptAt == Q.at(901))
    }

    /// A refresh due while the machine slept goes as soon as it wakes, even if the timer
    /// armed for it ran on a clock that stopped during the sleep.
    @Test func aRefreshThatFellDueGoesWhenTheNetworkChanges() {
        var machine = RegistrationMachine(inputs: Self.inputs, record: RegistrationRecord(), policy: Self.policy)
        _ = machine.start(now: Q.at(0))
        _ = machine.stepFinished(.created(id: "id-1"), now: Q.at(1))
        _ = machine.stepFinished(.done, now: Q.at(2))
        let upsert = RegistrationAction.perform(.upsert(id: "id-1", target: Self.inputs.target!))
        let whileFresh = machine.networkMayBeBack(now: Q.at(3))
        #expect(whileFresh == [.wake(at: Q.at(2 + 86400))], "fresh: nothing to do")
        let afterSleep = machine.networkMayBeBack(now: Q.at(2 + 90000))
        #expect(afterSleep.contains(upsert))
    }

    // MARK: Judging a failure

    @Test func onlyAWatchedNetworkWithoutARouteToARemoteBackendIsOffline() {
        let remote = "https://backend.example"
        var view = NetworkView()
        #expect(!view.isOffline(reaching: remote, noRoute: true), "nothing watches the network: the backoff it is")
        view.monitor = "netlink"
        #expect(view.isOffline(reaching: remote, noRoute: true))
        #expect(!view.isOffline(reaching: remote, noRoute: false), "a name not resolved, with a default route: the backend's trouble")
        view.defaultRoute = true
        #expect(!view.isOffline(reaching: remote, noRoute: false))
        view.defaultRoute = false
        #expect(view.isOffline(reaching: remote, noRoute: false))
        for local in ["http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9"] {
            #expect(!view.isOffline(reaching: local, noRoute: true), "\(local) is on this machine")
        }
    }

    @Test func aFailureIsJudgedOfflineOnlyWhenTheNetworkExplainsIt() {
        let recovery = BackendRecovery()
        let unreachable = BackendCallError.unreachable("cannot connect: no route", noRoute: true)
        #expect(recovery.classify(unreachable, route: .send, backend: Self.remote.backend) == .unreachable(reason: "cannot connect: no route", tls: false),
                "without a monitor, no route is the backend's failure, and the probe watches for its return")
        recovery.networkWatched(by: "netlink")
        #expect(recovery.classify(unreachable, route: .send, backend: Self.remote.backend) == .offline(reason: "cannot connect: no route"))
        #expect(recovery.classify(.transport("the connection was lost"), route: .send, backend: Self.remote.backend)
            == .transient(retryAfter: nil, reason: "the request to the backend failed: the connection was lost"))
        #expect(recovery.classify(.cannotConnect("connection refused", tls: false), route: .send, backend: Self.remote.backend)
            == .unreachable(reason: "connection refused", tls: false))
        #expect(recovery.classify(.cannotConnect("TLS failed", tls: true), route: .send, backend: Self.remote.backend)
            == .unreachable(reason: "TLS failed", tls: true))
        #expect(recovery.classify(.unreachable("the request timed out", noRoute: false), route: .send, backend: Self.remote.backend)
            == .transient(retryAfter: nil, reason: "the request to the backend failed: the request timed out"), "the backend may have taken it: not unreachable")
        #expect(recovery.classify(.unreachable("no connection in time", noRoute: false, connecting: true), route: .send, backend: Self.remote.backend)
            == .unreachable(reason: "no connection in time", tls: false))
        #expect(recovery.classify(.status(503, retryAfter: nil, body: ""), route: .send, backend: Self.remote.backend)
            == .transient(retryAfter: nil, reason: "the backend is unavailable for now (HTTP 503)"))
    }
}
