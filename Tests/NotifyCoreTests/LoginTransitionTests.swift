import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// A login, a re-login and a logout change the account in force only when they succeed:
/// a refused or uncheckable login, and a logout that fails, leave everything as it was.
/// The backend answers as the tutorial's does: 403 unless the password is the user name.
struct LoginTransitionTests {
    typealias Fixture = RegistrarTests.Fixture

    /// alice logged in with her good password; with `token`, registered too.
    static func aliceLoggedIn(token: String? = "AB") async throws -> (Fixture, Registrar) {
        let fixture = try Fixture()
        fixture.backend.refuseWrongPasswords()
        let registrar = fixture.registrar()
        await registrar.start()
        _ = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        if let token {
            let outcome = await registrar.waitForOutcome(generation: try await registrar.setToken(token, platform: nil).generation, timeout: 30)
            #expect(outcome.registration.state == .registered)
        }
        return (fixture, registrar)
    }

    static func saved(_ fixture: Fixture) -> Credentials? {
        CredentialStore(directory: fixture.directory.path).load().0
    }

    @Test(arguments: [("alice", "AB"), ("bob", "AB"), ("alice", nil), ("bob", nil)] as [(String, String?)])
    func aRefusedLoginLeavesTheOneInForce(user: String, token: String?) async throws {
        let (fixture, registrar) = try await Self.aliceLoggedIn(token: token)
        let before = try #require(Self.saved(fixture))
        let statusBefore = await registrar.registrationStatus

        let refused = await #expect(throws: CoreError.self) {
            try await registrar.loginOutcome(try await registrar.login(user: user, password: "wrong", backend: nil), timeout: 30)
        }
        #expect(refused == .loginRefused(user: user, status: 403, previous: "alice"))
        #expect(Self.saved(fixture) == before, "credentials.json still holds alice's good login")
        #expect(registrar.snapshot().user == "alice")
        #expect(await eventually { await registrar.registrationStatus.state == statusBefore.state })
        // The account in force still works: the next registration is made as alice.
        if token != nil {
            let again = await registrar.waitForOutcome(generation: try await registrar.forceRegister(), timeout: 30)
            #expect(again.registration.state == .registered)
            #expect(fixture.backend.users.last == "alice")
        }
    }

    @Test func aGoodLoginOfTheSameUserIsCheckedThenSaved() async throws {
        let (fixture, registrar) = try await Self.aliceLoggedIn()
        let before = try #require(Self.saved(fixture))
        let callsBefore = fixture.backend.calls.count
        let outcome = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        #expect(outcome.registration.state == .registered)
        #expect(fixture.backend.calls.count > callsBefore, "nothing changed for the registration, yet the login was checked")
        #expect(Self.saved(fixture)?.revision != before.revision)
    }

    @Test(arguments: ["AB", nil] as [String?])
    func aLoginThatCannotBeCheckedDoesNotReplaceTheOneInForce(token: String?) async throws {
        let (fixture, registrar) = try await Self.aliceLoggedIn(token: token)
        let before = try #require(Self.saved(fixture))
        fixture.backend.failEverything(.transport("cannot connect to the backend: connection refused"))
        let failed = await #expect(throws: CoreError.self) {
            try await registrar.loginOutcome(try await registrar.login(user: "bob", password: "bob", backend: nil), timeout: 30)
        }
        guard case .loginUnchecked(let user, _, let previous, _) = failed else {
            Issue.record("expected loginUnchecked, got \(String(describing: failed))")
            return
        }
        #expect(user == "bob" && previous == "alice")
        #expect(failed?.description.contains("'alice' stays logged in") == true)
        #expect(Self.saved(fixture) == before)
        #expect(registrar.snapshot().user == "alice")
    }

    @Test func aFirstLoginThatCannotBeCheckedIsSavedAndSaysSo() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        fixture.backend.failEverything(.transport("connection refused"))
        let outcome = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        #expect(outcome.registration.state == .noToken)
        #expect(outcome.registration.message?.contains("checked at the first request") == true)
        #expect(outcome.registration.message?.contains("could not be checked (the request to the backend failed: connection refused)") == true,
                "the reason is said: \(outcome.registration.message ?? "")")
        #expect(Self.saved(fixture)?.user == "alice")
    }

    /// After `unregister` no registration pass will check a login: a request of its own
    /// does, and only an accepted login turns registration back on.
    @Test func withRegistrationOffALoginIsCheckedByItself() async throws {
        let (fixture, registrar) = try await Self.aliceLoggedIn()
        _ = try await registrar.unregister()
        let before = try #require(Self.saved(fixture))

        await #expect(throws: CoreError.loginRefused(user: "alice", status: 403, previous: "alice")) {
            try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "wrong", backend: nil), timeout: 30)
        }
        #expect(fixture.backend.calls.last == .check)
        #expect(Self.saved(fixture) == before)
        #expect(await registrar.registrationStatus.state == .unregistered, "a refused login does not turn registration on")

        let outcome = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        #expect(outcome.registration.state == .registered)
    }

    @Test func aReLoginKeepsTheBackendChosenAtTheFirst() async throws {
        let fixture = try Fixture()
        fixture.backend.refuseWrongPasswords()
        let registrar = Components(settings: SettingsStore(.init(policy: fixture.policy)), stateDirectory: fixture.directory.path,
                                   backend: fixture.backend, clock: fixture.clock, logger: .silent).registrar
        await #expect(throws: CoreError.noBackend) {
            _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        }
        let chosen = "https://backend.example"
        _ = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: chosen), timeout: 30)
        _ = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        #expect(Self.saved(fixture)?.backend == chosen)
        #expect(registrar.snapshot().backend == chosen)
    }

    /// A logout that fails changes nothing: registration stays on and is kept fresh.
    @Test func aLogoutThatFailsChangesNothing() async throws {
        let (fixture, registrar) = try await Self.aliceLoggedIn()
        let before = try #require(Self.saved(fixture))
        fixture.backend.failEverything(.transport("connection refused"))
        await #expect(throws: CoreError.self) { try await registrar.logout(force: false) }
        #expect(Self.saved(fixture) == before)
        let status = await registrar.registrationStatus
        #expect(status.state == .registered, "still registered, not \(status.state)")
        #expect(StateStore(directory: fixture.directory.path).load().0.enabled, "registration is still on on disk")

        // Once the backend is back, the periodic refresh goes on as before.
        fixture.backend.failEverything(nil)
        let calls = fixture.backend.calls.count
        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        fixture.clock.advance(by: 3601)
        #expect(await eventually { fixture.backend.calls.count > calls })
        #expect(fixture.backend.calls.last == .upsert(id: "id-1", handle: "AB", tags: []))
    }

    @Test func anAPNsTokenAfterAnFCMOneNeedsNoPlatform() async throws {
        let (fixture, registrar) = try await Self.aliceLoggedIn(token: nil)
        _ = await registrar.waitForOutcome(generation: try await registrar.setToken("fcm:abc", platform: .fcm).generation, timeout: 30)
        let outcome = await registrar.waitForOutcome(generation: try await registrar.setToken("<3f2a1b9c 5d7e8f00>", platform: nil).generation, timeout: 30)
        #expect(outcome.registration.state == .registered)
        #expect(registrar.snapshot().device.platform == .apns)
        #expect(fixture.backend.calls.last == .upsert(id: "id-1", handle: "3F2A1B9C5D7E8F00", tags: []))
    }
}
