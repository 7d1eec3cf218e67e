import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// Sends to Android at both tutorial backends: sized with the wrapper of the name the
/// backend knows, and a send under a name the backend refused that is not an outage.
@Suite(.stopsFixtures) struct AndroidSendTests {
    /// FCM v1's wrapper is longer than the legacy one: the payload that must fit is the
    /// one the backend builds, whichever of Android's names the sender gave.
    @Test(arguments: TutorialVariant.allCases)
    func androidsLimitCountsTheWrapperOfTheNameTheBackendKnows(variant: TutorialVariant) async throws {
        let fixture = try await variant.loggedIn()
        let wrapper = try NotificationText.payload("", sender: "alice", for: variant.androidName).utf8.count
        let fitting = String(repeating: "\"", count: (4096 - wrapper) / 2)
            + String(repeating: "x", count: (4096 - wrapper) % 2)
        let sent = try await fixture.call(SendCommand(to: "bob", message: fitting, pns: ["fcm"], wait: true))
        #expect(sent.deliveries.map(\.state) == [.delivered], "\(sent.deliveries)")
        let push = try #require(fixture.backend.pushes().last)
        #expect(push.payload.utf8.count == 4096)
        #expect(push.valid && push.displayedText == "From alice: " + fitting)

        let requests = fixture.backend.requests().count
        for name in Platform.androidNames {
            let refused = try await fixture.callExpectingError(SendCommand(to: "bob", message: fitting + "x", pns: [name.rawValue]))
            #expect(refused.code == .messageTooLarge, "\(name): \(refused)")
            #expect(refused.message.contains("4097"), "\(refused.message)")
        }
        #expect(fixture.backend.requests().count == requests, "refused before sending")
    }

    /// The registration told notifyd that the backend does not know the name: the send's
    /// 500 fails at once, with that reason, and is sent once.
    @Test(arguments: TutorialVariant.allCases)
    func aSendUnderANameTheBackendRefusedFailsAtOnceWithTheReason(variant: TutorialVariant) async throws {
        let fixture = try await variant.loggedIn(androidName: variant.refusedAndroidName)
        let refused = try await fixture.call(SetTokenCommand(token: AndroidRegistrationTests.token, platform: .fcm))
        #expect(refused.registration.state == .rejected)

        let result = try await fixture.call(SendCommand(to: "bob", message: "hi", pns: ["fcm"], wait: true))
        let delivery = try #require(result.deliveries.first)
        #expect(delivery.state == .failed, "\(delivery)")
        #expect(delivery.error?.code == .unsupportedPlatform)
        let message = delivery.error?.message ?? ""
        #expect(message.contains("'\(variant.refusedAndroidName)'") && message.contains(variant.advisedSetting), "\(message)")
        #expect(message.contains("not retried"), "\(message)")
        #expect(fixture.count(.send) == 1, "one request")
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty, "nothing kept to retry")
        // Other platforms go on as ever.
        #expect(try await fixture.call(SendCommand(to: "bob", message: "hi", pns: ["apns"], wait: true)).deliveries.map(\.state) == [.delivered])
    }

    /// One 500 alone is an outage: a send under a name nothing has shown unknown is kept
    /// and retried. Once the registration is refused under that name, the next retry's
    /// 500 ends it, and no request follows.
    @Test func a500WithoutEvidenceIsRetriedUntilARefusedRegistrationShowsTheNameUnknown() async throws {
        let fixture = try await TutorialVariant.asWritten.loggedIn(androidName: .fcmv1)
        let queued = try await fixture.call(SendCommand(to: "bob", message: "hi", pns: ["fcmv1"]))
        #expect(queued.deliveries.first?.state == .queued, "\(queued.deliveries)")
        #expect(queued.deliveries.first?.error?.code == .backendUnavailable)
        #expect(await eventually { fixture.count(.send) >= 2 }, "retried as an outage")

        _ = try await fixture.call(SetTokenCommand(token: AndroidRegistrationTests.token, platform: .fcm))
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.first?.state) == .failed })
        let failed = try #require(try await fixture.call(OutboxCommand()).deliveries.first)
        #expect(failed.error?.code == .unsupportedPlatform, "\(failed)")
        #expect(failed.nextAttemptAt == nil)
        let sends = fixture.count(.send)
        // A later send is answered after any retry would have been made: none was.
        #expect(try await fixture.call(SendCommand(to: "bob", message: "later", pns: ["apns"], wait: true)).deliveries.map(\.state) == [.delivered])
        #expect(fixture.count(.send) == sends + 1)
    }

    /// What the registration learned outlives notifyd: a restart does not forget it.
    @Test func theRefusedNameIsRememberedAcrossARestart() async throws {
        let first = try await TutorialVariant.updatedForFCMv1.loggedIn(androidName: .fcm)
        _ = try await first.call(SetTokenCommand(token: AndroidRegistrationTests.token, platform: .fcm))
        await first.daemon.stop()

        let second = try await DaemonFixture(settings: .fast { $0.androidName = .fcm }, stateDirectory: first.stateDirectory, sharing: first.backend)
        let result = try await second.call(SendCommand(to: "bob", message: "hi", pns: ["gcm"], wait: true))
        #expect(result.deliveries.first?.error?.code == .unsupportedPlatform, "\(result.deliveries)")
        #expect(first.count(.send) == 1)
    }
}
