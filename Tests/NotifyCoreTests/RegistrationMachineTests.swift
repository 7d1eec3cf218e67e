import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// Drives the pure machine step by step with explicit times: each test says which
/// backend calls it expects, in order.
struct RegistrationMachineTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let alice = AccountReference(user: "alice", revision: "r1")
    static let backend = "http://127.0.0.1:8080"
    static let policy = RegistrationPolicy(refreshInterval: 3600, backoff: Backoff(initial: 10, multiplier: 4, maximum: 1000), debounce: 0)

    static func complete(token: String = "AA", tags: [String] = [], account: AccountReference? = alice, backend: String? = backend) -> RegistrationInputs {
        RegistrationInputs(token: token, platform: .apns, tags: tags, account: account, backend: backend)
    }

    static func target(_ inputs: RegistrationInputs) -> RegisteredTarget {
        RegisteredTarget(handle: inputs.token!, platform: inputs.platform, tags: inputs.tags, user: inputs.account!.user, backend: inputs.backend!)
    }

    static func performed(_ actions: [RegistrationAction]) -> [RegistrationStep] {
        actions.compactMap { if case .perform(let step) = $0 { step } else { nil } }
    }

    static func wake(_ actions: [RegistrationAction]) -> Date? {
        actions.compactMap { if case .wake(let date) = $0 { date } else { nil } }.last
    }

    /// A machine that has registered `inputs` under id "id-1" at `start`.
    static func registered(_ inputs: RegistrationInputs = complete()) -> RegistrationMachine {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: policy)
        _ = machine.update(inputs, now: start)
        _ = machine.stepFinished(.created(id: "id-1"), now: start)
        _ = machine.stepFinished(.done, now: start)
        return machine
    }

    /// Another backend: the id made at the old one is retired (deleted there) before the
    /// state that forgets it is saved, then a new id is made at the new one.
    @Test func aNewBackendRetiresTheOldIdBeforeForgettingIt() {
        var machine = Self.registered()
        let actions = machine.update(Self.complete(backend: "https://other.example"), now: Self.start.addingTimeInterval(1))
        #expect(actions.prefix(2) == [.retire(id: "id-1", backend: Self.backend, user: "alice"), .persist])
        #expect(Self.performed(actions) == [.createId(handle: "AA", backend: "https://other.example")])
        #expect(machine.record.id == nil && machine.record.registered == nil)
    }

    /// A state saved with the old id (notifyd killed before it retired it) retires it at start.
    @Test func anIdLeftAtAnotherBackendIsRetiredAtStart() {
        var record = Self.registered().record
        record.idBackend = "https://old.example"
        record.registered?.backend = "https://old.example"
        var machine = RegistrationMachine(inputs: Self.complete(), record: record, policy: Self.policy)
        let actions = machine.start(now: Self.start.addingTimeInterval(10))
        #expect(actions.prefix(2) == [.retire(id: "id-1", backend: "https://old.example", user: "alice"), .persist])
        #expect(Self.performed(actions) == [.createId(handle: "AA", backend: Self.backend)])
    }

    @Test func firstRegistrationCreatesAnIdThenUpserts() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        let inputs = Self.complete(token: "ABCD", tags: ["news"])
        let first = machine.update(inputs, now: Self.start)
        #expect(Self.performed(first) == [.createId(handle: "ABCD", backend: Self.backend)])
        #expect(machine.status.state == .registering)

        let second = machine.stepFinished(.created(id: "id-1"), now: Self.start)
        #expect(Self.performed(second) == [.upsert(id: "id-1", target: Self.target(inputs))])
        #expect(second.contains(.persist))

        let third = machine.stepFinished(.done, now: Self.start)
        #expect(Self.performed(third).isEmpty)
        #expect(Self.wake(third) == Self.start.addingTimeInterval(3600))
        #expect(machine.status.state == .registered)
        #expect(machine.status.id == "id-1")
        #expect(machine.record.registered == Self.target(inputs))
        #expect(machine.settledGeneration == machine.generation)
    }

    @Test func unchangedAndFreshMeansNoBackendRequest() {
        var machine = Self.registered()
        #expect(machine.update(Self.complete(), now: Self.start.addingTimeInterval(10)).isEmpty)
        let restarted = RegistrationMachine(inputs: Self.complete(), record: machine.record, policy: Self.policy)
        var copy = restarted
        let actions = copy.start(now: Self.start.addingTimeInterval(3599))
        #expect(Self.performed(actions).isEmpty)
        #expect(Self.wake(actions) == Self.start.addingTimeInterval(3600))
        #expect(copy.status.state == .registered)
        // A timer firing early (a replaced wake-up) does nothing either.
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(100))).isEmpty)
    }

    @Test func startRefreshesAStaleRegistrationWithTheCachedId() {
        let record = Self.registered().record
        var machine = RegistrationMachine(inputs: Self.complete(), record: record, policy: Self.policy)
        let actions = machine.start(now: Self.start.addingTimeInterval(3601))
        #expect(Self.performed(actions) == [.upsert(id: "id-1", target: Self.target(Self.complete()))])
    }

    @Test func periodicRefreshWhenTheTimerFires() {
        var machine = Self.registered()
        let actions = machine.wake(now: Self.start.addingTimeInterval(3600))
        #expect(Self.performed(actions) == [.upsert(id: "id-1", target: Self.target(Self.complete()))])
    }

    @Test func changedTokenOrTagsReusesTheCachedId() {
        var machine = Self.registered()
        let newToken = Self.complete(token: "BB")
        #expect(Self.performed(machine.update(newToken, now: Self.start)) == [.upsert(id: "id-1", target: Self.target(newToken))])
        _ = machine.stepFinished(.done, now: Self.start)
        let newTags = Self.complete(token: "BB", tags: ["sports"])
        #expect(Self.performed(machine.update(newTags, now: Self.start)) == [.upsert(id: "id-1", target: Self.target(newTags))])
    }

    @Test func changedBackendGetsANewId() {
        var machine = Self.registered()
        let elsewhere = Self.complete(backend: "https://other.example")
        #expect(Self.performed(machine.update(elsewhere, now: Self.start)) == [.createId(handle: "AA", backend: "https://other.example")])
    }

    @Test(arguments: [404, 410, 500])
    func goneIdIsDroppedAndReplacedOnce(status: Int) {
        var machine = Self.registered()
        let inputs = Self.complete(token: "BB")
        _ = machine.update(inputs, now: Self.start)
        let afterGone = machine.stepFinished(.failed(.gone(status: status)), now: Self.start)
        #expect(Self.performed(afterGone) == [.createId(handle: "BB", backend: Self.backend)])
        #expect(machine.record.id == nil)
        let afterCreate = machine.stepFinished(.created(id: "id-2"), now: Self.start)
        #expect(Self.performed(afterCreate) == [.upsert(id: "id-2", target: Self.target(inputs))])
        _ = machine.stepFinished(.done, now: Self.start)
        #expect(machine.status.state == .registered)
        #expect(machine.status.id == "id-2")
    }

    @Test func goneTwiceInOnePassBacksOffInsteadOfLooping() {
        var machine = Self.registered()
        _ = machine.update(Self.complete(token: "BB"), now: Self.start)
        _ = machine.stepFinished(.failed(.gone(status: 410)), now: Self.start)
        _ = machine.stepFinished(.created(id: "id-2"), now: Self.start)
        let actions = machine.stepFinished(.failed(.gone(status: 410)), now: Self.start)
        #expect(Self.performed(actions).isEmpty)
        #expect(machine.status.state == .retrying)
        #expect(machine.record.id == nil, "the dead id is never used again")
        // The retry starts a new pass, which may replace the id once more.
        let retry = machine.wake(now: Self.wake(actions)!)
        #expect(Self.performed(retry) == [.createId(handle: "BB", backend: Self.backend)])
    }

    @Test func unauthorizedStopsUntilTheCredentialsChange() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        let actions = machine.stepFinished(.failed(.unauthorized(status: 403)), now: Self.start)
        #expect(Self.performed(actions).isEmpty)
        #expect(Self.wake(actions) == nil)
        #expect(machine.status.state == .unauthorized)
        #expect(machine.status.message?.contains("notifyctl login alice") == true)

        // Other changes do not bring the refused credentials back to the backend.
        #expect(Self.performed(machine.update(Self.complete(tags: ["x"]), now: Self.start)).isEmpty)
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(86400))).isEmpty)

        // A new login does.
        let relogin = Self.complete(tags: ["x"], account: AccountReference(user: "alice", revision: "r2"))
        #expect(Self.performed(machine.update(relogin, now: Self.start)) == [.createId(handle: "AA", backend: Self.backend)])
    }

    @Test func changesDuringACallCoalesceIntoOneFollowUp() {
        var machine = Self.registered()
        var calls = Self.performed(machine.update(Self.complete(token: "B0"), now: Self.start))
        for index in 1..<100 {
            calls += Self.performed(machine.update(Self.complete(token: "B\(index)"), now: Self.start))
        }
        #expect(calls.count == 1, "one call in flight; the other 99 changes only update the inputs")
        let followUp = Self.performed(machine.stepFinished(.done, now: Self.start))
        #expect(followUp == [.upsert(id: "id-1", target: Self.target(Self.complete(token: "B99")))])
        _ = machine.stepFinished(.done, now: Self.start)
        #expect(machine.status.state == .registered)
        #expect(machine.record.registered?.handle == "B99")
        #expect(machine.settledGeneration == machine.generation)
    }

    @Test func rejectedRegistrationIsNotRetriedUntilItChangesOrIsForced() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        _ = machine.update(Self.complete(), now: Self.start)
        _ = machine.stepFinished(.created(id: "id-1"), now: Self.start)
        let actions = machine.stepFinished(.failed(.rejected(status: 400, detail: "bad platform")), now: Self.start)
        #expect(Self.performed(actions).isEmpty)
        #expect(machine.status.state == .rejected)
        #expect(machine.status.message?.contains("HTTP 400: bad platform") == true)
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(86400))).isEmpty)
        #expect(Self.performed(machine.forceRegister(now: Self.start)) == [.upsert(id: "id-1", target: Self.target(Self.complete()))])
    }

    @Test func forceRegisterSendsEvenWhenFresh() {
        var machine = Self.registered()
        #expect(Self.performed(machine.forceRegister(now: Self.start.addingTimeInterval(1))).count == 1)
    }

    /// A `register` that fails for a while is retried with the backoff until it gets
    /// through, fresh registration or not; status names the attempt that really comes.
    @Test func aForcedRegistrationThatFailsIsRetriedWhileFresh() throws {
        var machine = Self.registered()
        var now = Self.start.addingTimeInterval(1)
        _ = machine.forceRegister(now: now)
        for failure in 1...3 {
            let actions = machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "HTTP 503")), now: now)
            let wake = try #require(Self.wake(actions), "failure \(failure): a retry is planned")
            #expect(wake < Self.start.addingTimeInterval(Self.policy.refreshInterval), "at the backoff, not at the next refresh")
            #expect(machine.status.state == .retrying)
            #expect(machine.status.nextAttemptAt == wake)
            now = wake
            #expect(Self.performed(machine.wake(now: now)) == [.upsert(id: "id-1", target: Self.target(Self.complete()))])
        }
        // Through at last: back to the refresh interval, no more retries.
        let done = machine.stepFinished(.done, now: now)
        #expect(Self.wake(done) == now.addingTimeInterval(Self.policy.refreshInterval))
        #expect(machine.status.state == .registered)
    }

    @Test func tokenBeforeLoginWaitsForCredentials() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        let noAccount = Self.complete(account: nil)
        #expect(Self.performed(machine.update(noAccount, now: Self.start)).isEmpty)
        #expect(machine.status.state == .notLoggedIn)
        #expect(machine.settledGeneration == machine.generation, "a waiting set-token gets its answer at once")
        #expect(Self.performed(machine.update(Self.complete(), now: Self.start)) == [.createId(handle: "AA", backend: Self.backend)])
    }

    /// The backend first: a login needs one, and what `status` says of it tells how to give
    /// both (`notifyctl login --backend URL USER`).
    @Test func missingPiecesAreReportedInOrder() {
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy)
        #expect(machine.status.state == .noBackend)
        _ = machine.update(RegistrationInputs(account: Self.alice), now: Self.start)
        #expect(machine.status.state == .noBackend)
        _ = machine.update(RegistrationInputs(backend: Self.backend), now: Self.start)
        #expect(machine.status.state == .notLoggedIn)
        _ = machine.update(RegistrationInputs(account: Self.alice, backend: Self.backend), now: Self.start)
        #expect(machine.status.state == .noToken)
    }

    @Test func deletionDeletesTheCachedIdAndStopsRegistering() {
        var machine = Self.registered()
        let actions = machine.requestDeletion(now: Self.start)
        #expect(Self.performed(actions) == [.delete(id: "id-1", backend: Self.backend)])
        _ = machine.stepFinished(.done, now: Self.start)
        #expect(machine.record.id == nil)
        #expect(machine.status.state == .unregistered)
        #expect(machine.lastDeletion?.outcome == .deleted(id: "id-1"))
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(86400))).isEmpty)
    }

    @Test func deletionOfAnIdTheBackendNoLongerKnowsCountsAsDone() {
        var machine = Self.registered()
        _ = machine.requestDeletion(now: Self.start)
        _ = machine.stepFinished(.failed(.gone(status: 500)), now: Self.start)
        #expect(machine.lastDeletion?.outcome == .deleted(id: "id-1"))
        #expect(machine.record.id == nil)
    }

    /// `logout`'s deletion: its failure is the answer, and nothing goes on deleting.
    @Test func failedDeletionKeepsTheIdAndSaysWhy() {
        var machine = Self.registered()
        _ = machine.requestDeletion(now: Self.start, untilDone: false)
        let failure = BackendFailure.transient(retryAfter: nil, reason: "connection refused")
        #expect(Self.performed(machine.stepFinished(.failed(failure), now: Self.start)).isEmpty)
        #expect(machine.lastDeletion?.outcome == .failed(failure))
        #expect(machine.record.id == "id-1")
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(86400))).isEmpty)
    }

    /// `unregister`'s: one that may pass is tried again at the end of its backoff, and the
    /// wish is kept in the record, which a restart reads.
    @Test func anUnregisterWhoseDeletionMayPassIsTriedAgain() {
        var machine = Self.registered()
        #expect(machine.requestDeletion(now: Self.start).contains(.persist))
        #expect(machine.record.deletionWanted == Self.start)
        let failure = BackendFailure.transient(retryAfter: 30, reason: "throttled")
        let actions = machine.stepFinished(.failed(failure), now: Self.start)
        #expect(machine.lastDeletion?.outcome == .retrying(id: "id-1", failure))
        #expect(actions.contains(.wake(at: Self.start.addingTimeInterval(30))))
        #expect(machine.status.state == .unregistering)
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(29))).isEmpty)
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(30))) == [.delete(id: "id-1", backend: Self.backend)])
        _ = machine.stepFinished(.done, now: Self.start.addingTimeInterval(31))
        #expect(machine.record.deletionWanted == nil)
        #expect(machine.record.id == nil)
        #expect(machine.status.state == .unregistered)
    }

    @Test func deletionWaitsForTheCallInFlight() {
        var machine = Self.registered()
        _ = machine.update(Self.complete(token: "BB"), now: Self.start)
        #expect(Self.performed(machine.requestDeletion(now: Self.start)).isEmpty)
        let next = machine.stepFinished(.done, now: Self.start)
        #expect(Self.performed(next) == [.delete(id: "id-1", backend: Self.backend)])
    }

    @Test func jitterIsReproducibleForASeed() {
        func firstRetry(seed: UInt64) -> Date? {
            var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: Self.policy, seed: seed)
            _ = machine.update(Self.complete(), now: Self.start)
            return Self.wake(machine.stepFinished(.failed(.transient(retryAfter: nil, reason: "x")), now: Self.start))
        }
        #expect(firstRetry(seed: 1) == firstRetry(seed: 1))
        #expect(firstRetry(seed: 1) != firstRetry(seed: 2))
    }

    @Test func changesWaitForAQuietMomentBeforeTheyAreSent() {
        let debounced = RegistrationPolicy(refreshInterval: 3600, debounce: 0.05, maximumDebounce: 1)
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: debounced)
        let first = machine.update(Self.complete(token: "A0"), now: Self.start)
        #expect(Self.performed(first).isEmpty)
        #expect(Self.wake(first) == Self.start.addingTimeInterval(0.05))
        let second = machine.update(Self.complete(token: "A1"), now: Self.start.addingTimeInterval(0.04))
        #expect(abs(Self.wake(second)!.timeIntervalSince(Self.start) - 0.09) < 1e-6, "each change restarts the quiet period")
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(0.05))).isEmpty)
        #expect(Self.performed(machine.wake(now: Self.wake(second)!)) == [.createId(handle: "A1", backend: Self.backend)])
    }

    @Test func aSteadyStreamOfChangesIsStillSent() throws {
        let debounced = RegistrationPolicy(refreshInterval: 3600, debounce: 0.05, maximumDebounce: 1)
        var machine = RegistrationMachine(inputs: RegistrationInputs(), record: RegistrationRecord(), policy: debounced)
        var firstSent: Double?
        for step in 0..<40 {
            let now = Double(step) * 0.04
            let actions = machine.update(Self.complete(token: String(format: "%02X", step)), now: Self.start.addingTimeInterval(now))
            if firstSent == nil, !Self.performed(actions).isEmpty { firstSent = now }
        }
        let sent = try #require(firstSent)
        #expect(sent > 0.9 && sent <= 1.0, "sent once maximumDebounce after the first change, not after the stream ends")
    }

    @Test func forceAndRetriesAreNotDebounced() {
        let debounced = RegistrationPolicy(refreshInterval: 3600, debounce: 0.05)
        var machine = RegistrationMachine(inputs: Self.complete(), record: RegistrationRecord(), policy: debounced)
        #expect(Self.performed(machine.start(now: Self.start)).count == 1, "start registers at once")
        _ = machine.stepFinished(.failed(.transient(retryAfter: 5, reason: "x")), now: Self.start)
        #expect(Self.performed(machine.wake(now: Self.start.addingTimeInterval(5))).count == 1)
        _ = machine.stepFinished(.done, now: Self.start.addingTimeInterval(5))
        #expect(Self.performed(machine.forceRegister(now: Self.start.addingTimeInterval(6))).count == 1)
    }
}
