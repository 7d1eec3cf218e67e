import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// notifyd at the backend service of Microsoft's newer tutorials (`backend_api =
/// installations`): an API key in place of the password, one installation under an id the
/// device keeps, and notification requests to tags, with every promise the AppBackend has.
@Suite(.stopsFixtures) struct InstallationsBackendTests {
    static let key = "dev-api-key-" + UUID().uuidString.prefix(8)
    static let token = String(repeating: "AB", count: 32)

    static func fixture(settings: RuntimeSettings = .fast, loggedIn: Bool = true, backendAndroid: DevBackend.InstallationsAndroidName? = nil) async throws -> DaemonFixture {
        var settings = settings
        settings.backendAPI = .installations
        var options = DevBackend.Options(quiet: true, api: .installations, apiKey: key)
        if let backendAndroid { options.installationsAndroidName = backendAndroid }
        let fixture = try await DaemonFixture(settings: settings, backendOptions: options)
        fixture.remember(password: key)
        if loggedIn { _ = try await fixture.call(LoginCommand(user: "alice", password: key)) }
        return fixture
    }

    @Test func theLoginIsCheckedWithTheKeyAndAWrongOneIsRefusedOnce() async throws {
        let fixture = try await Self.fixture(loggedIn: false)
        let wrong = "wrong-key-" + UUID().uuidString.prefix(8)
        fixture.remember(password: wrong)
        let refused = try await fixture.callExpectingError(LoginCommand(user: "alice", password: wrong))
        #expect(refused.code == .unauthorized, "\(refused)")
        #expect(refused.message.hasPrefix("the backend refused the API key of 'alice' (HTTP 401)"), "\(refused.message)")
        #expect(fixture.count(.installationDelete) == 1, "one check request, no retry")
        #expect(try await fixture.status().account == nil)

        _ = try await fixture.call(LoginCommand(user: "alice", password: Self.key))
        let status = try await fixture.status()
        #expect(status.account?.user == "alice")
        #expect(status.backendAPI == .installations)
        #expect(fixture.backend.installations().isEmpty, "the check changed nothing")
        // Every request carried the key in its header, none in its URL.
        #expect(fixture.backend.requests().allSatisfy { !$0.apiKeyInQuery && !$0.path.contains(Self.key) })
    }

    /// The sample as its docs had it before FCM v1 knows Android as fcm, and answers 422
    /// to fcmv1, as to a hub that failed: `android_name = fcm` reaches it, and without it
    /// the retries say which setting to try.
    @Test func anOlderBackendServiceIsReachedUnderTheAndroidNameSet() async throws {
        let retrying = try await Self.fixture(backendAndroid: .fcm)
        let refused = try await retrying.call(SetTokenCommand(token: "fcm:token-1", platform: .fcm))
        #expect(refused.registration.state == .retrying, "\(refused.registration)")
        #expect(refused.registration.message?.contains("set android_name = fcm") == true, "\(refused.registration)")
        await retrying.stop()

        let fixture = try await Self.fixture(settings: .fast { $0.androidName = .fcm }, backendAndroid: .fcm)
        let set = try await fixture.call(SetTokenCommand(token: "fcm:token-1", platform: .fcm))
        #expect(set.registration.state == .registered, "\(set.registration)")
        #expect(fixture.backend.installations().first?.platform == "fcm")
        await fixture.stop()
    }

    @Test func registrationIsOnePutUnderAnIdTheDeviceKeeps() async throws {
        let fixture = try await Self.fixture()
        let set = try await fixture.call(SetTokenCommand(token: Self.token, platform: .apns))
        #expect(set.registration.state == .registered, "\(set.registration)")
        let id = try #require(set.registration.installationId)
        #expect(fixture.backend.installations() == [DevBackend.Installation(id: id, platform: "apns", pushChannel: Self.token, tags: ["username:alice"])])

        _ = try await fixture.call(SetTagsCommand(tags: ["news"]))
        let android = try await fixture.call(SetTokenCommand(token: "fcm-token:" + Self.token, platform: .fcm))
        #expect(android.registration.installationId == id)
        #expect(fixture.backend.installations() == [DevBackend.Installation(id: id, platform: "fcmv1", pushChannel: "fcm-token:" + Self.token,
                                                                             tags: ["username:alice", "news"])])
        #expect(fixture.count(.installationUpsert) == 3, "one PUT per change")

        // After a restart, and after `unregister` and `register`: the same id.
        await fixture.daemon.stop()
        let again = try await DaemonFixture(settings: .fast { $0.backendAPI = .installations }, stateDirectory: fixture.stateDirectory,
                                            sharing: fixture.backend)
        _ = try await again.call(UnregisterCommand())
        #expect(fixture.backend.installations().isEmpty, "unregister deletes the installation")
        #expect(try await again.status().registration.installationId == id, "the id is kept for the next registration")
        let registered = try await again.call(RegisterCommand())
        #expect(registered.registration.installationId == id)
        #expect(fixture.backend.installations().map(\.id) == [id])
        _ = try await again.call(LogoutCommand())
        #expect(fixture.backend.installations().isEmpty, "logout deletes it")
    }

    @Test func aPlatformTheServiceDoesNotKnowIsRefusedWithoutARequest() async throws {
        let fixture = try await Self.fixture()
        let set = try await fixture.call(SetTokenCommand(token: "https://db5.notify.windows.com/?token=abc", platform: .wns))
        #expect(set.registration.state == .rejected)
        #expect(set.registration.message?.contains("apns and Android (fcmv1)") == true, "\(set.registration)")
        #expect(fixture.count(.installationUpsert) == 0)
    }

    /// Quotes, backslashes, newlines and the template's own placeholders arrive as typed,
    /// on both platforms, in plain and silent notifications alike.
    @Test(arguments: [false, true])
    func anyTextArrivesIntactThroughTheTemplates(silent: Bool) async throws {
        let fixture = try await Self.fixture()
        let text = "say \"hi\" \\ now\n<b>&</b> $(alertAction) 🎉"
        let sent = try await fixture.call(SendCommand(to: "bob", message: text, wait: true, action: "open \"chat\"", silent: silent))
        #expect(sent.deliveries.map(\.state) == [.delivered], "\(sent.deliveries)")
        #expect(sent.deliveries.first?.pns == "all")
        let request = try #require(fixture.backend.notificationRequests().last)
        #expect(request.accepted && request.tags == ["username:bob"] && request.silent == silent, "\(request)")
        #expect(request.displayedText == text)
        #expect(request.displayedAction == "open \"chat\"")
        #expect(Set(request.payloads.keys) == ["fcmv1", "apns"])
    }

    @Test func tagsAndTheDefaultActionGoOutAndWhatTheServiceCannotDoIsRefusedBeforeSending() async throws {
        let fixture = try await Self.fixture()
        let sent = try await fixture.call(SendCommand(to: nil, message: "match day", wait: true, tags: ["news", "sports"]))
        #expect(sent.deliveries.map(\.to) == ["news || sports"])
        let request = try #require(fixture.backend.notificationRequests().last)
        #expect(request.tags == ["news", "sports"] && request.action == SendCommand.defaultAction)

        // `--no-queue`: one attempt, kept nowhere, answered with its outcome.
        let direct = try await fixture.call(SendCommand(to: "bob", message: "now", queue: false))
        #expect(direct.deliveries.map(\.state) == [.delivered] && direct.deliveries.first?.pns == "all", "\(direct.deliveries)")
        #expect(fixture.backend.notificationRequests().last?.text == "now")

        let before = fixture.count(.notificationRequest)
        #expect(try await fixture.callExpectingError(SendCommand(to: "bob", message: "hi", pns: ["apns"])).message.contains("leave out --pns"))
        #expect(try await fixture.callExpectingError(SendCommand(to: "bob", message: "hi", action: "")).code == .invalidArgument)
        #expect(try await fixture.callExpectingError(SendCommand(to: nil, message: "hi")).message.contains("no recipient"))
        #expect(try await fixture.callExpectingError(SendCommand(to: "bob", message: "")).message.contains("--silent"))
        let tooLong = try await fixture.callExpectingError(SendCommand(to: "bob", message: String(repeating: "\"", count: 2100)))
        #expect(tooLong.code == .messageTooLarge, "\(tooLong)")
        #expect(fixture.count(.notificationRequest) == before, "nothing sent")
    }

    /// A 422 is the hub's failure: retried with the backoff and said so, then delivered once.
    @Test func aHubFailureIsRetriedAndTheMessageDeliveredOnce() async throws {
        let fixture = try await Self.fixture()
        try fixture.backend.addFault(.init(route: .notificationRequest, status: 422, count: 2))
        let queued = try await fixture.call(SendCommand(to: "bob", message: "later"))
        #expect(queued.deliveries.first?.state == .queued)
        #expect(queued.deliveries.first?.error?.message.contains("could not hand it to the hub") == true, "\(queued.deliveries)")
        #expect(await eventually { fixture.backend.notificationRequests().contains { $0.accepted && $0.text == "later" } })
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.isEmpty) == true })
        #expect(fixture.backend.notificationRequests().count { $0.text == "later" } == 1)
    }

    /// A 401 to a queued message holds the outbox, as a refused password does, until the
    /// next login; a sender still waiting is told at once.
    @Test func aRefusedKeyHoldsMessagesUntilTheNextLogin() async throws {
        let fixture = try await Self.fixture()
        try fixture.backend.addFault(.init(route: .notificationRequest, status: 401, count: 1))
        let told = try await fixture.call(SendCommand(to: "bob", message: "told", wait: true))
        #expect(told.deliveries.first?.state == .failed && told.deliveries.first?.error?.code == .unauthorized, "\(told.deliveries)")

        try fixture.backend.addFault(.init(route: .notificationRequest, status: 503, count: 1))
        try fixture.backend.addFault(.init(route: .notificationRequest, status: 401, count: 1))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "held")).deliveries.first?.state == .queued)
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.first?.error?.code) == .unauthorized })
        let requests = fixture.count(.notificationRequest)
        _ = try await fixture.call(LoginCommand(user: "alice", password: Self.key))
        #expect(await eventually { fixture.backend.notificationRequests().contains { $0.accepted && $0.text == "held" } })
        #expect(fixture.count(.notificationRequest) == requests + 1)
    }

    /// Pointed at the other kind of backend, notifyd says which `backend_api` to set.
    @Test func theOtherKindOfBackendIsNamed() async throws {
        let atService = try await DaemonFixture(backendOptions: .init(quiet: true, api: .installations, apiKey: Self.key))
        let wrongAPI = try await atService.callExpectingError(LoginCommand(user: "alice", password: "alice:" + DaemonFixture.secret))
        #expect(wrongAPI.message.contains("set backend_api = installations"), "\(wrongAPI)")

        let atAppBackend = try await DaemonFixture(settings: .fast { $0.backendAPI = .installations })
        atAppBackend.remember(password: Self.key)
        let wrongBackend = try await atAppBackend.callExpectingError(LoginCommand(user: "alice", password: Self.key))
        #expect(wrongBackend.message.contains("set backend_api = registrations"), "\(wrongBackend)")
    }

    /// A wrong path at an AppBackend is not taken for the other kind of backend (its
    /// authentication answers any request without Basic auth with 500, the probe's too):
    /// the refusal says to check the URL.
    @Test func aWrongPathIsNotTakenForTheOtherKindOfBackend() async throws {
        let fixture = try await DaemonFixture()
        let wrongPath = fixture.backend.baseURL.absoluteString + "/sub"
        let refused = try await fixture.callExpectingError(LoginCommand(user: "alice", password: "alice:" + DaemonFixture.secret, backend: wrongPath))
        #expect(!refused.message.contains("backend_api"), "\(refused)")
        #expect(refused.message.contains("no such route at \(wrongPath)"), "\(refused)")
        #expect(refused.message.contains("check the backend URL, its path especially"), "\(refused)")
    }

    /// A reload to the other API is a switch of backend: the old registration is deleted
    /// at the old backend with its own password, the API key never goes there, and back.
    @Test func aSwitchBetweenTheTwoAPIsDeletesTheOldRegistrationBothWays() async throws {
        let service = DevBackendServer(options: .init(quiet: true, api: .installations, apiKey: Self.key))
        try service.start()
        defer { service.stop() }
        let fixture = try await DaemonFixture(config: "")
        fixture.remember(password: Self.key)
        _ = try await fixture.login()
        _ = try await fixture.call(SetTokenCommand(token: Self.token, platform: .apns))
        #expect(fixture.backend.registrations().count == 1)

        _ = try await fixture.reload(config: "backend = \(service.baseURL.absoluteString)\nbackend_api = installations\n")
        #expect(await eventually { fixture.backend.registrations().isEmpty }, "deleted at the AppBackend")
        let stranded = try await fixture.status()
        #expect(stranded.account == nil && stranded.backendAPI == .installations)
        _ = try await fixture.call(LoginCommand(user: "alice", password: Self.key))
        #expect(await eventually { service.installations().count == 1 })
        #expect(!fixture.backend.requests().contains { $0.route == .create && $0.status == 200 && $0.user == nil })

        _ = try await fixture.reload(config: "backend = \(fixture.backend.baseURL.absoluteString)\nbackend_api = registrations\n")
        #expect(await eventually { service.installations().isEmpty }, "deleted at the backend service")
        _ = try await fixture.login()
        #expect(await eventually { fixture.backend.registrations().count == 1 })
    }

    /// At one origin, a reload to the other API is a switch of backend all the same: the
    /// login made for the AppBackend is not in force there (its password is not an API
    /// key), so a send is refused with what to do rather than sent with it.
    @Test func aReloadToTheOtherAPIAtTheSameOriginLeavesNobodyLoggedIn() async throws {
        let fixture = try await DaemonFixture(config: "")
        _ = try await fixture.login()
        let backend = fixture.backend.baseURL.absoluteString
        _ = try await fixture.reload(config: "backend = \(backend)\nbackend_api = installations\n")
        let stranded = try await fixture.status()
        #expect(stranded.account == nil && stranded.backendAPI == .installations)
        let refused = try await fixture.callExpectingError(SendCommand(to: "bob", message: "hi", pns: ["apns"]))
        #expect(refused.message.contains("is not a"), "\(refused.message)")
        #expect(fixture.backend.pushes().isEmpty)
    }

    /// Messages queued while the backend is down survive a restart and go out once.
    @Test func queuedRequestsSurviveARestartAndGoOutOnce() async throws {
        let fixture = try await Self.fixture()
        try fixture.backend.addFault(.init(route: .notificationRequest, status: 503, count: 1000))
        let queued = try await fixture.call(SendCommand(to: nil, message: "kept", tags: ["news"], silent: true))
        #expect(queued.deliveries.first?.state == .queued)
        await fixture.daemon.stop()
        fixture.backend.clearFaults()
        let again = try await DaemonFixture(settings: .fast { $0.backendAPI = .installations }, stateDirectory: fixture.stateDirectory,
                                            sharing: fixture.backend)
        #expect(await eventually { fixture.backend.notificationRequests().contains { $0.accepted && $0.text == "kept" } })
        #expect(await eventually { (try? await again.call(OutboxCommand()).deliveries.isEmpty) == true })
        let request = try #require(fixture.backend.notificationRequests().last { $0.accepted })
        #expect(request.tags == ["news"] && request.silent)
        #expect(fixture.backend.notificationRequests().count { $0.accepted && $0.text == "kept" } == 1)
    }
}
