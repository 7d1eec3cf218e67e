import DevBackend
import Foundation
@testable import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// `send` and the outbox against the tutorial backend over loopback HTTP.
@Suite(.stopsFixtures) struct SendIntegrationTests {
    static func loggedIn(_ options: DevBackend.Options = .init(quiet: true), settings: RuntimeSettings = RuntimeSettings.fast) async throws -> DaemonFixture {
        let fixture = try await DaemonFixture(settings: settings, backendOptions: options)
        _ = try await fixture.login()
        return fixture
    }

    static let specialTexts = [
        "plain words", #"she said "hi""#, #"C:\path\to"#, "two\nlines", "tab\there", "carriage\rreturn",
        "1 < 2 > 0", "salt & pepper", "it's", "🍷 and 👩‍👩‍👧", "<b>&amp;</b>", #"all: "\ < & > ' 🍷"# + "\n\t",
        "{\"json\": [1,2]}", "\u{2028}separator",
    ]

    /// Android under each of its names, sent as the backend knows it: FCM v1's wrapper
    /// nests the text one level deeper, and the escaping is the same.
    @Test(arguments: TutorialVariant.allCases, [Platform.apns, .fcmv1, .fcm, .wns])
    func anyTextArrivesExactlyAsTypedOnTheTutorialBackend(variant: TutorialVariant, platform: Platform) async throws {
        let fixture = try await variant.loggedIn()
        for text in Self.specialTexts {
            let result = try await fixture.call(SendCommand(to: "bob", message: text, pns: [platform.rawValue]))
            #expect(result.deliveries.map(\.state) == [.delivered], "\(platform) \(text.debugDescription): \(result.deliveries)")
        }
        let pushes = fixture.backend.pushes()
        #expect(pushes.count == Self.specialTexts.count)
        for (push, text) in zip(pushes, Self.specialTexts) {
            #expect(push.pns == platform.backendName(android: variant.androidName))
            #expect(push.valid, "\(platform) payload for \(text.debugDescription): \(push.payload)")
            #expect(push.displayedText == "From alice: " + text)
        }
    }

    @Test func withoutEscapingTheTutorialBackendBreaks() async throws {
        // The control: what the tutorial backend does with raw text, and why notifyd escapes.
        let fixture = try await Self.loggedIn(settings: .fast {
            $0.retry = Backoff(initial: 0.05)
            $0.escaping = .none
        })
        let result = try await fixture.call(SendCommand(to: "bob", message: #"say "hi""#, queue: false))
        #expect(result.deliveries.first?.state == .failed)
        #expect(fixture.backend.pushes().first?.valid == false)
    }

    @Test(arguments: TutorialVariant.allCases, [Platform.apns, .fcm, .wns])
    func aBackendThatEscapesItselfGetsTheRawText(variant: TutorialVariant, platform: Platform) async throws {
        let fixture = try await variant.loggedIn(settings: .fast { $0.escaping = .none }, escapesText: true)
        let text = #"all: "\ < & > ' 🍷"# + "\n"
        let result = try await fixture.call(SendCommand(to: "bob", message: text, pns: [platform.rawValue]))
        #expect(result.deliveries.map(\.state) == [.delivered])
        #expect(fixture.backend.pushes().first?.displayedText == "From alice: " + text)
    }

    /// A reply lost after the backend took the send: notifyd sends again (at least once),
    /// with the same `Idempotency-Key`, and a backend that keeps them, as the dev backend
    /// does, pushes once.
    @Test func aLostReplyIsSentAgainWithItsKeyAndDeliveredOnce() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, count: 1, loseReply: true))
        let result = try await fixture.call(SendCommand(to: "bob", message: "exactly once"))
        #expect(result.deliveries.map(\.state) == [.delivered], "\(result.deliveries)")
        #expect(fixture.backend.requestCount(route: .send) == 2, "sent again after the lost reply")
        #expect(fixture.backend.pushes().count == 1, "pushed once")
    }

    /// A redirect (the backend service's sample sends http to https) is not followed, and
    /// what it redirected is not failed for it: the message waits, retried, and goes once
    /// the backend answers it (here, once the redirect ends; in use, once the URL is fixed).
    @Test func aMessageThatMeetsARedirectWaitsInsteadOfFailing() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 307, count: 1, location: "https://127.0.0.1:1/api/notifications"))
        let result = try await fixture.call(SendCommand(to: "bob", message: "still wanted", wait: true))
        #expect(result.deliveries.map(\.state) == [.delivered], "\(result.deliveries)")
        #expect(fixture.backend.requestCount(route: .send) == 2)
        #expect(fixture.backend.pushes().count == 1)
    }

    @Test(arguments: TutorialVariant.allCases)
    func onePostPerPlatformAndOneResultEach(variant: TutorialVariant) async throws {
        let fixture = try await variant.loggedIn()
        let result = try await fixture.call(SendCommand(to: "bob", message: "hello", pns: ["apns", "fcm", "wns"]))
        #expect(result.deliveries.map(\.pns) == ["apns", "fcm", "wns"], "each under the name given")
        #expect(result.deliveries.allSatisfy { $0.state == .delivered })
        // The platforms go out side by side: only each one's own order is kept.
        #expect(fixture.backend.pushes().map(\.pns).sorted() == ["apns", variant.androidName.rawValue, "wns"].sorted())
    }

    @Test func theAndroidNameIsTheOneTheBackendExpects() async throws {
        let fixture = try await Self.loggedIn(.init(androidPlatformName: .gcm, quiet: true),
                                              settings: .fast {
            $0.retry = Backoff(initial: 0.05)
            $0.androidName = .gcm
        })
        let result = try await fixture.call(SendCommand(to: "bob", message: "hello", pns: ["fcm"]))
        #expect(result.deliveries.first?.state == .delivered)
        #expect(fixture.backend.pushes().first?.pns == "gcm")
        // Registrations use the same name.
        let registered = try await fixture.call(SetTokenCommand(token: "fcm:abc", platform: .fcm))
        #expect(registered.registration.state == .registered)
        #expect(fixture.backend.registrations().first?.platform == "gcm")
    }

    @Test func aMessageThatCannotFitIsRefusedBeforeSending() async throws {
        let fixture = try await Self.loggedIn()
        let requestsAfterLogin = fixture.backend.requests().count
        let quotes = String(repeating: "\"", count: 2100)
        await #expect(throws: Error.self) { try await fixture.call(SendCommand(to: "bob", message: quotes)) }
        let error = try await fixture.callExpectingError(SendCommand(to: "bob", message: quotes))
        #expect(error.code == .messageTooLarge)
        #expect(error.message.contains("4096"))
        #expect(fixture.backend.requests().count == requestsAfterLogin)
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty)
    }

    @Test func badRequestsAreRefusedWithClearErrors() async throws {
        let fixture = try await Self.loggedIn()
        #expect(try await fixture.callExpectingError(SendCommand(to: "bob", message: "")).code == .invalidArgument)
        #expect(try await fixture.callExpectingError(SendCommand(to: "bob smith", message: "x")).code == .invalidArgument)
        #expect(try await fixture.callExpectingError(SendCommand(to: "bob", message: "x", pns: ["nokia"])).message.contains("unknown platform 'nokia'"))
        _ = try await fixture.call(LogoutCommand())
        #expect(try await fixture.callExpectingError(SendCommand(to: "bob", message: "x")).code == .notLoggedIn)
    }

    @Test func refusedCredentialsFailAndAreNotQueued() async throws {
        let fixture = try await Self.loggedIn()
        // The password changed at the backend after the login.
        try fixture.backend.addFault(.init(route: .send, status: 403, count: 2))
        let result = try await fixture.call(SendCommand(to: "bob", message: "hi"))
        let delivery = try #require(result.deliveries.first)
        #expect(delivery.state == .failed)
        #expect(delivery.error?.code == .unauthorized)
        #expect(delivery.error?.message.contains("notifyctl login alice") == true)
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty, "not queued")
        let direct = try await fixture.call(SendCommand(to: "bob", message: "hi", queue: false))
        #expect(direct.deliveries.first?.state == .failed)
        #expect(direct.deliveries.first?.error?.code == .unauthorized)
        #expect(fixture.backend.pushes().isEmpty)
    }

    @Test func messagesQueuedInAnOutageAreHeldWhenTheLoginIsRefusedLater() async throws {
        let fixture = try await Self.loggedIn()
        // An outage, and by the time it is over the password changed: the retry is refused.
        // The retry waits long enough for the sender to be told "queued" first.
        try fixture.backend.addFault(.init(route: .send, status: 503, retryAfter: 1, count: 1))
        try fixture.backend.addFault(.init(route: .send, status: 403))
        let queued = try await fixture.call(SendCommand(to: "bob", message: "accepted earlier"))
        #expect(queued.deliveries.first?.state == .queued)
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.first?.error?.code) == .unauthorized })
        let held = try await fixture.call(OutboxCommand())
        #expect(held.deliveries.map(\.state) == [.queued], "held, not failed: it was already accepted")
        fixture.backend.clearFaults()
        _ = try await fixture.login("alice")
        #expect(await eventually { fixture.backend.pushes().filter(\.valid).count == 1 })
    }

    @Test func anotherClientErrorFailsWithTheStatusAndIsNotQueued() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 400, count: 1))
        let result = try await fixture.call(SendCommand(to: "bob", message: "hi"))
        #expect(result.deliveries.first?.state == .failed)
        #expect(result.deliveries.first?.error?.message.contains("HTTP 400") == true)
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty, "not queued")
        #expect(try await fixture.status().outbox?.nextAttemptAt == nil, "no retry waits")
        // A later message to bob goes out behind anything still owed to bob.
        // `wait`: a backoff of bob's still running when it arrives delays it, not fails the test.
        let later = try await fixture.call(SendCommand(to: "bob", message: "later", wait: true))
        #expect(later.deliveries.map(\.state) == [.delivered], "\(later.deliveries)")
        #expect(fixture.count(.send) == 2, "not retried")
        #expect(fixture.backend.pushes().compactMap(\.displayedText) == ["From alice: later"])
    }

    @Test func aRefusalAfterQueueingIsKeptForTheOutboxListing() async throws {
        let fixture = try await Self.loggedIn()
        // The retry waits long enough for the sender to be told "queued" first.
        try fixture.backend.addFault(.init(route: .send, status: 503, retryAfter: 1, count: 1))
        try fixture.backend.addFault(.init(route: .send, status: 400, count: 1))
        #expect(try await fixture.call(SendCommand(to: "bob", message: "hi")).deliveries.first?.state == .queued)
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.first?.state) == .failed })
        let listed = try await fixture.call(OutboxCommand())
        #expect(listed.deliveries.first?.error?.message.contains("HTTP 400") == true)
        let purged = try await fixture.call(OutboxCommand(purge: true))
        #expect(purged.purged == 1)
        #expect(purged.deliveries.isEmpty)
    }

    @Test func duringAnOutageSendsAreQueuedThenDeliveredInOrder() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 503))
        for index in 1...5 {
            let result = try await fixture.call(SendCommand(to: "bob", message: "message \(index)"))
            #expect(result.deliveries.first?.state == .queued)
        }
        let waiting = try await fixture.call(OutboxCommand())
        #expect(waiting.deliveries.count == 5)
        #expect(waiting.deliveries.first?.error?.code == .backendUnavailable)
        #expect(waiting.deliveries.first?.nextAttemptAt != nil)

        fixture.backend.clearFaults()
        #expect(await eventually { fixture.backend.pushes().filter(\.valid).count == 5 })
        #expect(fixture.backend.pushes().filter(\.valid).map(\.displayedText) == (1...5).map { "From alice: message \($0)" })
        // The last file goes just after the backend's answer.
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.isEmpty) == true })
    }

    /// Pipelined sends to one recipient go into one lane of the HTTP thread, each handed
    /// over before the one ahead of it is answered. When one is refused for now, those
    /// handed over behind it come back unsent, and all go in order once it went.
    @Test func aSendRefusedForNowHoldsBackTheOnesHandedOverBehindIt() async throws {
        let fixture = try await Self.loggedIn()
        // Slow, so that the next ones are in its lane when the 503 comes.
        try fixture.backend.addFault(.init(route: .send, status: 503, delay: 0.3, count: 1))
        let connection = try RawConnection(path: fixture.socketPath)
        let count = 20
        try connection.send((1...count).map { #"{"cmd":"send","to":"bob","message":"m\#($0)"}"# + "\n" }.joined())
        let replies = try await onThread { (1...count).map { _ in connection.receive() } }
        #expect(replies.allSatisfy { $0?["ok"] == .bool(true) }, "replies: \(replies)\nthe daemon's log:\n\(fixture.log)")
        // A request is logged once answered, after the push it made: both are waited for.
        #expect(await eventually { fixture.backend.pushes().filter(\.valid).count == count && fixture.count(.send) >= count + 1 })
        #expect(fixture.backend.pushes().filter(\.valid).map(\.displayedText) == (1...count).map { "From alice: m\($0)" })
        #expect(fixture.count(.send) == count + 1, "one refused, then each once: none went behind the refused one")
    }

    /// The wait is long, not to be reached: on a loaded machine (the whole suite under
    /// strace, `contrib/tests/descriptors`) three retries and their writes once took more
    /// than 20 s, and the wait then rightly ended "queued".
    @Test func waitBlocksUntilDelivered() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 3))
        let result = try await fixture.call(SendCommand(to: "bob", message: "eventually", wait: true, timeout: 300), clientTimeout: 330)
        #expect(result.deliveries.first?.state == .delivered)
        #expect(result.deliveries.first?.attempts == 4)
    }

    @Test func eachWaitEndsAtItsOwnTimeoutWhileTheBackendIsSlow() async throws {
        let fixture = try await Self.loggedIn()
        var failure: (any Error)?
        do {
            // Slower than any of the timeouts below: a reply that waited for the backend
            // would say delivered. The later timeout is asked for first, so the one timer
            // for all waiters has to move earlier, then on to the next deadline.
            try fixture.backend.addFault(.init(route: .send, delay: 5))
            async let later = fixture.call(SendCommand(to: "bob", message: "later", wait: true, timeout: 0.6))
            #expect(await eventually { await fixture.daemon.outbox.waiters.all.count == 1 }, "the later timeout is waited on first")
            let sooner = try await fixture.call(SendCommand(to: "carol", message: "sooner", wait: true, timeout: 0.2))
            #expect(sooner.deliveries.map(\.state) == [.queued])
            #expect(try await later.deliveries.map(\.state) == [.queued])
        } catch {
            failure = error
        }
        fixture.backend.clearFaults()
        await fixture.stop()
        if let failure { throw failure }
    }

    @Test func noQueueFailsNowAndKeepsNothing() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 503))
        let result = try await fixture.call(SendCommand(to: "bob", message: "now or never", queue: false))
        #expect(result.deliveries.first?.state == .failed)
        #expect(result.deliveries.first?.error?.code == .backendUnavailable)
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty)
    }

    @Test func undeliveredMessagesExpireAndAreReported() async throws {
        let fixture = try await Self.loggedIn(settings: .fast {
            $0.retry = Backoff(initial: 0.05, maximum: 0.1)
            $0.outboxExpiry = 0.5
        })
        try fixture.backend.addFault(.init(route: .send, status: 503))
        _ = try await fixture.call(SendCommand(to: "bob", message: "too late"))
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.first?.state) == .expired })
        // Nothing waits for a retry: the timer that would make one is not armed.
        #expect(try await fixture.status().outbox?.nextAttemptAt == nil, "no attempts after expiry")
        let attempts = fixture.count(.send)
        // A later message to bob goes out at once: the expired one took its backoff with it,
        // so its sender hears "delivered", not "queued" behind a retry of nothing.
        fixture.backend.clearFaults()
        let later = try await fixture.call(SendCommand(to: "bob", message: "later"))
        #expect(later.deliveries.map(\.state) == [.delivered], "\(later.deliveries)")
        #expect(fixture.count(.send) == attempts + 1, "no attempts after expiry")
        #expect(fixture.log.contains("expired undelivered"))
    }

    @Test func hundredsOfSendsFromManyClientsAllArriveOverFewConnections() async throws {
        let fixture = try await Self.loggedIn()
        let clients = 20
        let perClient = 15
        let states = try await withThrowingTaskGroup(of: [DeliveryState].self) { group in
            for client in 0..<clients {
                group.addTask {
                    var states: [DeliveryState] = []
                    for index in 0..<perClient {
                        let result = try await fixture.call(SendCommand(to: "user\(client)", message: "m\(index)"))
                        states += result.deliveries.map(\.state)
                    }
                    return states
                }
            }
            return try await group.reduce(into: [DeliveryState]()) { $0 += $1 }
        }
        #expect(states.count == clients * perClient)
        #expect(await eventually { fixture.backend.pushes().filter(\.valid).count == clients * perClient })
        for client in 0..<clients {
            let texts = fixture.backend.pushes().filter { $0.toTag == "user\(client)" }.map(\.displayedText)
            #expect(texts == (0..<perClient).map { "From alice: m\($0)" }, "in order per recipient")
        }
        // At most max_connections at once, each kept alive for the next request.
        let limit = RuntimeSettings.fast.maxConnections
        #expect(fixture.backend.acceptedConnections <= limit, "\(fixture.backend.acceptedConnections) connections for \(clients * perClient) sends")
    }

    @Test func watchStreamsSendEvents() async throws {
        let fixture = try await Self.loggedIn()
        let path = fixture.socketPath
        let watcher = try await onThread { () -> RawConnection in
            let connection = try RawConnection(path: path)
            try connection.send("{\"cmd\":\"watch\"}\n")
            _ = connection.receive()
            return connection
        }
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        _ = try await fixture.call(SendCommand(to: "bob", message: "hi"))
        let states = try await onThread { () -> [String] in
            var seen: [String] = []
            while !seen.contains("delivered"), let event = watcher.receive() {
                if event["event"] == .string("send"), case .string(let state)? = event["delivery"]?["state"] { seen.append(state) }
            }
            return seen
        }
        #expect(states.first == "queued")
        #expect(states.last == "delivered")
    }

    @Test func aNormalRestartNeverSendsTwice() async throws {
        let first = try await Self.loggedIn()
        for index in 1...3 { _ = try await first.call(SendCommand(to: "bob", message: "once \(index)")) }
        await first.daemon.stop()
        let second = try await DaemonFixture(stateDirectory: first.stateDirectory, sharing: first.backend)
        // Messages to one recipient go out in order: one sent again would come before this one.
        let after = try await second.call(SendCommand(to: "bob", message: "after the restart"))
        #expect(after.deliveries.map(\.state) == [.delivered])
        #expect(first.backend.pushes().compactMap(\.displayedText) == (1...3).map { "From alice: once \($0)" } + ["From alice: after the restart"])
    }

    @Test func queuedMessagesSurviveARestart() async throws {
        let first = try await Self.loggedIn()
        try first.backend.addFault(.init(route: .send, status: 503))
        for index in 1...3 { _ = try await first.call(SendCommand(to: "bob", message: "kept \(index)")) }
        await first.daemon.stop()
        first.backend.clearFaults()
        _ = try await DaemonFixture(stateDirectory: first.stateDirectory, sharing: first.backend)
        #expect(await eventually { first.backend.pushes().filter(\.valid).count == 3 })
        #expect(first.backend.pushes().filter(\.valid).map(\.displayedText) == (1...3).map { "From alice: kept \($0)" })
    }
}
