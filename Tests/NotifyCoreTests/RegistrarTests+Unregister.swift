import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// `unregister`: the deletion at the backend, and one the backend cannot take now, which
/// goes on by itself, across restarts, until it goes through, is refused for good, or
/// registering is turned on again.
extension RegistrarTests {
    @Test func unregisterTreatsAnUnknownIdAsAlreadyGone() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        _ = try await registrar.settledToken("AB")
        fixture.backend.failNextDelete(.status(500, retryAfter: nil, body: "unknown id"))
        let result = try await registrar.unregister()
        #expect(result.deletedId == "id-1")
        #expect(result.registration.state == .unregistered)
        // Stays unregistered: no refresh is scheduled to bring it back.
        #expect(result.registration.nextAttemptAt == nil)
        #expect(await registrar.registrationStatus.nextAttemptAt == nil)
        #expect(fixture.clock.sleeperCount == 0, "no timer armed")
        fixture.clock.advance(by: 7200)
        #expect(await registrar.registrationStatus.state == .unregistered)
        #expect(fixture.backend.registrationCalls.count == 3)
    }

    @Test func unregisterDuringAPassThatFailsWaitsForItsOwnDeletion() async throws {
        let fixture = try Fixture()
        let registrar = try await aliceInAPassThatWillFail(fixture)

        async let unregistered = registrar.unregister()
        #expect(await eventually { await registrar.registrationStatus.message == "deleting the registration" })
        fixture.backend.release()
        let result = try await unregistered
        #expect(result.deletedId == "id-1")
        #expect(fixture.backend.calls.last == .delete(id: "id-1"))
    }

    /// The backend down at `unregister`: the registration would stay there, pushing to this
    /// device. The deletion goes on with the backoff until the backend takes it.
    @Test func anUnregisterTheBackendCannotTakeNowIsRetriedUntilItIs() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        fixture.backend.failNextDelete(.status(503, retryAfter: nil, body: ""))
        let result = try await registrar.unregister()
        #expect(result.deletedId == nil)
        #expect(result.deletionPending == "id-1")
        #expect(result.registration.state == .unregistering)
        #expect(result.registration.message == "the backend is unavailable for now (HTTP 503); retrying automatically")
        let next = try #require(result.registration.nextAttemptAt)

        fixture.clock.advance(by: next.timeIntervalSince(fixture.clock.now()) + 1)
        #expect(await eventually { fixture.backend.calls.filter { $0 == .delete(id: "id-1") }.count == 2 })
        #expect(await eventually { await registrar.registrationStatus.state == .unregistered })
        let status = await registrar.registrationStatus
        #expect(status.id == nil)
        #expect(status.message == "not registered on request: run `notifyctl register` to register again")
        #expect(status.nextAttemptAt == nil)
    }

    /// Kept across restarts: a notifyd started again goes on deleting.
    @Test func aRestartGoesOnWithTheDeletion() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        fixture.backend.failNextDelete(.transport("connection reset"))
        #expect(try await registrar.unregister().deletionPending == "id-1")
        await registrar.shutdown()
        #expect(fixture.backend.calls.filter { $0 == .delete(id: "id-1") }.count == 1)

        // Started again, it tries at once: the wait it was in was the last process's.
        let restarted = fixture.registrar()
        await restarted.start()
        #expect(await eventually { await restarted.registrationStatus.state == .unregistered })
        #expect(fixture.backend.calls.filter { $0 == .delete(id: "id-1") }.count == 2)
        #expect(await restarted.registrationStatus.id == nil)
    }

    /// `register` before the deletion went through: the registration is wanted after all,
    /// and kept (the same id), not deleted behind the user's back.
    @Test func registeringAgainCallsOffTheDeletion() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        fixture.backend.failNextDelete(.status(503, retryAfter: nil, body: ""))
        #expect(try await registrar.unregister().deletionPending == "id-1")
        #expect(StateStore(directory: fixture.directory.path).load().0.registration.deletionWanted != nil)

        let generation = try await registrar.forceRegister()
        let outcome = await registrar.waitForOutcome(generation: generation, timeout: 60)
        #expect(outcome.registration.state == .registered)
        #expect(outcome.registration.id == "id-1")
        fixture.clock.advance(by: 600)
        #expect(await registrar.registrationStatus.state == .registered)
        #expect(fixture.backend.calls.filter { $0 == .delete(id: "id-1") }.count == 1)
        // Nothing of the wish is left to surface later (state.json).
        #expect(StateStore(directory: fixture.directory.path).load().0.registration.deletionWanted == nil)
    }

    /// A login with a wrong password while the deletion waits: the deletion tried with it is
    /// refused, the login is not taken, and the deletion goes on with the login in force.
    @Test func aMistypedLoginWhileTheDeletionWaitsDoesNotCallItOff() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        fixture.backend.refuseWrongPasswords()
        fixture.backend.failNextDelete(.status(503, retryAfter: nil, body: ""))
        #expect(try await registrar.unregister().deletionPending == "id-1")
        await #expect(throws: CoreError.self) {
            try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "mistyped", backend: nil), timeout: 30)
        }
        fixture.clock.advance(by: 120)
        #expect(await eventually { await registrar.registrationStatus.state == .unregistered })
        #expect(await registrar.registrationStatus.id == nil)
        #expect(fixture.backend.registrationCalls.last == .delete(id: "id-1"))
    }

    /// A retry the backend refuses for good ends the retrying; `status` says the
    /// registration is still there and how to try again.
    @Test func aRetryRefusedForGoodSaysTheRegistrationIsStillThere() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        fixture.backend.failNextDelete(.status(503, retryAfter: nil, body: ""))
        fixture.backend.failNextDelete(.status(400, retryAfter: nil, body: "no"))
        #expect(try await registrar.unregister().deletionPending == "id-1")
        fixture.clock.advance(by: 120)
        #expect(await eventually { await registrar.registrationStatus.state == .unregistered })
        let status = await registrar.registrationStatus
        #expect(status.message == "not registered on request, but registration id-1 is still at the backend: its deletion failed; run `notifyctl unregister` to try again")
        fixture.clock.advance(by: 3600)
        #expect(fixture.backend.calls.filter { $0 == .delete(id: "id-1") }.count == 2)
    }

    /// `logout` keeps its promise: a deletion that fails changes nothing, and nothing goes
    /// on deleting behind it.
    @Test func aLogoutWhoseDeletionFailsLeavesNothingRetrying() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        fixture.backend.failNextDelete(.status(503, retryAfter: nil, body: ""))
        await #expect(throws: CoreError.self) { try await registrar.logout(force: false) }
        #expect(await eventually { await registrar.registrationStatus.state == .registered })
        fixture.clock.advance(by: 600)
        #expect(fixture.backend.calls.filter { $0 == .delete(id: "id-1") }.count == 1)
        #expect(await registrar.registrationStatus.id == "id-1")
    }
}
