#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The backend service's routes and bodies (Microsoft's `PushNotificationsAPI` sample):
/// what notifyd sends when `backend_api = installations`.
enum InstallationRoutes {
    static let installations = "api/notifications/installations"
    static let requests = "api/notifications/requests"

    static func installation(_ id: String) -> String {
        installations + "/" + URLText.escape(id)
    }

    /// A device's installation id: chosen here, once per device and backend, and kept.
    static func newInstallationId() -> String {
        UUID().uuidString.lowercased()
    }

    /// An id no device has: the login check deletes it, which needs the key and changes nothing.
    static func loginCheckId() -> String {
        "notifyd-login-check-" + UUID().uuidString.lowercased()
    }

    /// The sample knows Apple's and Google's push services only: Android under FCM v1, or
    /// under `fcm` in the version its docs had before (`android_name`, fcmv1 by default).
    static func platformName(_ platform: Platform, android: Platform = .fcmv1) -> String? {
        if platform.isAndroid { return android.rawValue }
        return platform == .apns ? Platform.apns.rawValue : nil
    }

    /// The backend service answers 422 both to a platform name it does not know and to a
    /// hub that failed: for an Android device, the first is worth naming.
    static func androidNameHint(_ android: Platform) -> String {
        android == .fcmv1
            ? "; if it goes on, the backend may be the sample's older version, which knows Android as fcm: set android_name = fcm"
            : "; if it goes on, the backend may know Android as fcmv1 (the sample as it is now): set android_name = fcmv1"
    }

    /// The tag a user's devices carry, and sends to that user go to: the backend service
    /// has no users, so the device adds it to its own installation.
    static func userTag(_ user: String) -> String {
        "username:" + user
    }

    /// The PUT body, with the user's tag first and the device's own after it.
    static func installationBody(id: String, platform: String, pushChannel: String, tags: [String], user: String) -> Data {
        let userTag = userTag(user)
        var json = JSONTextWriter(pretty: false, escapingSlashes: true, capacity: 256 + pushChannel.utf8.count)
        json.beginObject()
        json.key("installationId")
        json.string(id)
        json.key("platform")
        json.string(platform)
        json.key("pushChannel")
        json.string(pushChannel)
        json.key("tags")
        json.strings([userTag] + tags.filter { $0 != userTag })
        json.endObject()
        return Data(json.bytes)
    }
}
