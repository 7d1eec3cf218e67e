import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The actor that drives the machine: real files in a temp dir, a scripted backend and a
/// clock the test moves.
struct RegistrarTests {
    static let backend = "http://127.0.0.1:1"

    final class Fixture: Sendable {
        let directory: ScratchDirectory
        let backend = FakeBackend()
        let clock = ManualClock()
        let policy: RegistrationPolicy

        init(policy: RegistrationPolicy = RegistrationPolicy(refreshInterval: 3600, backoff: Backoff(initial: 10, multiplier: 2, maximum: 60), debounce: 0)) throws {
            self.policy = policy
            directory = try ScratchDirectory()
        }

        func registrar() -> Registrar {
            Components(settings: SettingsStore(.init(backend: RegistrarTests.backend, policy: policy)), stateDirectory: directory.path,
                       backend: backend, clock: clock, logger: .silent).registrar
        }

        deinit { directory.remove() }
    }

    @Test func loginAndTokenRegisterAndTheOutcomeIsAwaited() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        await registrar.start()
        let early = try await registrar.setToken("<ab cd>", platform: nil).generation
        let pending = await registrar.waitForOutcome(generation: early, timeout: 60)
        #expect(pending.settled)
        #expect(pending.registration.state == .notLoggedIn)
        #expect(fixture.backend.calls.isEmpty, "no credentials, no request")

        let login = try await registrar.login(user: "alice", password: "alice", backend: nil)
        let outcome = try await registrar.loginOutcome(login, timeout: 30)
        #expect(outcome.settled)
        #expect(outcome.registration.state == .registered)
        #expect(outcome.registration.id == "id-1")
        #expect(fixture.backend.calls == [.create(handle: "ABCD"), .upsert(id: "id-1", handle: "ABCD", tags: [])])
    }

    /// Callers waiting on outcomes share one timer, set for the earliest deadline: each
    /// wait ends at its own deadline, and once none waits the timer is gone, so an answered
    /// `--wait` leaves nothing to wake an idle daemon later.
    @Test func waitsEndAtTheirOwnDeadlinesAndLeaveNoTimerBehind() async throws {
        // A debounce of 10 s on the test's clock: nothing settles until the test moves it.
        let fixture = try Fixture(policy: RegistrationPolicy(refreshInterval: 3600, debounce: 10, maximumDebounce: 10))
        let registrar = fixture.registrar()
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        let generation = try await registrar.setToken("AB", platform: .apns).generation
        let started = ContinuousClock.now
        async let short = registrar.waitForOutcome(generation: generation, timeout: 0.2)
        async let long = registrar.waitForOutcome(generation: generation, timeout: 3)
        let shortOutcome = await short
        let shortEnded = ContinuousClock.now - started
        #expect(!shortOutcome.settled)
        #expect(shortEnded >= .milliseconds(200))
        // Asked only while the longer wait's deadline is still ahead: on a machine so loaded
        // that the shorter one is heard after it, the timer has rightly gone with both.
        let timerLeft = await registrar.waiterTimer.firesAt != nil
        if ContinuousClock.now - started < .seconds(3) {
            #expect(timerLeft, "the longer wait still has its deadline")
        }
        #expect(await !long.settled)
        #expect(ContinuousClock.now - started >= .seconds(3), "ended at its own deadline, not the shorter one's")
        #expect(await registrar.waiterTimer.firesAt == nil)

        // Answered well before its deadline: the timer goes with the last waiter.
        async let answered = registrar.waitForOutcome(generation: generation, timeout: 300)
        #expect(await eventually { await registrar.waiterTimer.firesAt != nil })
        fixture.clock.advance(by: 10)
        #expect(await answered.settled)
        #expect(await registrar.waiterTimer.firesAt == nil, "no waiter left: no timer to wake the daemon in 300 s")
    }

    @Test func aBurstOfTokensEndsWithTheLastOneAndFewRequests() async throws {
        let fixture = try Fixture(policy: RegistrationPolicy(refreshInterval: 3600, debounce: 0.05, maximumDebounce: 1))
        let registrar = fixture.registrar()
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        var generation = 0
        for index in 0..<100 {
            generation = try await registrar.setToken(String(format: "%04X", index), platform: .apns).generation
        }
        #expect(fixture.backend.registrationCalls.isEmpty, "nothing is sent while changes keep coming")
        fixture.clock.advance(by: 0.05)
        let outcome = await registrar.waitForOutcome(generation: generation, timeout: 10)
        #expect(outcome.settled)
        #expect(outcome.registration.state == .registered)
        #expect(outcome.registration.registered?.handle == "0063")
        #expect(fixture.backend.registrationCalls.count == 2, "got \(fixture.backend.registrationCalls.count) backend calls for 100 changes")
        #expect(fixture.backend.calls.last == .upsert(id: "id-1", handle: "0063", tags: []))
    }

    @Test func registrationSurvivesARestartWithoutARequestWhileFresh() async throws {
        let fixture = try Fixture()
        do {
            let registrar = fixture.registrar()
            _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
            _ = try await registrar.settledToken("AB")
            await registrar.shutdown()
        }
        let callsBefore = fixture.backend.calls.count
        let restarted = fixture.registrar()
        await restarted.start()
        let status = await restarted.registrationStatus
        #expect(status.state == .registered)
        #expect(status.id == "id-1")
        #expect(fixture.backend.calls.count == callsBefore)
    }

    @Test func aStaleRegistrationIsRefreshedOnStartAndPeriodically() async throws {
        let fixture = try Fixture()
        do {
            let registrar = fixture.registrar()
            _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
            _ = try await registrar.settledToken("AB")
            await registrar.shutdown()
        }
        fixture.clock.advance(by: 3601)
        let restarted = fixture.registrar()
        await restarted.start()
        #expect(await eventually { fixture.backend.calls.count == 3 })
        #expect(fixture.backend.calls.last == .upsert(id: "id-1", handle: "AB", tags: []))

        // And again once the interval has passed, driven by the timer alone.
        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        fixture.clock.advance(by: 3600)
        #expect(await eventually { fixture.backend.calls.count == 4 })
    }

    @Test func anOutageIsRetriedWithBackoffUntilTheBackendReturns() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        fixture.backend.failEverything(.transport("connection refused"))
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        let outcome = try await registrar.settledToken("AB")
        #expect(outcome.registration.state == .retrying)
        #expect(outcome.registration.message?.contains("connection refused") == true)

        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        fixture.clock.advance(by: 10)
        #expect(await eventually { fixture.backend.calls.count == 2 })
        fixture.backend.failEverything(nil)
        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        fixture.clock.advance(by: 20)
        #expect(await eventually { await registrar.registrationStatus.state == .registered })
    }

    @Test func aRefusedLoginIsNotSavedAndNothingIsSentWithIt() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        fixture.backend.failNextCreate(.status(403, retryAfter: nil, body: ""))
        _ = try await registrar.setToken("AB", platform: nil).generation
        let refused = await #expect(throws: CoreError.self) {
            try await registrar.loginOutcome(try await registrar.login(user: "mallory", password: "x", backend: nil), timeout: 30)
        }
        #expect(refused == .loginRefused(user: "mallory", status: 403, previous: nil))
        #expect(refused?.wireError.code == .unauthorized)
        #expect(CredentialStore(directory: fixture.directory.path).load().0 == nil, "not saved")
        #expect(registrar.snapshot().user == nil)
        _ = try await registrar.setTags(["news"])
        fixture.clock.advance(by: 86400)
        #expect(fixture.backend.calls.count == 1)

        let relogin = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        #expect(relogin.registration.state == .registered)
        #expect(fixture.backend.users.last == "alice")
    }

    @Test func aRefusedLoginLeavesThePreviousCredentialsInForce() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        _ = try await registrar.setToken("AB", platform: nil).generation
        _ = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        let store = CredentialStore(directory: fixture.directory.path)
        let saved = try #require(store.load().0)

        fixture.backend.failNextUpsert(.status(401, retryAfter: nil, body: ""))
        let refused = await #expect(throws: CoreError.self) {
            try await registrar.loginOutcome(try await registrar.login(user: "bob", password: "wrong", backend: nil), timeout: 30)
        }
        #expect(refused == .loginRefused(user: "bob", status: 401, previous: "alice"))
        #expect(refused?.description.contains("the credentials of 'alice' stay in force") == true)
        #expect(store.load().0 == saved)
        #expect(registrar.snapshot().user == "alice")
        #expect(await eventually { await registrar.registrationStatus.state == .registered })
    }

    @Test func withoutATokenALoginIsCheckedByARequestOfItsOwn() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        let outcome = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        #expect(outcome.settled)
        #expect(outcome.registration.state == .noToken)
        #expect(outcome.registration.message?.contains("notifyd registers once one is set") == true)
        #expect(CredentialStore(directory: fixture.directory.path).load().0?.user == "alice")
        #expect(fixture.backend.calls == [.check])
    }

    @Test func logoutDeletesThenForgetsTheCredentials() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        _ = try await registrar.settledToken("AB")
        let credentials = CredentialStore(directory: fixture.directory.path)
        #expect(credentials.load().0 != nil)

        let result = try await registrar.logout(force: false)
        #expect(result.deletedId == "id-1")
        #expect(fixture.backend.calls.last == .delete(id: "id-1"))
        #expect(credentials.load().0 == nil)
        #expect(await registrar.registrationStatus.state == .notLoggedIn)
    }

    @Test func logoutKeepsTheCredentialsWhenTheBackendIsDownUnlessForced() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        _ = try await registrar.settledToken("AB")
        fixture.backend.failEverything(.transport("connection refused"))
        let credentials = CredentialStore(directory: fixture.directory.path)

        let refused = await #expect(throws: CoreError.self) { try await registrar.logout(force: false) }
        #expect(refused == .stillLoggedIn(because: .backendUnavailable("the request to the backend failed: connection refused")))
        #expect(refused?.description.contains("notifyctl logout --force") == true)
        #expect(refused?.wireError.code == .backendUnavailable)
        #expect(credentials.load().0 != nil)

        let forced = try await registrar.logout(force: true)
        #expect(forced.warning?.contains("connection refused") == true)
        #expect(credentials.load().0 == nil)
    }

    @Test func waitingIsBoundedByTheTimeout() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        fixture.backend.failEverything(.transport("down"))
        _ = try await registrar.login(user: "alice", password: "alice", backend: nil)
        _ = try await registrar.settledToken("AB")
        // A generation that will not settle before the retry time, which the clock never reaches.
        let outcome = await registrar.waitForOutcome(generation: Int.max, timeout: 0.05)
        #expect(!outcome.settled)
    }

    /// A secret with a line break would go into its header as it is (the API key) and add
    /// headers of its own: refused at login, without showing it, and nothing is sent.
    @Test(arguments: ["pw\r\nX-Evil: 1", "pw\nmore", "p\u{0}w", "tab\there", "del\u{7F}"])
    func aSecretWithAControlCharacterIsRefusedUnshown(secret: String) async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        let error = await #expect(throws: CoreError.self) { try await registrar.login(user: "alice", password: secret, backend: nil) }
        let message = try #require(error?.description)
        #expect(message == "the password given holds a control character (a line break, tab or NUL); a password is printable text on one line")
        #expect(fixture.backend.calls.isEmpty)
        #expect(CredentialStore(directory: fixture.directory.path).load().0 == nil)
    }

    /// A credentials file notifyd could not read at start may still hold a password, which
    /// a logout means to forget: it is removed, and the reply says so.
    @Test func logoutRemovesACredentialsFileThatCouldNotBeRead() async throws {
        let fixture = try Fixture()
        let path = fixture.directory.path + "/credentials.json"
        try Data(#"{"version":1,"user":"alice","password":"left-in-a-broken-file""#.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        let registrar = fixture.registrar()
        let result = try await registrar.logout(force: false)
        #expect(result.user == nil)
        #expect(result.warning == "removed \(path), which notifyd could not read at start: the password it may have held is forgotten")
        #expect(!FileManager.default.fileExists(atPath: path))
        // Nothing left: the next logout has nothing to do.
        await #expect(throws: CoreError.notLoggedIn) { try await registrar.logout(force: false) }
    }

    @Test func invalidInputIsRefusedAndNothingIsStored() async throws {
        let fixture = try Fixture()
        let registrar = fixture.registrar()
        await #expect(throws: CoreError.self) { try await registrar.setToken("xyz", platform: .apns).generation }
        await #expect(throws: CoreError.self) { try await registrar.setTags(["has space"]) }
        await #expect(throws: CoreError.self) { try await registrar.login(user: "a:b", password: "p", backend: nil) }
        await #expect(throws: CoreError.self) { try await registrar.login(user: "alice", password: "alice", backend: "ftp://x") }
        let snapshot = registrar.snapshot()
        #expect(snapshot.device.token == nil)
        #expect(snapshot.device.tags.isEmpty)
        #expect(snapshot.user == nil)
    }

    // MARK: Each command waits for its own outcome

    /// alice registered with a token; the registration id is "id-1".
    func registeredAlice(_ fixture: Fixture) async throws -> Registrar {
        let registrar = fixture.registrar()
        _ = try await registrar.setToken("AB", platform: nil).generation
        let outcome = try await registrar.loginOutcome(try await registrar.login(user: "alice", password: "alice", backend: nil), timeout: 30)
        #expect(outcome.registration.state == .registered)
        return registrar
    }

    /// alice registered, then a pass under way (a tag change) whose upsert the backend holds,
    /// and fails with a transport error once released.
    func aliceInAPassThatWillFail(_ fixture: Fixture) async throws -> Registrar {
        let registrar = try await registeredAlice(fixture)
        fixture.backend.holdNext("upsert")
        fixture.backend.failNextUpsert(.transport("connection reset"))
        _ = try await registrar.setTags(["news"])
        #expect(await eventually { fixture.backend.isHolding })
        return registrar
    }

    @Test func logoutDuringAPassThatFailsForgetsTheCredentials() async throws {
        let fixture = try Fixture()
        let registrar = try await aliceInAPassThatWillFail(fixture)

        async let loggedOut = registrar.logout(force: false)
        #expect(await eventually { await registrar.registrationStatus.message == "deleting the registration" })
        fixture.backend.release()
        let result = try await loggedOut
        #expect(result.user == "alice")
        #expect(result.deletedId == "id-1")
        #expect(CredentialStore(directory: fixture.directory.path).load().0 == nil)
    }

    @Test func aLogoutRacingALoginKeepsTheNewLogin() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        fixture.backend.holdNext("delete")
        async let loggedOut = registrar.logout(force: false)
        #expect(await eventually { fixture.backend.isHolding })

        let login = try await registrar.login(user: "bob", password: "bob", backend: nil)
        fixture.backend.release()
        let result = try await loggedOut
        #expect(result.user == "alice")
        _ = try await registrar.loginOutcome(login, timeout: 30)
        #expect(CredentialStore(directory: fixture.directory.path).load().0?.user == "bob")
        #expect(registrar.snapshot().user == "bob")
        #expect(await eventually { await registrar.registrationStatus.state == .registered })
        #expect(fixture.backend.users.last == "bob")
    }

    // MARK: A change that cannot be saved does not take effect

    @Test func aTokenThatCannotBeSavedIsNeitherShownNorSent() async throws {
        let fixture = try Fixture()
        let registrar = try await registeredAlice(fixture)
        // A directory in place of state.json: the rename fails, even for root.
        let path = fixture.directory.file("state.json")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)

        let refused = await #expect(throws: CoreError.self) { try await registrar.setToken("CD", platform: nil).generation }
        #expect(refused?.description.contains("state.json") == true)
        await #expect(throws: CoreError.self) { try await registrar.setTags(["news"]) }
        #expect(registrar.snapshot().device.token == "AB")
        #expect(registrar.snapshot().device.tags.isEmpty)
        await #expect(throws: CoreError.self) { try await registrar.forceRegister() }
        #expect(!fixture.backend.calls.contains(.upsert(id: "id-1", handle: "CD", tags: [])))

        // Writable again: everything works.
        try FileManager.default.removeItem(atPath: path)
        _ = await registrar.waitForOutcome(generation: try await registrar.forceRegister(), timeout: 30)
        #expect(fixture.backend.calls.last == .upsert(id: "id-1", handle: "AB", tags: []))
        _ = try await registrar.settledToken("CD")
        #expect(fixture.backend.calls.last == .upsert(id: "id-1", handle: "CD", tags: []))
        #expect(StateStore(directory: fixture.directory.path).load().0.token == "CD")
    }
}

extension Registrar {
    /// Sets the token and waits for what the backend made of it. A minute is what only a
    /// hang reaches: a loaded machine must not end the wait and leave the test to go on
    /// from a registration still under way.
    func settledToken(_ token: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> RegistrationOutcome {
        let outcome = await waitForOutcome(generation: try await setToken(token, platform: nil).generation, timeout: 60)
        try #require(outcome.settled, "no outcome within a minute", sourceLocation: sourceLocation)
        return outcome
    }
}
