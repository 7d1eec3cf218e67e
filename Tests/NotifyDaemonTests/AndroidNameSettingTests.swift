import Foundation
import NotifyCore
import NotifyDaemon
import NotifyProtocol
import Testing

/// `android_name`: FCM v1 unless a backend that predates it is named, and one wording for
/// every value that is not one of Android's names.
@Suite struct AndroidNameSettingTests {
    @Test func androidIsFCMv1WhenNothingIsSet() {
        let (settings, problems) = SettingsTests.resolve(file: nil)
        #expect(problems.isEmpty)
        #expect(settings.runtime.androidName == .fcmv1)
    }

    @Test(arguments: [("fcmv1", Platform.fcmv1), ("fcm", .fcm), ("gcm", .gcm), ("FCMv1", .fcmv1), ("GCM", .gcm)])
    func eachOfAndroidsNamesIsTaken(value: String, expected: Platform) {
        let (settings, problems) = SettingsTests.resolve(file: "android_name = \(value)\n")
        #expect(problems.isEmpty, "\(problems)")
        #expect(settings.runtime.androidName == expected)
    }

    /// `apns` used to say "must be fcm or gcm" and `blackberry` listed every platform.
    @Test(arguments: ["apns", "wns", "blackberry", "fcm1", "v1"])
    func anythingElseIsRefusedInOneWordingThatListsAndroidsNames(value: String) {
        let (settings, problems) = SettingsTests.resolve(file: "android_name = \(value)\n")
        #expect(problems.map(\.description) == ["\(SettingsTests.path):1: android_name: must be fcmv1, fcm or gcm, not '\(value)'"])
        #expect(settings.runtime.androidName == .fcmv1, "a bad value leaves the default")
    }

    @Test func theEnvironmentNamesItToo() {
        let (settings, problems) = SettingsTests.resolve(file: nil, environment: SettingsTests.home.merging(["NOTIFYD_ANDROID_NAME": "fcm"]) { $1 })
        #expect(problems.isEmpty, "\(problems)")
        #expect(settings.runtime.androidName == .fcm)
    }
}
