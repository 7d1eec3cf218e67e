import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// The daemon against the tutorial backend, over real HTTP on loopback.
@Suite(.stopsFixtures) struct RegistrationIntegrationTests {
    @Test func loginAndTokenGiveARegistrationTheBackendHolds() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        let outcome = try await fixture.call(SetTokenCommand(token: "<3f2a1b9c 5d7e8f00>"))
        #expect(outcome.settled)
        #expect(outcome.registration.state == .registered)
        let id = try #require(outcome.registration.id)

        let held = fixture.backend.registrations()
        #expect(held.count == 1)
        #expect(held.first?.id == id)
        #expect(held.first?.handle == "3F2A1B9C5D7E8F00")
        #expect(held.first?.platform == "apns")
        #expect(held.first?.tags == ["username:alice"])

        let status = try await fixture.status()
        #expect(status.registration.state == .registered)
        #expect(status.registration.id == id)
        #expect(status.account?.user == "alice")
        #expect(status.device.token == "3F2A1B9C5D7E8F00")
        #expect(status.registration.registeredAt != nil)
        #expect(status.registration.nextAttemptAt != nil)
    }

    @Test func tagsReRegisterUnderTheSameId() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        let loginChecks = fixture.count(.create)
        let first = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let second = try await fixture.call(SetTagsCommand(tags: ["sports", "news"]))
        #expect(second.registration.state == .registered)
        #expect(second.registration.id == first.registration.id)
        #expect(Set(fixture.backend.registrations().first?.tags ?? []) == ["sports", "news", "username:alice"])
        #expect(fixture.count(.create) - loginChecks == 1)
        #expect(fixture.count(.upsert) == 2)
    }

    @Test func nothingChangedMeansNoBackendRequest() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let before = fixture.backend.requests().count
        let again = try await fixture.call(SetTokenCommand(token: "abcd"))
        _ = try await fixture.call(SetTagsCommand(tags: []))
        #expect(again.registration.state == .registered)
        #expect(fixture.backend.requests().count == before)

        // A login is checked with one registration, and `register` forces one.
        #expect(try await fixture.login().registration.state == .registered)
        #expect(fixture.backend.requests().count == before + 1)
        let forced = try await fixture.call(RegisterCommand())
        #expect(forced.registration.state == .registered)
        #expect(fixture.backend.requests().count == before + 2)
    }

    @Test(arguments: [500, 410, 404])
    func anExpiredIdIsReplacedAndNeverUsedAgain(goneStatus: Int) async throws {
        let fixture = try await DaemonFixture(backendOptions: .init(goneStatus: goneStatus, quiet: true))
        _ = try await fixture.login()
        let registered = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let first = try #require(registered.registration.id)
        fixture.backend.expire(id: first)

        let outcome = try await fixture.call(SetTagsCommand(tags: ["x"]))
        #expect(outcome.registration.state == .registered)
        let second = try #require(outcome.registration.id)
        #expect(second != first)
        let putsToDeadId = fixture.backend.requests().filter { $0.method == "PUT" && $0.path.hasSuffix(first) }
        #expect(putsToDeadId.count == 2, "one PUT while alive, one that found it gone, none after")
        #expect(fixture.backend.registrations().map(\.id) == [second])
    }

    @Test func wrongPasswordIsUnauthorizedAndNotRetriedUntilANewLogin() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let refused = try await fixture.callExpectingError(LoginCommand(user: "alice", password: "wrong"))
        #expect(refused.code == .unauthorized)
        #expect(refused.message.contains("the login was not saved"))
        #expect(try await fixture.status().account == nil, "not saved")
        #expect(!FileManager.default.fileExists(atPath: fixture.stateDirectory + "/credentials.json"))
        let requests = fixture.backend.requests().count
        // The answer comes once the change was acted on; no retry is scheduled after it.
        let changed = try await fixture.call(SetTagsCommand(tags: ["later"]))
        #expect(changed.registration.state == .notLoggedIn)
        #expect(changed.registration.nextAttemptAt == nil)
        #expect(try await fixture.status().registration.nextAttemptAt == nil)
        #expect(fixture.backend.requests().count == requests, "no request with refused credentials")

        let accepted = try await fixture.login("alice")
        #expect(accepted.registration.state == .registered)
    }

    @Test func anOutageIsQueuedForRetryAndRecoversByItself() async throws {
        let fixture = try await DaemonFixture()
        try fixture.backend.addFault(.init(route: .any, status: 503))
        _ = try await fixture.login()
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)
        #expect(outcome.registration.message?.contains("503") == true)
        #expect(await eventually { fixture.count(.create) >= 3 }, "keeps retrying with backoff")

        fixture.backend.clearFaults()
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
        #expect(fixture.backend.registrations().count == 1)
    }

    @Test func aDroppedConnectionIsRetried() async throws {
        let fixture = try await DaemonFixture()
        try fixture.backend.addFault(.init(route: .create, drop: true))
        _ = try await fixture.login()
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)
        fixture.backend.clearFaults()
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
    }

    @Test func retryAfterIsHonoured() async throws {
        // retry_max caps a Retry-After: leave room for the 2 s asked.
        let fixture = try await DaemonFixture(settings: .fast {
            $0.policy = RegistrationPolicy(refreshInterval: 3600, backoff: Backoff(initial: 0.05, multiplier: 2, maximum: 5), debounce: 0.01, maximumDebounce: 0.2)
        })
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 429, retryAfter: 2, count: 1))
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)
        let attempt = try #require(outcome.registration.lastAttemptAt)
        let next = try #require(outcome.registration.nextAttemptAt)
        #expect(next.timeIntervalSince(attempt) >= 1.5, "the backend asked for 2 s, not the 0.05 s backoff")
    }

    @Test func throttling403WithRetryAfterIsNotACredentialFailure() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 403, retryAfter: 1, count: 1))
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
    }

    @Test func aBadRegistrationIsRejectedWithTheReason() async throws {
        // This backend only knows `gcm`, and notifyd was not told (android_name = gcm).
        let fixture = try await DaemonFixture(backendOptions: .init(androidPlatformName: .gcm, quiet: true))
        _ = try await fixture.login()
        let outcome = try await fixture.call(SetTokenCommand(token: "fcm:token-1", platform: .fcm))
        #expect(outcome.registration.state == .rejected)
        #expect(outcome.registration.message?.contains("HTTP 400") == true)
        let upserts = fixture.count(.upsert)
        #expect(outcome.registration.nextAttemptAt == nil, "not retried unchanged")
        #expect(try await fixture.status().registration.nextAttemptAt == nil, "not retried unchanged")
        // Another token is another registration, tried again.
        _ = try await fixture.call(SetTokenCommand(token: "fcm:token-2", platform: .fcm))
        #expect(fixture.count(.upsert) == upserts + 1)
    }

    @Test func aRejectedRegistrationIsTriedAgainOnRegister() async throws {
        let fixture = try await DaemonFixture()
        try fixture.backend.addFault(.init(route: .upsert, status: 400, count: 1))
        _ = try await fixture.login()
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .rejected)
        let forced = try await fixture.call(RegisterCommand())
        #expect(forced.registration.state == .registered)
        #expect(fixture.backend.registrations().first?.handle == "ABCD")
    }

    @Test func unregisterDeletesAndKeepsTheCredentials() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        let id = try await fixture.call(SetTokenCommand(token: "ABCD")).registration.id
        let result = try await fixture.call(UnregisterCommand())
        #expect(result.deletedId == id)
        #expect(fixture.backend.registrations().isEmpty)
        let status = try await fixture.status()
        #expect(status.registration.state == .unregistered)
        #expect(status.account?.user == "alice")
        // `register` brings it back.
        let again = try await fixture.call(RegisterCommand())
        #expect(again.registration.state == .registered)
    }

    /// The backend down at `unregister`: the deletion goes on by itself and goes through
    /// once the backend answers, without another command.
    @Test func anUnregisterTheBackendCouldNotTakeIsDoneOnceItCan() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        let id = try await fixture.call(SetTokenCommand(token: "ABCD")).registration.id
        try fixture.backend.addFault(.init(route: .delete, status: 503, count: 1))
        let result = try await fixture.call(UnregisterCommand())
        #expect(result.deletionPending == id)
        #expect(result.deletedId == nil)
        #expect(await eventually { fixture.backend.registrations().isEmpty })
        #expect(fixture.count(.delete) == 2)
        #expect(await eventually { (try? await fixture.status().registration.state) == .unregistered })
    }

    @Test func logoutDeletesThenForgetsTheCredentials() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let result = try await fixture.call(LogoutCommand())
        #expect(result.user == "alice")
        #expect(fixture.backend.registrations().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: fixture.stateDirectory + "/credentials.json"))
        let status = try await fixture.status()
        #expect(status.account == nil)
        #expect(status.registration.state == .notLoggedIn)
        #expect(status.device.token == "ABCD", "the token stays for the next login")
    }

    /// The quiet period is longer than one change takes to be saved (each is fsynced before
    /// it is answered, which on a busy disk takes a good part of a second): with a shorter
    /// one, pipelined lines are not a burst to the registrar, but changes far apart.
    @Test func aBurstOfSetTokenLinesEndsWithTheLastTokenAndAHandfulOfRequests() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.policy = RegistrationPolicy(refreshInterval: 3600, debounce: 1, maximumDebounce: 5) })
        _ = try await fixture.login()
        let path = fixture.socketPath
        let replies = try await onThread { () -> [JSONValue] in
            let connection = try RawConnection(path: path)
            var lines = ""
            // Answered once saved, not once registered: the registration is watched below,
            // so that no reply waits on all the others and the quiet period after them.
            for index in 0..<100 {
                lines += "{\"id\":\(index),\"cmd\":\"set-token\",\"token\":\"\(String(format: "%04x", index))\",\"wait\":false}\n"
            }
            try connection.send(lines)
            return (0..<100).compactMap { _ in connection.receive() }
        }
        #expect(replies.count == 100)
        #expect(replies.map { $0["id"] } == (0..<100).map { JSONValue.number(Double($0)) }, "replies come in request order")
        #expect(await eventually { fixture.backend.registrations().first?.handle == "0063" })
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
        let requests = fixture.count(.create) + fixture.count(.upsert)
        // A handful, however loaded the machine: a quiet period and one call in flight at a time.
        #expect(requests <= 10, "\(requests) backend requests for 100 set-token lines")
    }

    @Test func theRegistrationSurvivesARestart() async throws {
        let first = try await DaemonFixture()
        _ = try await first.login()
        let id = try await first.call(SetTokenCommand(token: "ABCD")).registration.id
        await first.daemon.stop()
        let requests = first.backend.requests().count

        let second = try await DaemonFixture(stateDirectory: first.stateDirectory, sharing: first.backend)
        let status = try await second.status()
        #expect(status.registration.state == .registered)
        #expect(status.registration.id == id)
        #expect(first.backend.requests().count == requests, "fresh: no request after the restart")
    }

    @Test func aCorruptStateFileIsMovedAsideAndTheDaemonStarts() async throws {
        let directory = "/tmp/nd-state-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: directory + "/state.json"))
        let fixture = try await DaemonFixture(stateDirectory: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let status = try await fixture.status()
        #expect(status.registration.state == .notLoggedIn)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(files.contains { $0.hasPrefix("state.json.corrupt-") })
        #expect(fixture.log.contains("moved it to"))
    }

    @Test func watchStreamsRegistrationEvents() async throws {
        let fixture = try await DaemonFixture()
        let path = fixture.socketPath
        let watcher = try await onThread { () -> RawConnection in
            let connection = try RawConnection(path: path)
            try connection.send("{\"id\":\"w\",\"cmd\":\"watch\"}\n")
            _ = connection.receive()
            return connection
        }
        _ = try await fixture.login()
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let states = try await onThread { () -> [String] in
            var seen: [String] = []
            while !seen.contains("registered"), let event = watcher.receive() {
                #expect(event["event"] == .string("registration"))
                if case .string(let state)? = event["registration"]?["state"] { seen.append(state) }
            }
            return seen
        }
        #expect(states.contains("registering"))
        #expect(states.last == "registered")
    }
}
