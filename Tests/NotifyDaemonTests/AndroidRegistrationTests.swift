import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// Android devices at both tutorial backends: registered under the name the backend
/// knows, moved to FCM v1 once after an upgrade, and a refused name that says what to set.
@Suite(.stopsFixtures) struct AndroidRegistrationTests {
    static let token = "dQw4w9WgXcQ:APA91bH-x_yZ0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ3"

    /// `--platform` takes any of Android's names; the backend gets `android_name`.
    @Test(arguments: TutorialVariant.allCases, Platform.androidNames)
    func androidRegistersUnderTheNameItsBackendKnows(variant: TutorialVariant, given: Platform) async throws {
        let fixture = try await variant.loggedIn()
        let outcome = try await fixture.call(SetTokenCommand(token: Self.token, platform: given))
        #expect(outcome.registration.state == .registered, "\(outcome.registration)")
        let held = fixture.backend.registrations()
        #expect(held.map(\.platform) == [variant.androidName.rawValue])
        #expect(held.map(\.handle) == [Self.token], "the token as given")
        #expect(outcome.registration.registered?.platform == variant.androidName)
        #expect(try await fixture.status().device.platform == given, "the device keeps the name it was given")
    }

    /// A legacy name registers, as the user asked, but `status` says nothing reaches it.
    @Test func aRegistrationUnderALegacyNameWarnsInStatus() async throws {
        let fixture = try await TutorialVariant.asWritten.loggedIn()
        _ = try await fixture.call(SetTokenCommand(token: Self.token, platform: .fcm))
        let status = try await fixture.status()
        #expect(status.registration.state == .registered)
        let message = try #require(status.registration.message)
        #expect(message.contains("legacy name 'fcm'"), "\(message)")
        #expect(message.contains("Google no longer delivers"), "\(message)")
        #expect(message.contains("android_name = fcmv1"), "\(message)")
        #expect(fixture.log.contains("Google no longer delivers"))
    }

    @Test func aRegistrationUnderFCMv1HasNoWarning() async throws {
        let fixture = try await TutorialVariant.updatedForFCMv1.loggedIn()
        _ = try await fixture.call(SetTokenCommand(token: Self.token, platform: .fcm))
        let status = try await fixture.status()
        #expect(status.registration.state == .registered)
        #expect(status.registration.message == nil)
    }

    /// The backend updated for FCM v1 refuses `fcm`: the refusal names the platform and
    /// the setting, and is tried once.
    @Test func fcmRefusedByTheUpdatedBackendSaysToSetFCMv1() async throws {
        let fixture = try await TutorialVariant.updatedForFCMv1.loggedIn(androidName: .fcm)
        let outcome = try await fixture.call(SetTokenCommand(token: Self.token, platform: .fcm))
        #expect(outcome.registration.state == .rejected)
        let message = try #require(outcome.registration.message)
        #expect(message.contains("'fcm'"), "\(message)")
        #expect(message.contains("Unsupported platform"), "the backend's own words: \(message)")
        #expect(message.contains("`android_name = fcmv1`"), "\(message)")
        try await Self.expectRefusedOnce(fixture)
    }

    /// The tutorial as written refuses `fcmv1`: set `fcm`, knowing Google no longer
    /// delivers there. Tried once; the reload that sets it registers at once.
    @Test func fcmv1RefusedByTheTutorialAsWrittenSaysToSetFCMAndWhyThatIsNotEnough() async throws {
        let fixture = try await DaemonFixture(backendOptions: TutorialVariant.asWritten.backendOptions(), config: "")
        _ = try await fixture.login()
        let outcome = try await fixture.call(SetTokenCommand(token: Self.token, platform: .fcmv1))
        #expect(outcome.registration.state == .rejected)
        let message = try #require(outcome.registration.message)
        #expect(message.contains("'fcmv1'"), "\(message)")
        #expect(message.contains("`android_name = fcm`"), "\(message)")
        #expect(message.contains("Google no longer delivers"), "\(message)")
        #expect(try await fixture.status().registration.message == message)
        try await Self.expectRefusedOnce(fixture)

        _ = try await fixture.reload(config: "android_name = fcm\n")
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
        #expect(fixture.backend.registrations().map(\.platform) == ["fcm"])
    }

    /// Refused, with nothing scheduled: the machine itself says no attempt follows, and the
    /// one PUT made is the only one.
    static func expectRefusedOnce(_ fixture: DaemonFixture, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let status = try await fixture.status()
        #expect(status.registration.state == .rejected, sourceLocation: sourceLocation)
        #expect(status.registration.nextAttemptAt == nil, "no retry is scheduled", sourceLocation: sourceLocation)
        #expect(fixture.count(.upsert) == 1, "one PUT, no retry storm", sourceLocation: sourceLocation)
        #expect(fixture.backend.registrations().isEmpty, sourceLocation: sourceLocation)
    }
}
