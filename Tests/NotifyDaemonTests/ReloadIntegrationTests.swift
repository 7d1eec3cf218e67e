import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import NotifyTestSupport
import Testing

/// `reload` takes up every setting but `state_dir`, each seen in what notifyd does next,
/// not in a field. (log_level and send_platforms: `ControlTests`; log_file and the clients'
/// share of the open-file limit: `ReloadTests`.)
@Suite(.stopsFixtures) struct ReloadIntegrationTests {
    /// Waits an hour unless a reload shortens the wait.
    static let slowRetry = "retry_min = 1h\nretry_max = 1h\n"
    static let quickRetry = "retry_min = 50ms\nretry_max = 50ms\n"

    @Test func aShorterRetryShortensTheWaitOfAQueuedMessage() async throws {
        let fixture = try await DaemonFixture(config: Self.slowRetry)
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "waited")).deliveries.first?.state == .queued)

        let reload = try await fixture.reload(config: Self.quickRetry)
        #expect(reload.applied == ["retry_min", "retry_max"])
        #expect(await eventually { fixture.backend.pushes().contains { $0.displayedText == "From alice: waited" } })
    }

    @Test func aShorterRetryShortensTheWaitOfARetryingRegistration() async throws {
        let fixture = try await DaemonFixture(config: Self.slowRetry)
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 503, count: 1))
        #expect(try await fixture.call(SetTokenCommand(token: "ABCD")).registration.state == .retrying)

        _ = try await fixture.reload(config: Self.quickRetry)
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
    }

    @Test func aShorterRefreshIntervalReArmsTheRefresh() async throws {
        let fixture = try await DaemonFixture(config: "refresh_interval = 1h\n")
        _ = try await fixture.login()
        #expect(try await fixture.call(SetTokenCommand(token: "ABCD")).registration.state == .registered)
        let upserts = fixture.count(.upsert)

        _ = try await fixture.reload(config: "refresh_interval = 1s\n")
        #expect(await eventually { fixture.count(.upsert) > upserts }, "registered again after a second, not an hour")
    }

    @Test func aShorterRequestTimeoutAppliesToTheNextRequest() async throws {
        let fixture = try await DaemonFixture(config: "request_timeout = 1h\n")
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, delay: 30))

        _ = try await fixture.reload(config: "request_timeout = 200ms\n")
        let sent = try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false))
        #expect(sent.deliveries.first?.state == .failed)
        #expect(sent.deliveries.first?.error?.message.contains("timed out") == true, "\(sent)")
    }

    @Test func aNewBackendGetsTheRegistrationAndTheOldAccountsMessagesAreHeld() async throws {
        let fixture = try await DaemonFixture(config: "")
        let other = DevBackendServer(options: .init(quiet: true))
        try other.start()
        defer { other.stop() }
        _ = try await fixture.login()
        #expect(try await fixture.call(SetTokenCommand(token: "ABCD")).registration.state == .registered)
        try fixture.backend.addFault(.init(route: .send, status: 503))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "for the old one")).deliveries.first?.state == .queued)

        let reload = try await fixture.reload(config: "backend = \(other.baseURL.absoluteString)\n")
        #expect(reload.applied == ["backend"])
        // Another origin: alice's password is not taken there until she logs in there.
        #expect(try await fixture.status().loginElsewhere?.user == "alice")
        #expect(other.requests().isEmpty)
        #expect(try await fixture.call(OutboxCommand()).deliveries.first?.error?.message.contains("which notifyd no longer uses") == true,
                "alice is still logged in there: it is the backend that moved")
        _ = try await fixture.login()
        #expect(await eventually { other.registrations().first?.handle == "ABCD" }, "registered at the new backend")
        let status = try await fixture.status()
        #expect(status.backend == other.baseURL.absoluteString)
        #expect(status.outbox?.held == 1, "queued as alice at the old backend: held, as after a login")
        #expect(try await fixture.call(OutboxCommand()).deliveries.first?.error?.message.contains("which notifyd no longer uses") == true)
        #expect(await eventually { fixture.backend.registrations().isEmpty }, "deleted at the old backend")
        #expect(try await fixture.call(SendCommand(to: "bob", message: "for the new one")).deliveries.first?.state == .delivered)
        #expect(other.pushes().map(\.displayedText) == ["From alice: for the new one"])
    }

    /// Held, not dropped: a reload back to the backend they were queued for sends them.
    @Test func theOldBackendAgainSendsTheMessagesHeldForIt() async throws {
        let fixture = try await DaemonFixture(config: Self.slowRetry)
        let other = DevBackendServer(options: .init(quiet: true))
        try other.start()
        defer { other.stop() }
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "held")).deliveries.first?.state == .queued)
        _ = try await fixture.reload(config: Self.slowRetry + "backend = \(other.baseURL.absoluteString)\n")
        #expect(try await fixture.status().outbox?.held == 1)

        // Back, with a wait short enough to see the message go.
        let back = try await fixture.reload(config: Self.quickRetry)
        #expect(back.applied.contains("backend"))
        #expect(await eventually { fixture.backend.pushes().map(\.displayedText) == ["From alice: held"] })
        #expect(other.pushes().isEmpty)
        #expect(await eventually { (try? await fixture.call(OutboxCommand()))?.deliveries.isEmpty == true })
    }

    /// The libcurl pool and the outbox both: with one connection, a burst goes one request
    /// after another on it; with four, side by side on more.
    @Test func maxConnectionsResizesThePool() async throws {
        let fixture = try await DaemonFixture(config: "max_connections = 1\n")
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, delay: 0.3))
        func burst(_ round: Int) async throws {
            let sends = (1...6).map { SendCommand(to: "user\($0)", message: "round \(round)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for send in sends { group.addTask { _ = try await fixture.call(send) } }
                try await group.waitForAll()
            }
        }
        try await burst(1)
        #expect(fixture.backend.acceptedConnections == 1)

        _ = try await fixture.reload(config: "max_connections = 4\n")
        try await burst(2)
        #expect(fixture.backend.pushes().count == 12)
        #expect(fixture.backend.acceptedConnections >= 2, "more connections once the pool may hold them")
    }

    @Test func theNewPasswordCommandIsUsedForTheNextRequest() async throws {
        let fixture = try await DaemonFixture(config: "")
        _ = try await fixture.login()
        _ = try await fixture.reload(config: "password_command = echo wrong\n")
        let refused = try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false))
        #expect(refused.deliveries.first?.error?.code == .unauthorized, "the command's password, not the saved one: \(refused)")
        #expect(try await fixture.status().daemon.passwordSource == "command")

        _ = try await fixture.reload(config: "password_command = echo alice\n")
        let sent = try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false))
        #expect(sent.deliveries.first?.state == .delivered, "\(sent)")
    }

    /// Taken away by a reload and given back by another, a password command runs again
    /// for the next request: what it printed before may no longer be the password, which is
    /// why it was taken away.
    @Test func aPasswordCommandGivenBackIsRunAgain() async throws {
        let fixture = try await DaemonFixture(config: "")
        _ = try await fixture.login()
        let file = fixture.directory + "/password"
        try Data("alice\n".utf8).write(to: URL(fileURLWithPath: file))
        let command = "password_command = cat \(file)\n"
        _ = try await fixture.reload(config: command)
        let first = try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false))
        #expect(first.deliveries.first?.state == .delivered, "\(first)")

        try Data("wrong\n".utf8).write(to: URL(fileURLWithPath: file))
        _ = try await fixture.reload(config: "")
        let stored = try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false))
        #expect(stored.deliveries.first?.state == .delivered, "the saved password: \(stored)")

        _ = try await fixture.reload(config: command)
        let again = try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false))
        #expect(again.deliveries.first?.error?.code == .unauthorized, "what the command prints now, not what it printed before: \(again)")
    }

    @Test func theNewPlatformIsThatOfTheNextFirstToken() async throws {
        let fixture = try await DaemonFixture(backendOptions: TutorialVariant.updatedForFCMv1.backendOptions(), config: "")
        _ = try await fixture.login()
        _ = try await fixture.reload(config: "platform = fcm\n")
        #expect(try await fixture.call(SetTokenCommand(token: "fcm:token-1")).registration.state == .registered)
        #expect(fixture.backend.registrations().first?.platform == "fcmv1", "Android, under android_name")
    }

    @Test func theNewAndroidNameIsUsedForTheNextRequest() async throws {
        let fixture = try await DaemonFixture(backendOptions: .init(androidPlatformName: .gcm, quiet: true), config: "")
        _ = try await fixture.login()
        _ = try await fixture.reload(config: "android_name = gcm\n")
        #expect(try await fixture.call(SetTokenCommand(token: "fcm:token-1", platform: .fcm)).registration.state == .registered)
        #expect(fixture.backend.registrations().first?.platform == "gcm")
        #expect(try await fixture.call(SendCommand(to: "bob", message: "hi", pns: ["fcm"], queue: false)).deliveries.first?.state == .delivered)
    }

    /// The backend knows Android only as gcm and refused the device under fcm: the reload
    /// that names gcm registers it again at once, not at the next refresh.
    @Test func aNewAndroidNameRegistersTheDeviceAgain() async throws {
        let fixture = try await DaemonFixture(backendOptions: .init(androidPlatformName: .gcm, quiet: true), config: "")
        _ = try await fixture.login()
        #expect(try await fixture.call(SetTokenCommand(token: "fcm:token-1", platform: .fcm)).registration.state != .registered)
        #expect(fixture.backend.registrations().isEmpty)
        _ = try await fixture.reload(config: "android_name = gcm\n")
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
        #expect(fixture.backend.registrations().first?.platform == "gcm")
    }

    @Test func theNewEscapeIsUsedForTheNextMessage() async throws {
        let fixture = try await DaemonFixture(backendOptions: .init(escapesText: true, quiet: true), config: "")
        _ = try await fixture.login()
        _ = try await fixture.reload(config: "escape = none\n")
        let text = #"she said "hi" & left"#
        #expect(try await fixture.call(SendCommand(to: "bob", message: text)).deliveries.first?.state == .delivered)
        #expect(fixture.backend.pushes().first?.displayedText == "From alice: " + text, "escaped once, by the backend")
    }

    /// 0.0.0.0 is not among the loopback names plain http may go to, yet a connection to
    /// it reaches the dev backend: a backend on "another machine" that the test can run.
    @Test func allowInsecureHTTPAppliesToTheNextLogin() async throws {
        let fixture = try await DaemonFixture(config: "")
        let remote = "http://0.0.0.0:\(fixture.backend.port)"
        let refused = try await fixture.callExpectingError(LoginCommand(user: "alice", password: "alice", backend: remote))
        #expect(refused.code == .invalidArgument)
        #expect(refused.message.contains("refusing plain http"))

        _ = try await fixture.reload(config: "allow_insecure_http = true\n")
        _ = try await fixture.call(LoginCommand(user: "alice", password: "alice", backend: remote))
        #expect(try await fixture.status().backend == remote)
        #expect(try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false)).deliveries.first?.state == .delivered)
    }

    /// Messages accepted before keep the expiry they were given.
    @Test func theNewOutboxExpiryAppliesToNewMessages() async throws {
        let fixture = try await DaemonFixture(config: Self.slowRetry)
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503))
        let old = try #require(try await fixture.call(SendCommand(to: "bob", message: "before")).deliveries.first)

        _ = try await fixture.reload(config: Self.slowRetry + "outbox_expiry = 1s\n")
        let new = try #require(try await fixture.call(SendCommand(to: "carol", message: "after")).deliveries.first)
        #expect(await eventually { (try? await fixture.call(OutboxCommand()))?.deliveries.first { $0.id == new.id }?.state == .expired })
        #expect(try await fixture.call(OutboxCommand()).deliveries.first { $0.id == old.id }?.state == .queued)
    }

    @Test func aChangedStateDirWaitsForARestartAndStatusSaysSo() async throws {
        let fixture = try await DaemonFixture(config: "")
        let reload = try await fixture.reload(config: "state_dir = /tmp/elsewhere\nlog_level = info\n")
        #expect(reload.applied == ["log_level"])
        #expect(reload.restartNeeded == ["state_dir"])
        #expect(try await fixture.status().daemon.restartNeeded == ["state_dir"])

        #expect(try await fixture.reload(config: "").restartNeeded.isEmpty)
        #expect(try await fixture.status().daemon.restartNeeded == nil)
    }

    @Test func aReloadWithProblemsChangesNothingAndNamesEach() async throws {
        let fixture = try await DaemonFixture(config: Self.slowRetry)
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "waited")).deliveries.first?.state == .queued)

        let reload = try await fixture.reload(config: Self.quickRetry + "max_connections = 0\nescape = maybe\n")
        #expect(reload.problems.count == 2, "\(reload.problems)")
        #expect(reload.problems.allSatisfy { $0.hasPrefix(fixture.directory + "/config:") })
        #expect(reload.applied.isEmpty)
        let next = try #require(try await fixture.call(OutboxCommand()).deliveries.first?.nextAttemptAt)
        #expect(next > Date().addingTimeInterval(1800), "the wait is still an hour long")
    }
}
