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

    /// The sample knows Apple's and Google's push services only, Android under FCM v1.
    static func platformName(_ platform: Platform) -> String? {
        if platform.isAndroid { return Platform.fcmv1.rawValue }
        return platform == .apns ? Platform.apns.rawValue : nil
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
