import DevBackend
import NotifyCore
import NotifyProtocol
import Testing

/// The two tutorial backends a device meets, and notifyd set up for each: the tutorial as
/// written, which knows Android as `fcm` (and is told so: `android_name = fcm`), and the
/// tutorial updated for FCM v1, which knows it as `fcmv1` (notifyd's default).
enum TutorialVariant: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case asWritten
    case updatedForFCMv1

    var testDescription: String { rawValue }

    var androidName: Platform { self == .asWritten ? .fcm : .fcmv1 }

    /// The Android name this backend refuses, and the one `android_name` names by mistake.
    var refusedAndroidName: Platform { self == .asWritten ? .fcmv1 : .fcm }

    /// What a refusal of `refusedAndroidName` tells the user to set.
    var advisedSetting: String { "`android_name = \(androidName)`" }

    func backendOptions(escapesText: Bool = false) -> DevBackend.Options {
        DevBackend.Options(androidPlatformName: self == .asWritten ? .fcm : .fcmv1, escapesText: escapesText, quiet: true)
    }

    /// `settings` with the Android name this backend knows.
    func settings(_ settings: RuntimeSettings = .fast) -> RuntimeSettings {
        var settings = settings
        settings.androidName = androidName
        return settings
    }

    /// notifyd logged in at a backend of this variant, told the Android name it knows
    /// unless `androidName` names another.
    func loggedIn(settings: RuntimeSettings = .fast, androidName: Platform? = nil, escapesText: Bool = false) async throws -> DaemonFixture {
        var settings = self.settings(settings)
        if let androidName { settings.androidName = androidName }
        let fixture = try await DaemonFixture(settings: settings, backendOptions: backendOptions(escapesText: escapesText))
        _ = try await fixture.login()
        return fixture
    }
}
