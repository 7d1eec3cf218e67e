import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// A device registered under `fcm` by a notifyd from before FCM v1 (its default was
/// `android_name = fcm`), and the notifyd that replaces it, whose default is `fcmv1`.
@Suite(.stopsFixtures) struct AndroidUpgradeTests {
    /// The state the notifyd before the upgrade leaves: registered under `fcm`.
    static func registeredBeforeTheUpgrade() async throws -> (fixture: DaemonFixture, id: String) {
        let before = try await TutorialVariant.asWritten.loggedIn()
        let outcome = try await before.call(SetTokenCommand(token: AndroidRegistrationTests.token, platform: .fcm))
        #expect(outcome.registration.state == .registered)
        #expect(before.backend.registrations().map(\.platform) == ["fcm"])
        await before.daemon.stop()
        return (before, try #require(outcome.registration.id))
    }

    /// The backend was updated for FCM v1 meanwhile, and the hub kept the registration:
    /// the same id and token move to fcmv1 at the first registration, and only then.
    @Test func aDeviceRegisteredUnderFCMMovesToFCMv1OnceWithTheSameToken() async throws {
        let (before, id) = try await Self.registeredBeforeTheUpgrade()
        // Redeployed at the same URL: the device's registration stays where it was made.
        var options = TutorialVariant.updatedForFCMv1.backendOptions()
        options.port = before.backend.port
        let updated = DevBackendServer(options: options, sameHubAs: before.backend)
        try await offThePool { before.backend.stop() }
        // Free once no child being spawned holds a copy of the old listener.
        try await HeldPort.hold(options.port).release()
        try updated.start()
        defer { updated.stop() }

        let after = try await DaemonFixture(stateDirectory: before.stateDirectory, sharing: updated)
        #expect(await eventually { (try? await after.status().registration.registered?.platform) == .fcmv1 })
        let status = try await after.status()
        #expect(status.registration.state == .registered)
        #expect(status.registration.id == id, "the same registration")
        #expect(status.registration.message == nil, "no warning under fcmv1")
        #expect(updated.registrations().map(\.platform) == ["fcmv1"])
        #expect(updated.registrations().map(\.handle) == [AndroidRegistrationTests.token], "no new token needed")
        #expect(updated.requestCount(route: .create) == 0)
        #expect(updated.requestCount(route: .upsert) == 1)
        let movedAt = try #require(status.registration.registeredAt)
        await after.daemon.stop()

        // Once: the next start finds it registered as it should be, and asks nothing.
        let again = try await DaemonFixture(stateDirectory: before.stateDirectory, sharing: updated)
        let restarted = try await again.status()
        #expect(restarted.registration.state == .registered)
        #expect(restarted.registration.registeredAt == movedAt, "not registered again")
        #expect(updated.requestCount(route: .upsert) == 1)
    }

    /// The backend was not updated: it refuses fcmv1, once, and says to set `fcm`; the
    /// registration under fcm stays at the backend meanwhile.
    @Test func atABackendThatPredatesFCMv1TheMoveIsRefusedOnceWithTheSettingToUse() async throws {
        let (before, id) = try await Self.registeredBeforeTheUpgrade()
        let upsertsBefore = before.count(.upsert)
        let after = try await DaemonFixture(stateDirectory: before.stateDirectory, sharing: before.backend)
        #expect(await eventually { (try? await after.status().registration.state) == .rejected })
        let status = try await after.status()
        #expect(status.registration.id == id)
        #expect(status.registration.nextAttemptAt == nil, "no retry is scheduled")
        let message = try #require(status.registration.message)
        #expect(message.contains("'fcmv1'") && message.contains("`android_name = fcm`"), "\(message)")
        #expect(before.count(.upsert) == upsertsBefore + 1, "one PUT, no retry storm")
        #expect(before.backend.registrations().map(\.platform) == ["fcm"])
    }
}
